#pragma once
// A file system's fullness and its severity (pure): the supervisor's disk alert and `mlsup check`'s
// condition apply the same rule, in the monitoring-plugin states.
#include <optional>
#include <string>

namespace mlsup::decide {

// The monitoring-plugin states, in increasing severity; the value is the exit code.
enum class Severity { Ok = 0, Warning = 1, Critical = 2, Unknown = 3 };

// "OK", "WARNING", "CRITICAL", "UNKNOWN".
const char* severity_name(Severity s);

// How full a file system is, as statvfs tells (percent used of what a user may use).
struct DiskUse {
  std::string path;                    // the folder asked about
  double bytes_percent = 0;
  std::optional<double> inodes_percent;  // none where the file system counts no inodes
  std::optional<double> free_bytes;      // what a user may still write; none when not measured
  std::optional<double> free_inodes;     // files a user may still make; none where it counts no inodes
  unsigned long long device = 0;         // the file system's id (st_dev): two folders on one have the same
};

struct DiskLimits {
  double warning = 80;
  double critical = 95;
};

// The checkpoint file system's severity by the limits: the worse of bytes and inodes.
Severity disk_severity(const DiskUse& use, const DiskLimits& limits);

// "checkpoint file system 96% full (inodes) at PATH".
std::string disk_text(const DiskUse& use);

}  // namespace mlsup::decide
