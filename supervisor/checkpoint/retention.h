#pragma once
// Which checkpoints may go so that checkpoint.keep complete ones remain. Deciding only; the caller deletes.
#include <string>
#include <vector>

#include "checkpoint/checkpoints.h"

namespace mlsup::checkpoint {

// The checkpoints that may be deleted to keep `keep` proven complete ones, ascending by step: only ones
// older than the keep-th newest proven one, never one of protected_paths, never a complete one whose
// completeness is unproven, never one newer than the newest proven one (it may be a save in progress);
// keep <= 0 or no proven checkpoint deletes nothing.
std::vector<Checkpoint> deletable(const Scan& scan, int keep, const std::vector<std::string>& protected_paths);

// What the campaign may still resume from: kept whatever checkpoint.keep says.
struct Needed {
  std::string named;                // `mlsup resume --from`'s, for the next submission
  std::string proven;               // the newest one a later attempt's progress showed good
  std::string resumed_from;         // the current attempt's: it starts from it again if it fails before a save
  std::string fallback_from;        // what the next attempt resumes from: the complete one before it is kept, where a
                                    // fallback resumes should it be broken (decide/fallback.h)
  std::vector<std::string> handed;  // chain mode: what next.env names, and what is written into it now
};

// The one rule of every prune (at a submission, while an attempt runs, at completion): deletable() with
// every needed checkpoint protected.
std::vector<Checkpoint> prunable(const Scan& scan, int keep, const Needed& needed);

}  // namespace mlsup::checkpoint
