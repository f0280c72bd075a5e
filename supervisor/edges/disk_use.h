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
};

// The usage of the file system that holds folder (or, before the folder exists, its nearest existing
// parent); an error when statvfs fails.
util::Result<DiskUsage> disk_usage(const std::string& folder);

}  // namespace mlsup::edges
