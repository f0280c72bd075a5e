#include "edges/disk_use.h"

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
  const double used = static_cast<double>(st.f_blocks - st.f_bfree);
  const double usable = used + static_cast<double>(st.f_bavail);
  out.bytes_percent = usable > 0 ? 100.0 * used / usable : 0;
  if (st.f_files > 0) {
    const double inodes_used = static_cast<double>(st.f_files - st.f_ffree);
    const double inodes_usable = inodes_used + static_cast<double>(st.f_favail);
    out.inodes_percent = inodes_usable > 0 ? 100.0 * inodes_used / inodes_usable : 0;
  }
  return out;
}

}  // namespace mlsup::edges
