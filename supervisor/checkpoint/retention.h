#pragma once
// Which checkpoints may go so that checkpoint.keep complete ones remain. Deciding only; the caller deletes.
#include <string>
#include <vector>

#include "checkpoint/checkpoints.h"

namespace mlsup::checkpoint {

// The checkpoints that may be deleted to keep `keep` complete ones, ascending by step: never the newest
// complete one, never one of protected_paths, never an incomplete one newer than the newest complete one
// (it may be a save in progress); keep <= 0 deletes nothing.
std::vector<Checkpoint> deletable(const Scan& scan, int keep, const std::vector<std::string>& protected_paths);

}  // namespace mlsup::checkpoint
