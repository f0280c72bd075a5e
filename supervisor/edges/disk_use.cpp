#include "edges/disk_use.h"

#include <sys/stat.h>
#include <sys/statvfs.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace mlsup::edges {

util::Result<DiskUsage> disk_usage(const std::string& folder) {
  std::filesystem::path at = folder.empty() ? "." : folder;
  std::error_code ec;
  while (!std::filesystem::exists(at, ec) && at.has_parent_path() && at.parent_path() != at) at = at.parent_path();
  struct statvfs st{};
  if (::statvfs(at.c_str(), &st) != 0) return util::fail(at.string() + ": statvfs: " + std::strerror(errno));
  DiskUsage out{.path = at.string()};
  struct stat where{};
  if (::stat(at.c_str(), &where) == 0) out.device = static_cast<unsigned long long>(where.st_dev);
  out.free_bytes = static_cast<double>(st.f_bavail) * static_cast<double>(st.f_frsize);
  const double used = static_cast<double>(st.f_blocks - st.f_bfree);
  const double usable = used + static_cast<double>(st.f_bavail);
  out.bytes_percent = usable > 0 ? 100.0 * used / usable : 0;
  if (st.f_files > 0) {
    const double inodes_used = static_cast<double>(st.f_files - st.f_ffree);
    const double inodes_usable = inodes_used + static_cast<double>(st.f_favail);
    out.inodes_percent = inodes_usable > 0 ? 100.0 * inodes_used / inodes_usable : 0;
    out.free_inodes = static_cast<double>(st.f_favail);
  }
  return out;
}

TreeSize tree_size(const std::string& path) {
  namespace fs = std::filesystem;
  TreeSize out;
  std::error_code ec;
  const auto status = fs::symlink_status(path, ec);
  if (ec) return out;
  if (!fs::is_directory(status)) {
    const auto size = fs::file_size(path, ec);
    if (!ec) out.bytes = static_cast<double>(size), out.files = 1;
    return out;
  }
  out.files = 1;  // the folder itself
  for (fs::recursive_directory_iterator it(path, fs::directory_options::skip_permission_denied, ec), end; !ec && it != end;
       it.increment(ec)) {
    const auto entry = it->symlink_status(ec);
    if (ec) break;
    out.files += 1;  // folders take an inode too
    if (fs::is_regular_file(entry)) {
      const auto size = it->file_size(ec);
      if (!ec) out.bytes += static_cast<double>(size);
      ec.clear();
    }
  }
  return out;
}

}  // namespace mlsup::edges
