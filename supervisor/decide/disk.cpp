#include "decide/disk.h"

#include <cmath>
#include <utility>

namespace mlsup::decide {
namespace {

// Whether inodes are the fuller count, and the percent used of the fuller.
std::pair<bool, double> fuller(const DiskUse& use) {
  const bool inodes = use.inodes_percent && *use.inodes_percent > use.bytes_percent;
  return {inodes, inodes ? *use.inodes_percent : use.bytes_percent};
}

}  // namespace

Severity disk_severity(const DiskUse& use, const DiskLimits& limits) {
  const double used = fuller(use).second;
  return used >= limits.critical ? Severity::Critical : used >= limits.warning ? Severity::Warning : Severity::Ok;
}

std::string disk_text(const DiskUse& use) {
  const auto [inodes, used] = fuller(use);
  return "checkpoint file system " + std::to_string(static_cast<int>(std::floor(used))) + "% full" +
         (inodes ? " (inodes)" : "") + " at " + use.path;
}

const char* severity_name(Severity s) {
  switch (s) {
    case Severity::Ok: return "OK";
    case Severity::Warning: return "WARNING";
    case Severity::Critical: return "CRITICAL";
    case Severity::Unknown: return "UNKNOWN";
  }
  return "UNKNOWN";
}

}  // namespace mlsup::decide
