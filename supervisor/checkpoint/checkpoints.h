#pragma once
// A campaign's checkpoints as they lie in checkpoint.dir, judged complete or not by the layout's rules.
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"

namespace mlsup::checkpoint {

// One checkpoint: a folder in checkpoint.dir (or, for the glob layout, a folder or a file).
struct Checkpoint {
  std::string path;            // checkpoint.dir joined with the entry's name
  long long step = 0;          // from the name; 0 for a pointer-named folder without one ("release")
  bool complete = false;
  std::string why_incomplete;  // "" when complete, e.g. "has no done.txt inside"
  // Complete by a proof written after the save (the complete_marker, the layout's last file, a trusted
  // pointer), not only by being non-empty; retention counts and deletes only against proven ones.
  bool proven = false;
};

// What a look at checkpoint.dir found.
struct Scan {
  std::vector<Checkpoint> checkpoints;    // ascending by step, then path
  std::optional<long long> pointer_step;  // the step the layout's pointer file names, when it names one
  std::string pointer_problem;            // why the pointer was not trusted; "" when it was or there is none
  std::string dir_problem;                // why checkpoint.dir could not be listed (missing: no checkpoint yet)
};

// Lists the checkpoints of settings.dir by settings.layout and judges each; never throws.
Scan scan(const config::CheckpointSettings& settings);

// The newest complete checkpoint, or nullopt (fresh start).
std::optional<Checkpoint> newest_complete(const Scan& scan);

}  // namespace mlsup::checkpoint
