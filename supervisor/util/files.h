#pragma once
// Reading small files whole, and the end of large ones.
#include <expected>
#include <fstream>
#include <optional>
#include <string>

namespace mlsup::util {

// Why a file could not be read: the step that failed ("cannot open", "cannot seek in", "cannot read")
// and its errno.
struct ReadFailure {
  const char* what = "";
  int error = 0;
};

// The file's bytes from offset on, in one allocation of the size fstat tells; or why not.
std::expected<std::string, ReadFailure> read_bytes(const std::string& path, std::size_t offset = 0);

// The whole file, or nullopt when it cannot be read.
std::optional<std::string> read_file(const std::string& path);

// The first max_bytes of a file (nullopt when it cannot be opened); a longer file's text ends in
// "\n... <size> bytes", so that two reads differ when its size does.
std::optional<std::string> read_head(const std::string& path, std::size_t max_bytes);

// The last max_bytes of a file ("" when it cannot be opened): a log's end without reading gigabytes.
std::string read_end(const std::string& path, std::streamoff max_bytes);

}  // namespace mlsup::util
