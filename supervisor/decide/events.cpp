// Each event's JSON from a table of its fields (util/json_fields.h); an event is read back leniently: a
// field of another type keeps its default, as an older mlsup's event log may have it.
#include "decide/events.h"

#include <tuple>

#include "util/json_fields.h"

namespace mlsup::decide::events {
using nlohmann::json;

namespace {

constexpr auto kSoft = util::fields::Bad::Defaults;
constexpr auto kAlways = util::fields::Keep::Always;

// A field of an event: written always (an empty optional left out), read leniently.
template <class E, class T>
util::fields::Field<E, T> field(const char* key, T E::*member) {
  return {key, member, kAlways, kSoft};
}

auto fields(const ExclusionsCapped*) {
  using E = ExclusionsCapped;
  return std::tuple{field("kept", &E::kept), field("cap", &E::cap), field("reason", &E::reason)};
}
auto fields(const SlurmUnavailable*) {
  using E = SlurmUnavailable;
  return std::tuple{field("attempt", &E::attempt), field("job_id", &E::job_id), field("kind", &E::kind),
                    field("detail", &E::detail), field("decision", &E::decision)};
}
auto fields(const AccountingUnavailable*) {
  using E = AccountingUnavailable;
  return std::tuple{field("attempt", &E::attempt), field("job_id", &E::job_id), field("detail", &E::detail),
                    field("decision", &E::decision)};
}
auto fields(const SlurmUnreachable*) {
  using E = SlurmUnreachable;
  return std::tuple{field("attempt", &E::attempt), field("job_id", &E::job_id), field("kind", &E::kind),
                    field("detail", &E::detail), field("for", &E::for_), field("reason", &E::reason)};
}
auto fields(const DiskNearlyFull*) {
  using E = DiskNearlyFull;
  return std::tuple{field("path", &E::path), field("level", &E::level), field("used_percent", &E::used_percent),
                    util::fields::Field{"inodes_percent", &E::inodes_percent, util::fields::Keep::Null, kSoft},
                    field("reason", &E::reason)};
}
auto fields(const CheckpointPointerIgnored*) { return std::tuple{field("detail", &CheckpointPointerIgnored::detail)}; }
auto fields(const ChainTaskUnclaimed*) {
  using E = ChainTaskUnclaimed;
  return std::tuple{field("attempt", &E::attempt), field("job_id", &E::job_id), field("running_for", &E::running_for),
                    field("reason", &E::reason)};
}
auto fields(const NodeRecordsProblems*) {
  using E = NodeRecordsProblems;
  return std::tuple{field("job_id", &E::job_id), field("problems", &E::problems), field("decision", &E::decision)};
}
auto fields(const BudgetNearlySpent*) {
  using E = BudgetNearlySpent;
  return std::tuple{field("attempt", &E::attempt), field("budget", &E::budget), field("used", &E::used),
                    field("count", &E::count),     field("window", &E::window), field("reason", &E::reason)};
}
auto fields(const ForgottenWaiting*) {
  using E = ForgottenWaiting;
  return std::tuple{field("attempt", &E::attempt), field("job_id", &E::job_id), field("signs", &E::signs),
                    field("decision", &E::decision)};
}
auto fields(const WindowChange*) {
  using E = WindowChange;
  return std::tuple{field("hours", &E::hours), field("until", &E::until), field("reason", &E::reason)};
}
auto fields(const WindowOpened*) { return fields(static_cast<const WindowChange*>(nullptr)); }
auto fields(const WindowClosed*) { return fields(static_cast<const WindowChange*>(nullptr)); }
auto fields(const SparesUsedUp*) {
  using E = SparesUsedUp;
  return std::tuple{field("attempt", &E::attempt),       field("job_id", &E::job_id),     field("nodes", &E::nodes),
                    field("batch_host", &E::batch_host), field("unusable", &E::unusable), field("reason", &E::reason)};
}
auto fields(const SuspensionEnded*) {
  using E = SuspensionEnded;
  return std::tuple{field("attempt", &E::attempt), field("suspended_for", &E::suspended_for), field("reason", &E::reason)};
}
auto fields(const HeartbeatEmptyRead*) {
  using E = HeartbeatEmptyRead;
  return std::tuple{field("attempt", &E::attempt), field("file", &E::file), field("detail", &E::detail)};
}
auto fields(const Pending*) {
  using E = Pending;
  return std::tuple{field("attempt", &E::attempt), field("job_id", &E::job_id), field("slurm_reason", &E::slurm_reason),
                    field("reason", &E::reason)};
}
auto fields(const CapacityRestored*) {
  using E = CapacityRestored;
  return std::tuple{field("attempt", &E::attempt), field("job_id", &E::job_id), field("was", &E::was),
                    field("reason", &E::reason)};
}
auto fields(const CapacityShort*) {
  using E = CapacityShort;
  return std::tuple{field("attempt", &E::attempt), field("job_id", &E::job_id), field("shortfall", &E::shortfall),
                    field("alert", &E::alert),     field("reason", &E::reason)};
}

}  // namespace

#define MLSUP_EVENT_JSON(E)                                                                                  \
  void to_json(json& j, const E& e) { util::fields::write(j, e, fields(static_cast<const E*>(nullptr))); }   \
  void from_json(const json& j, E& e) { util::fields::read(j, e, fields(static_cast<const E*>(nullptr))); }
MLSUP_EVENTS(MLSUP_EVENT_JSON)
#undef MLSUP_EVENT_JSON

}  // namespace mlsup::decide::events
