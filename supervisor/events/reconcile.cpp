// Each event's JSON from a table of its fields (util/json_fields.h); an event is read back leniently: a
// field of another type keeps its default, as an older mlsup's event log may have it.
#include "events/reconcile.h"

#include <tuple>


namespace mlsup::events {
using nlohmann::json;

namespace {

using util::fields::lenient;

auto fields(const ExclusionsCapped*) {
  using E = ExclusionsCapped;
  return std::tuple{lenient("kept", &E::kept), lenient("cap", &E::cap), lenient("reason", &E::reason)};
}
auto fields(const SlurmUnavailable*) {
  using E = SlurmUnavailable;
  return std::tuple{lenient("attempt", &E::attempt), lenient("job_id", &E::job_id), lenient("kind", &E::kind),
                    lenient("detail", &E::detail), lenient("decision", &E::decision)};
}
auto fields(const AccountingUnavailable*) {
  using E = AccountingUnavailable;
  return std::tuple{lenient("attempt", &E::attempt), lenient("job_id", &E::job_id), lenient("detail", &E::detail),
                    lenient("decision", &E::decision)};
}
auto fields(const SlurmUnreachable*) {
  using E = SlurmUnreachable;
  return std::tuple{lenient("attempt", &E::attempt), lenient("job_id", &E::job_id), lenient("kind", &E::kind),
                    lenient("detail", &E::detail), lenient("for", &E::for_), lenient("reason", &E::reason)};
}
auto fields(const DiskNearlyFull*) {
  using E = DiskNearlyFull;
  return std::tuple{lenient("path", &E::path), lenient("level", &E::level), lenient("used_percent", &E::used_percent),
                    util::fields::Field{"inodes_percent", &E::inodes_percent, util::fields::Keep::Null, util::fields::Bad::Defaults},
                    lenient("reason", &E::reason)};
}
auto fields(const DiskRunwayShort*) {
  using E = DiskRunwayShort;
  using util::fields::Bad, util::fields::Keep;
  return std::tuple{lenient("path", &E::path), lenient("state", &E::state),
                    util::fields::Field{"runway", &E::runway, Keep::Null, Bad::Defaults},
                    lenient("checkpoint_bytes", &E::checkpoint_bytes),
                    util::fields::Field{"cadence", &E::cadence, Keep::Null, Bad::Defaults}, lenient("reason", &E::reason)};
}
auto fields(const CheckpointPointerIgnored*) { return std::tuple{lenient("detail", &CheckpointPointerIgnored::detail)}; }
auto fields(const ChainTaskUnclaimed*) {
  using E = ChainTaskUnclaimed;
  return std::tuple{lenient("attempt", &E::attempt), lenient("job_id", &E::job_id), lenient("running_for", &E::running_for),
                    lenient("reason", &E::reason)};
}
auto fields(const NodeRecordsProblems*) {
  using E = NodeRecordsProblems;
  return std::tuple{lenient("job_id", &E::job_id), lenient("problems", &E::problems), lenient("decision", &E::decision)};
}
auto fields(const BudgetNearlySpent*) {
  using E = BudgetNearlySpent;
  return std::tuple{lenient("attempt", &E::attempt), lenient("budget", &E::budget), lenient("used", &E::used),
                    lenient("count", &E::count),     lenient("window", &E::window), lenient("reason", &E::reason)};
}
auto fields(const ForgottenWaiting*) {
  using E = ForgottenWaiting;
  return std::tuple{lenient("attempt", &E::attempt), lenient("job_id", &E::job_id), lenient("signs", &E::signs),
                    lenient("decision", &E::decision)};
}
auto fields(const WindowChange*) {
  using E = WindowChange;
  return std::tuple{lenient("hours", &E::hours), lenient("until", &E::until), lenient("reason", &E::reason)};
}
auto fields(const WindowOpened*) { return fields(static_cast<const WindowChange*>(nullptr)); }
auto fields(const WindowClosed*) { return fields(static_cast<const WindowChange*>(nullptr)); }
auto fields(const SparesUsedUp*) {
  using E = SparesUsedUp;
  return std::tuple{lenient("attempt", &E::attempt),       lenient("job_id", &E::job_id),     lenient("nodes", &E::nodes),
                    lenient("batch_host", &E::batch_host), lenient("unusable", &E::unusable), lenient("reason", &E::reason)};
}
auto fields(const SuspensionEnded*) {
  using E = SuspensionEnded;
  return std::tuple{lenient("attempt", &E::attempt), lenient("suspended_for", &E::suspended_for), lenient("reason", &E::reason)};
}
auto fields(const HeartbeatEmptyRead*) {
  using E = HeartbeatEmptyRead;
  return std::tuple{lenient("attempt", &E::attempt), lenient("file", &E::file), lenient("detail", &E::detail)};
}
auto fields(const Pending*) {
  using E = Pending;
  return std::tuple{lenient("attempt", &E::attempt), lenient("job_id", &E::job_id), lenient("slurm_reason", &E::slurm_reason),
                    lenient("reason", &E::reason)};
}
auto fields(const CapacityRestored*) {
  using E = CapacityRestored;
  return std::tuple{lenient("attempt", &E::attempt), lenient("job_id", &E::job_id), lenient("was", &E::was),
                    lenient("reason", &E::reason)};
}
auto fields(const CapacityShort*) {
  using E = CapacityShort;
  return std::tuple{lenient("attempt", &E::attempt), lenient("job_id", &E::job_id), lenient("shortfall", &E::shortfall),
                    lenient("alert", &E::alert),     lenient("reason", &E::reason)};
}

auto fields(const StragglerFound*) {
  using E = StragglerFound;
  return std::tuple{lenient("attempt", &E::attempt), lenient("job_id", &E::job_id),     lenient("rank", &E::rank),
                    lenient("node", &E::node),       lenient("compute", &E::compute),   lenient("others", &E::others),
                    lenient("slower_for", &E::slower_for), lenient("reason", &E::reason)};
}

}  // namespace

MLSUP_EVENTS(MLSUP_FIELDS_JSON_DEFINE)

}  // namespace mlsup::events
