#include "decide/pending.h"

#include <algorithm>
#include <array>

namespace mlsup::decide {
namespace {

// A reason a job does not leave by waiting, and whether it can never start as asked (told at once)
// rather than waiting for a person (a hold, a partition brought down: told after policy.pending_alert_after).
struct StuckReason {
  std::string_view reason;
  bool never_starts;
};

constexpr std::array<StuckReason, 17> kStuck = {{
    {"PartitionConfig", true},                 // asks for what the partition does not have
    {"PartitionNodeLimit", true},              // more nodes than the partition has or allows
    {"PartitionTimeLimit", true},              // a longer time than the partition allows
    {"PartitionDown", false},
    {"PartitionInactive", false},
    {"JobHeldUser", false},
    {"JobHeldAdmin", false},
    {"InvalidQOS", true},
    {"InvalidAccount", true},
    {"BadConstraints", true},                  // features no node has together
    {"DependencyNeverSatisfied", true},
    {"QOSMaxWallDurationPerJobLimit", true},
    {"QOSMaxNodePerJobLimit", true},
    {"QOSMaxCpuPerJobLimit", true},
    {"AssocMaxWallDurationPerJobLimit", true},
    {"AssocMaxNodesPerJobLimit", true},
    {"AssocMaxCpuPerJobLimit", true},
}};

const StuckReason* stuck(std::string_view reason) {
  const auto it = std::find_if(kStuck.begin(), kStuck.end(), [&](const StuckReason& r) { return r.reason == reason; });
  return it == kStuck.end() ? nullptr : &*it;
}

}  // namespace

bool waiting_for_nodes(std::string_view reason, bool has_exclusions) {
  return has_exclusions && reason.starts_with("ReqNodeNotAvail");
}

bool stuck_reason(std::string_view reason) { return stuck(reason) != nullptr; }

bool waits_for_resources(std::string_view reason) {
  return reason == "Resources" || reason == "Priority" || reason == "NodeDown" || reason.starts_with("ReqNodeNotAvail");
}

bool may_want_nodes(std::string_view reason) { return waits_for_resources(reason) || reason == "BadConstraints"; }

bool never_starts(std::string_view reason) {
  const auto* r = stuck(reason);
  return r && r->never_starts;
}

namespace {

// Nodes the job needs are down, drained or reserved and mlsup keeps none out: only people bring them
// back, and a node rebooting comes back by itself, so this is told after policy.pending_alert_after.
bool nodes_down(std::string_view reason, bool has_exclusions) {
  return !has_exclusions && reason.starts_with("ReqNodeNotAvail");
}

}  // namespace

PendingStep judge_pending(const PendingInput& in) {
  if (waiting_for_nodes(in.reason, in.has_exclusions) && in.unavailable_for >= in.relax_after) return PendingStep::Relax;
  if (in.alerted) return PendingStep::Wait;
  if (never_starts(in.reason)) return PendingStep::Alert;
  if (in.pending_for >= in.alert_after && (stuck_reason(in.reason) || nodes_down(in.reason, in.has_exclusions)))
    return PendingStep::Alert;
  return PendingStep::Wait;
}

}  // namespace mlsup::decide
