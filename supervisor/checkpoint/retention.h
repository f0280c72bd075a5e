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

}  // namespace mlsup::checkpoint
