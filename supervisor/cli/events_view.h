#pragma once
// `mlsup events`: which events to show (--kind, --since) and the event log followed as it grows (--follow).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/error.h"

namespace mlsup::cli {

// Which events are shown: any of kinds (all when empty), at or after since (unix seconds; all when unset).
struct EventFilter {
  std::vector<std::string> kinds;
  std::optional<double> since;
  bool keep(const nlohmann::json& event) const;
};

// --kind's names checked against the table of event kinds (events/kinds.h; an older name is
// taken): the first unknown one with the nearest known name, or nothing.
util::Result<void> check_kinds(const std::vector<std::string>& kinds);

// --since: a duration back from now ("90s", "2h", "1d"), a local date and time ("2026-12-02", "2026-12-02 04:30",
// "2026-12-02T04:30:15"), or unix seconds ("@1764650000"); the time it names, or what is wrong.
util::Result<double> parse_since(std::string_view text, double now);

// An event log read as it grows: each poll returns the complete lines appended since the last one. A file
// replaced (another inode) or cut shorter than what was read is read again from its start; a missing file has
// no events yet. Cheap when nothing changed: one stat.
class LogFollower {
 public:
  explicit LogFollower(std::string path) : path_(std::move(path)) {}
  std::vector<nlohmann::json> poll();

 private:
  std::vector<nlohmann::json> poll_current();  // the current file's new complete lines

  std::string path_;
  bool first_ = true;  // the first poll reads the rotated parts too
  unsigned long long inode_ = 0;
  unsigned long long device_ = 0;
  long long offset_ = 0;  // bytes read, up to the last complete line
};

}  // namespace mlsup::cli
