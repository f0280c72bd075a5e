#pragma once
// Whole-file writes that a reader sees complete or not at all, and whole-file reads.
#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>

#include "util/error.h"

namespace mlsup::journal {

// How much of a whole-file write survives a crash of the machine: all of it (the file and its folder
// synced); the content, though the previous file may come back (no folder sync); or nothing promised
// (no sync: a file rewritten often whose loss costs nothing that is not seen again, such as what the
// supervisor observed). A reader sees the old file or the new one, whole, in each case.
enum class Sync { Durable, FileOnly, None };

// Replaces path with text (temp file in the same folder, rename over it, synced as sync says); on
// failure the temp file is removed and path keeps its old content. The file gets mode less this
// process's umask.
util::Result<void> write_atomically(const std::string& path, std::string_view text, mode_t mode = 0644,
                                    Sync sync = Sync::Durable);

// The content of path from offset on (the whole of it by default), or nullopt when it does not exist.
util::Result<std::optional<std::string>> read_file_if_exists(const std::string& path, std::size_t offset = 0);

// The whole content of path; a missing file is an error like any other.
util::Result<std::string> read_file(const std::string& path);

// An Error about path reading "what: <strerror(err)>".
util::Error io_error(const std::string& path, std::string_view what, int err);

}  // namespace mlsup::journal
