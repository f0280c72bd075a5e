#include "decide/pending.h"

#include <algorithm>
#include <array>

namespace mlsup::decide {
namespace {

// Reasons a job does not leave by waiting.
constexpr std::array<std::string_view, 17> kStuck = {
    "PartitionConfig", "PartitionNodeLimit", "PartitionTimeLimit", "PartitionDown", "PartitionInactive",
    "JobHeldUser", "JobHeldAdmin", "InvalidQOS", "InvalidAccount", "BadConstraints", "DependencyNeverSatisfied",
    "QOSMaxWallDurationPerJobLimit", "QOSMaxNodePerJobLimit", "QOSMaxCpuPerJobLimit", "AssocMaxWallDurationPerJobLimit",
    "AssocMaxNodesPerJobLimit", "AssocMaxCpuPerJobLimit"};

}  // namespace

bool waiting_for_nodes(std::string_view reason, bool has_exclusions) {
  return has_exclusions && reason.starts_with("ReqNodeNotAvail");
}

bool stuck_reason(std::string_view reason) { return std::find(kStuck.begin(), kStuck.end(), reason) != kStuck.end(); }

PendingStep judge_pending(const PendingInput& in) {
  if (waiting_for_nodes(in.reason, in.has_exclusions) && in.unavailable_for >= in.relax_after) return PendingStep::Relax;
  if (!in.alerted && in.pending_for >= in.alert_after && stuck_reason(in.reason)) return PendingStep::Alert;
  return PendingStep::Wait;
}

}  // namespace mlsup::decide
