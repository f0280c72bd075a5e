#include "decide/runway.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace mlsup::decide {
namespace {

// "1h02m"-like, for the runway's own words (the views have theirs; decide stays below them).
std::string span_words(double seconds) {
  const auto s = static_cast<long long>(std::llround(std::max(0.0, seconds)));
  if (s < 60) return std::to_string(s) + "s";
  if (s < 3600) return std::to_string(s / 60) + "m";
  if (s < 86400) return std::to_string(s / 3600) + "h" + (s % 3600 / 60 < 10 ? "0" : "") + std::to_string(s % 3600 / 60) + "m";
  return std::to_string(s / 86400) + "d" + std::to_string(s % 86400 / 3600) + "h";
}

// Whether `count` more checkpoints fit in what is free.
bool fits(const DiskUse& fs, const CheckpointSize& one, double count) {
  if (fs.free_bytes && *fs.free_bytes < one.bytes * count) return false;
  return !(fs.free_inodes && *fs.free_inodes < one.files * count);
}

}  // namespace

const char* runway_state_name(RunwayState s) {
  switch (s) {
    case RunwayState::Filling: return "filling";
    case RunwayState::Steady: return "steady";
    case RunwayState::NoRoom: return "no-room";
    case RunwayState::Unknown: return "unknown";
  }
  return "unknown";
}

Runway runway(const DiskUse& fs, const RunwayInputs& in) {
  if (!in.checkpoint || !fs.free_bytes) return {};
  const auto& one = *in.checkpoint;
  if (!fits(fs, one, 1)) return {RunwayState::NoRoom, 0.0, fs.free_inodes && *fs.free_inodes < one.files};
  // Retention keeps `keep`; until there are that many each save adds one, and the next is written before a prune.
  if (in.keep > 0 && fits(fs, one, std::max(0, in.keep - in.complete) + 1.0)) return {RunwayState::Steady, std::nullopt, false};
  if (!in.cadence || *in.cadence <= 0) return {};
  const double bytes_left = one.bytes > 0 ? *fs.free_bytes / one.bytes * *in.cadence : INFINITY;
  const double inodes_left = fs.free_inodes && one.files > 0 ? *fs.free_inodes / one.files * *in.cadence : INFINITY;
  return {RunwayState::Filling, std::min(bytes_left, inodes_left), inodes_left < bytes_left};
}

bool runway_short(const Runway& r, double alert) {
  if (r.state == RunwayState::NoRoom) return true;
  return r.state == RunwayState::Filling && r.seconds && *r.seconds < alert;
}

std::string runway_text(const Runway& r, const DiskUse& fs, const RunwayInputs& in) {
  const std::string size = in.checkpoint ? human_bytes(in.checkpoint->bytes) : "?";
  switch (r.state) {
    case RunwayState::NoRoom:
      return "no room for the next checkpoint (" + size + ") on " + fs.path + (r.inodes ? " (inodes)" : "");
    case RunwayState::Steady:
      return "steady: room for the " + std::to_string(in.keep) + " checkpoints kept (" + size + " each) on " + fs.path;
    case RunwayState::Filling:
      return "runway " + span_words(r.seconds.value_or(0)) + (r.inodes ? " (inodes)" : "") + " on " + fs.path + " at a " +
             size + " checkpoint every " + span_words(in.cadence.value_or(0));
    case RunwayState::Unknown: break;
  }
  return std::string("runway unknown on ") + fs.path + (in.checkpoint ? " (no save cadence measured yet)" : " (no checkpoint yet)");
}

std::string human_bytes(double bytes) {
  static constexpr const char* kUnits[] = {"B", "kB", "MB", "GB", "TB", "PB"};
  int unit = 0;
  while (bytes >= 1000 && unit < 5) bytes /= 1000, ++unit;
  char text[32];
  std::snprintf(text, sizeof text, unit == 0 || bytes >= 100 ? "%.0f %s" : "%.1f %s", bytes, kUnits[unit]);
  return text;
}

}  // namespace mlsup::decide
