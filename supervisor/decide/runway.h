#pragma once
// How long until the campaign's checkpoints fill their file system (pure): one checkpoint's size, how often
// one is saved and how many retention keeps, against the bytes and inodes still free.
#include <optional>
#include <string>

#include "decide/disk.h"

namespace mlsup::decide {

// One checkpoint's size on disk.
struct CheckpointSize {
  double bytes = 0;
  double files = 0;  // inodes: its files and folders
};

struct RunwayInputs {
  std::optional<CheckpointSize> checkpoint;  // the newest complete one's; nullopt: none saved yet
  std::optional<double> cadence;             // wall seconds from one save to the next; nullopt: unknown
  int keep = 0;                              // checkpoint.keep: complete ones kept (0: all)
  int complete = 0;                          // complete checkpoints there now
};

enum class RunwayState {
  Filling,  // every save adds one: full in `seconds`
  Steady,   // retention keeps the count and the room holds it (and the save written before each prune)
  NoRoom,   // the next save does not fit
  Unknown,  // no checkpoint yet, or no cadence or free space measured
};
const char* runway_state_name(RunwayState s);  // "filling", "steady", "no-room", "unknown"

struct Runway {
  RunwayState state = RunwayState::Unknown;
  std::optional<double> seconds;  // filling: until full at the measured pace; no-room: 0
  bool inodes = false;            // the inodes run out first
};

// The checkpoint file system's runway.
Runway runway(const DiskUse& fs, const RunwayInputs& in);

// Whether it is below `alert` seconds (no room counts; steady and unknown never do).
bool runway_short(const Runway& r, double alert);

// "runway 14h (inodes) on /scratch at a 1.2 GB checkpoint every 30m" and the like, for status, check and alerts.
std::string runway_text(const Runway& r, const DiskUse& fs, const RunwayInputs& in);

// "1.2 GB", "340 MB", "12 kB", "512 B": bytes for people (powers of 1000).
std::string human_bytes(double bytes);

}  // namespace mlsup::decide
