#pragma once
// Whole-file writes that a reader sees complete or not at all, and whole-file reads.
#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>

#include "util/error.h"

namespace mlsup::journal {

// Replaces path with text (temp file in the same folder, fsync, rename, fsync of the folder unless
// sync_folder is false: for a file whose previous content may come back after a crash); on failure the
// temp file is removed and path keeps its old content. The file gets mode less this process's umask.
util::Result<void> write_atomically(const std::string& path, std::string_view text, mode_t mode = 0644,
                                    bool sync_folder = true);

// The whole content of path, or nullopt when it does not exist.
util::Result<std::optional<std::string>> read_file_if_exists(const std::string& path);

// The whole content of path; a missing file is an error like any other.
util::Result<std::string> read_file(const std::string& path);

// An Error about path reading "what: <strerror(err)>".
util::Error io_error(const std::string& path, std::string_view what, int err);

}  // namespace mlsup::journal
