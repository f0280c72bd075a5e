#include "util/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <sstream>

namespace mlsup::util {

std::expected<std::string, ReadFailure> read_bytes(const std::string& path, std::size_t offset) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::unexpected(ReadFailure{"cannot open", errno});
  const auto fail = [fd](const char* what) {
    const int err = errno;
    ::close(fd);
    return std::unexpected(ReadFailure{what, err});
  };
  if (offset > 0 && ::lseek(fd, static_cast<off_t>(offset), SEEK_SET) < 0) return fail("cannot seek in");
  struct stat st {};
  // One read of the size fstat tells (and one more to see the end); files that tell none (/proc) grow the buffer.
  std::size_t chunk = ::fstat(fd, &st) == 0 && st.st_size > static_cast<off_t>(offset)
                          ? static_cast<std::size_t>(st.st_size) - offset + 1
                          : 4096;
  std::string text;
  std::size_t used = 0;
  for (;;) {
    text.resize(used + chunk);
    const ssize_t n = ::read(fd, text.data() + used, chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail("cannot read");
    if (n == 0) break;
    used += static_cast<std::size_t>(n);
    if (used == text.size()) chunk = std::max<std::size_t>(chunk, used);
  }
  ::close(fd);
  text.resize(used);
  return text;
}

std::optional<std::string> read_file(const std::string& path) {
  auto text = read_bytes(path);
  if (!text) return std::nullopt;
  return std::move(*text);
}

std::optional<std::string> read_head(const std::string& path, std::size_t max_bytes) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return std::nullopt;
  const auto size = static_cast<std::size_t>(std::max<std::streamoff>(0, in.tellg()));
  in.seekg(0);
  std::string text(std::min(size, max_bytes), '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(std::max<std::streamsize>(0, in.gcount())));
  if (size > max_bytes) text += "\n... " + std::to_string(size) + " bytes";
  return text;
}

std::string read_end(const std::string& path, std::streamoff max_bytes) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return "";
  const std::streamoff size = in.tellg();
  in.seekg(std::max<std::streamoff>(0, size - max_bytes));
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace mlsup::util
