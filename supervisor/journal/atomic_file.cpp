#include "journal/atomic_file.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string_view>

#include "util/files.h"

namespace mlsup::journal {
namespace {

std::string folder_of(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// Writes all of text to fd, across short writes and interrupted calls.
util::Result<void> write_all(int fd, std::string_view text, const std::string& path) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::unexpected(io_error(path, "cannot write", n == 0 ? ENOSPC : errno));
    text.remove_prefix(static_cast<std::size_t>(n));
  }
  return {};
}

// This process's umask, as /proc/self/status tells it (umask(2) cannot be read without being set, which
// would race with the other threads' files); 022 where it cannot be read.
mode_t process_umask() {
  const int fd = ::open("/proc/self/status", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 022;
  char buf[4096];
  const ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return 022;
  buf[n] = '\0';
  const char* at = std::strstr(buf, "Umask:");
  return at ? static_cast<mode_t>(std::strtoul(at + 6, nullptr, 8)) & 0777 : 022;
}

// Gives the temp file its mode and content, syncs it when asked and closes it (fd is closed in every case).
util::Result<void> fill_and_close(int fd, std::string_view text, mode_t mode, const std::string& path, bool sync) {
  util::Result<void> done;
  if (::fchmod(fd, mode & ~process_umask()) != 0) done = std::unexpected(io_error(path, "cannot set the mode", errno));
  if (done) done = write_all(fd, text, path);
  if (done && sync && ::fsync(fd) != 0) done = std::unexpected(io_error(path, "cannot sync", errno));
  if (::close(fd) != 0 && done) done = std::unexpected(io_error(path, "cannot close", errno));
  return done;
}

// Makes a rename inside folder durable; filesystems that cannot sync a folder are taken at their word.
util::Result<void> sync_folder_of(const std::string& folder) {
  const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return std::unexpected(io_error(folder, "cannot open the folder to sync it", errno));
  const bool synced = ::fsync(fd) == 0 || errno == EINVAL || errno == ENOTSUP;
  const int err = errno;
  ::close(fd);
  if (!synced) return std::unexpected(io_error(folder, "cannot sync the folder", err));
  return {};
}

}  // namespace

util::Error io_error(const std::string& path, std::string_view what, int err) {
  return util::Error{.file = path, .message = std::string(what) + ": " + std::strerror(err)};
}

util::Result<void> write_atomically(const std::string& path, std::string_view text, mode_t mode, Sync sync) {
  std::string temp = path + ".tmp.XXXXXX";
  const int fd = ::mkostemp(temp.data(), O_CLOEXEC);
  if (fd < 0) return std::unexpected(io_error(path, "cannot create a temporary file beside it", errno));
  auto done = fill_and_close(fd, text, mode, path, sync != Sync::None);
  if (done && ::rename(temp.c_str(), path.c_str()) != 0) done = std::unexpected(io_error(path, "cannot rename over it", errno));
  if (!done) {
    ::unlink(temp.c_str());
    return done;
  }
  return sync == Sync::Durable ? sync_folder_of(folder_of(path)) : util::Result<void>();
}

util::Result<std::optional<std::string>> read_file_if_exists(const std::string& path, std::size_t offset) {
  auto text = util::read_bytes(path, offset);
  if (text) return std::optional<std::string>(std::move(*text));
  const auto& why = text.error();
  if (std::string_view(why.what) == "cannot open" && why.error == ENOENT) return std::optional<std::string>();
  return std::unexpected(io_error(path, why.what, why.error));
}

util::Result<std::string> read_file(const std::string& path) {
  auto text = read_file_if_exists(path);
  if (!text) return std::unexpected(text.error());
  if (!*text) return std::unexpected(io_error(path, "cannot open", ENOENT));
  return std::move(**text);
}

}  // namespace mlsup::journal
