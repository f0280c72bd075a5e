#pragma once
// How full the file system holding a folder is (statvfs), in percent of what a user may use.
#include <optional>
#include <string>

#include "util/error.h"

namespace mlsup::edges {

struct DiskUsage {
  std::string path;                      // the folder measured: the one asked, or its nearest existing parent
  double bytes_percent = 0;              // used / (used + available to users), as df counts it
  std::optional<double> inodes_percent;  // none where the file system counts no inodes
  double free_bytes = 0;                 // bytes available to users
  std::optional<double> free_inodes;     // inodes available to users; none where it counts none
  unsigned long long device = 0;         // st_dev of the folder measured
};

// The bytes and files under a folder (or of one file), symbolic links not followed; what could not be read
// is left out.
struct TreeSize {
  double bytes = 0;
  double files = 0;
};
TreeSize tree_size(const std::string& path);

// The usage of the file system that holds folder (or, before the folder exists, its nearest existing
// parent); an error when statvfs fails.
util::Result<DiskUsage> disk_usage(const std::string& folder);

}  // namespace mlsup::edges
