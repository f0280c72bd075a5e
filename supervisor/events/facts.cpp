// What each fact's event adds to its record, from a table of its fields (util/json_fields.h), read back
// leniently as reconcile.cpp's.
#include "events/facts.h"

#include <tuple>


namespace mlsup::events {
using nlohmann::json;

namespace {

using util::fields::lenient;

auto fields(const Reasoned*) { return std::tuple{lenient("reason", &Reasoned::reason)}; }
auto fields(const Submitted*) {
  using E = Submitted;
  return std::tuple{lenient("resume_from", &E::resume_from), lenient("resume_step", &E::resume_step),
                    lenient("exclude", &E::exclude),         lenient("script", &E::script),
                    lenient("reason", &E::reason),
                    util::fields::Field{"signal_lead", &E::signal_lead, util::fields::Keep::WhenSet, util::fields::Bad::Defaults},
                    util::fields::Field{"debug", &E::debug, util::fields::Keep::WhenSet, util::fields::Bad::Defaults}};
}
auto fields(const Adopted*) { return std::tuple{lenient("detail", &Adopted::detail)}; }
auto fields(const Excluded*) { return std::tuple{lenient("for", &Excluded::for_)}; }
auto fields(const ExclusionLifted*) { return std::tuple{}; }
auto fields(const ExclusionMoved*) { return std::tuple{}; }
auto fields(const CheckpointQuarantined*) { return std::tuple{lenient("detail", &CheckpointQuarantined::detail)}; }
auto fields(const AttemptEnded*) {
  return std::tuple{lenient("output", &AttemptEnded::output), lenient("output_tail", &AttemptEnded::output_tail)};
}
auto fields(const Finishing*) {
  return std::tuple{lenient("exit_code", &Finishing::exit_code), lenient("alert", &Finishing::alert)};
}
auto fields(const Completed*) { return fields(static_cast<const Finishing*>(nullptr)); }
auto fields(const Stopped*) { return fields(static_cast<const Finishing*>(nullptr)); }
auto fields(const ExclusionsRelaxed*) {
  return std::tuple{lenient("exc_node_list", &ExclusionsRelaxed::exc_node_list), lenient("reason", &ExclusionsRelaxed::reason)};
}
auto fields(const PendingStuck*) {
  using E = PendingStuck;
  return std::tuple{lenient("slurm_reason", &E::slurm_reason), lenient("alert", &E::alert),
                    lenient("never_starts", &E::never_starts), lenient("reason", &E::reason)};
}
auto fields(const Claimed*) {
  using E = Claimed;
  return std::tuple{lenient("array_job_id", &E::array_job_id), lenient("values", &E::values), lenient("reason", &E::reason)};
}
auto fields(const ChainExhausted*) { return fields(static_cast<const Reasoned*>(nullptr)); }
auto fields(const CampaignResumed*) { return fields(static_cast<const Reasoned*>(nullptr)); }
auto fields(const CampaignPaused*) { return fields(static_cast<const Reasoned*>(nullptr)); }
auto fields(const CancelRequested*) { return fields(static_cast<const Reasoned*>(nullptr)); }
auto fields(const Unexcluded*) { return fields(static_cast<const Reasoned*>(nullptr)); }
auto fields(const RequestRefused*) { return std::tuple{}; }
auto fields(const JobHeld*) { return fields(static_cast<const Reasoned*>(nullptr)); }
auto fields(const JobReleased*) { return fields(static_cast<const Reasoned*>(nullptr)); }
auto fields(const SbatchAwaited*) { return fields(static_cast<const Reasoned*>(nullptr)); }
auto fields(const SbatchEnded*) { return fields(static_cast<const Reasoned*>(nullptr)); }
auto fields(const SwitchTold*) {
  return std::tuple{lenient("switch", &SwitchTold::switch_), lenient("reason", &SwitchTold::reason)};
}
auto fields(const KillSwitchSet*) { return fields(static_cast<const SwitchTold*>(nullptr)); }
auto fields(const KillSwitchCleared*) { return fields(static_cast<const SwitchTold*>(nullptr)); }
auto fields(const DuplicateCancelled*) {
  return std::tuple{lenient("alert", &DuplicateCancelled::alert), lenient("reason", &DuplicateCancelled::reason)};
}
auto fields(const SparesDropped*) {
  return std::tuple{lenient("shortfall", &SparesDropped::shortfall), lenient("reason", &SparesDropped::reason)};
}
auto fields(const Cancelling*) { return std::tuple{lenient("fenced", &Cancelling::fenced)}; }

}  // namespace

MLSUP_FACT_EVENTS(MLSUP_FIELDS_JSON_DEFINE)

}  // namespace mlsup::events
