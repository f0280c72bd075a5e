// Each record's JSON from a table of its fields (util/json_fields.h): key, member, whether it is written
// only when set, and whether one of another type makes the record unusable (a field replay uses) or is
// left at its default (one it does not, as an older mlsup's journal may have it).
#include "state/records.h"

#include <tuple>

#include "util/json_fields.h"

// The enums a record holds, by their names in the journal ("" reads as none).
namespace mlsup::util::fields {
template <>
struct Codec<decide::EndClass> {
  static nlohmann::json encode(decide::EndClass c) { return std::string(decide::class_name(c)); }
};
template <>
struct Codec<std::optional<decide::EndClass>> {
  static void decode(const nlohmann::json& j, std::optional<decide::EndClass>& c) { c = decide::class_from_name(j.get<std::string>()); }
};
template <>
struct Codec<decide::Action> {
  static nlohmann::json encode(decide::Action a) { return std::string(decide::action_name(a)); }
};
template <>
struct Codec<std::optional<decide::Action>> {
  static void decode(const nlohmann::json& j, std::optional<decide::Action>& a) { a = decide::action_from_name(j.get<std::string>()); }
};
template <>
struct Codec<slurm::JobState> {
  static nlohmann::json encode(slurm::JobState s) { return std::string(slurm::state_name(s)); }
  static void decode(const nlohmann::json& j, slurm::JobState& s) { s = slurm::state_from_name(j.get<std::string>()); }
};
template <>
struct Codec<slurm::ErrorKind> {
  static nlohmann::json encode(slurm::ErrorKind k) { return std::string(slurm::error_kind_name(k)); }
  static void decode(const nlohmann::json& j, slurm::ErrorKind& k) { k = slurm::error_kind_from_name(j.get<std::string>()); }
};
}  // namespace mlsup::util::fields

namespace mlsup::engine::records {
using nlohmann::json;

namespace {

using util::fields::Field;
using util::fields::Keep;
constexpr Keep kWhenSet = Keep::WhenSet;
constexpr util::fields::Bad kSoft = util::fields::Bad::Defaults;
using util::fields::read;
using util::fields::write;

// The tables, one per record (a derived record's fields after its base's).
auto fields(const Campaign*) { return std::tuple{Field{"id", &Campaign::id}, Field{"name", &Campaign::name, Keep::Always, kSoft}}; }
auto fields(const SubmitIntent*) {
  using R = SubmitIntent;
  return std::tuple{Field{"attempt", &R::attempt},           Field{"tag", &R::tag},
                    Field{"resume_from", &R::resume_from},   Field{"resume_step", &R::resume_step},
                    Field{"exclude", &R::exclude},           Field{"chain", &R::chain, kWhenSet},
                    Field{"chain_job", &R::chain_job, kWhenSet}, Field{"in_job", &R::in_job, kWhenSet},
                    Field{"step_nodes", &R::step_nodes, kWhenSet}, Field{"signal_lead", &R::signal_lead, kWhenSet, kSoft},
                    Field{"debug", &R::debug, kWhenSet, kSoft}};
}
auto fields(const Submitted*) {
  using R = Submitted;
  return std::tuple{Field{"attempt", &R::attempt}, Field{"job_id", &R::job_id}, Field{"chain", &R::chain},
                    Field{"held", &R::held}};
}
auto fields(const Adopted*) { return fields(static_cast<const Submitted*>(nullptr)); }
auto fields(const SubmitFailed*) {
  using R = SubmitFailed;
  return std::tuple{Field{"attempt", &R::attempt}, Field{"kind", &R::kind}, Field{"code", &R::code, Keep::Always, kSoft},
                    Field{"message", &R::message}, Field{"outcome", &R::outcome, Keep::Always, kSoft}};
}
auto fields(const SbatchStarted*) {
  using R = SbatchStarted;
  return std::tuple{Field{"attempt", &R::attempt}, Field{"pid", &R::pid},         Field{"start_ticks", &R::start_ticks},
                    Field{"host", &R::host},       Field{"boot_id", &R::boot_id}, Field{"server_time", &R::server_time}};
}
auto fields(const SbatchAwaited*) {
  using R = SbatchAwaited;
  return std::tuple{Field{"attempt", &R::attempt}, Field{"pid", &R::pid}, Field{"host", &R::host, Keep::Always, kSoft}};
}
auto fields(const SbatchEnded*) {
  using R = SbatchEnded;
  return std::tuple{Field{"attempt", &R::attempt}, Field{"pid", &R::pid, Keep::Always, kSoft},
                    Field{"killed", &R::killed, Keep::Always, kSoft}};
}
auto fields(const SparesDropped*) {
  using R = SparesDropped;
  return std::tuple{Field{"attempt", &R::attempt}, Field{"job_id", &R::job_id, Keep::Always, kSoft},
                    Field{"nodes", &R::nodes, Keep::Always, kSoft}};
}
auto fields(const CancelIntent*) {
  using R = CancelIntent;
  return std::tuple{Field{"attempt", &R::attempt}, Field{"job_id", &R::job_id, Keep::Always, kSoft}, Field{"class", &R::cls},
                    Field{"reason", &R::reason, Keep::Always, kSoft}, Field{"steps_only", &R::steps_only, kWhenSet},
                    Field{"evidence_rule", &R::evidence_rule, kWhenSet, kSoft},
                    Field{"evidence_class", &R::evidence_class, kWhenSet, kSoft},
                    Field{"evidence_action", &R::evidence_action, kWhenSet, kSoft},
                    Field{"evidence_line", &R::evidence_line, kWhenSet, kSoft},
                    Field{"evidence_quote", &R::evidence_quote, kWhenSet, kSoft}};
}
auto fields(const PendingAlert*) {
  using R = PendingAlert;
  return std::tuple{Field{"attempt", &R::attempt}, Field{"job_id", &R::job_id, Keep::Always, kSoft},
                    Field{"reason", &R::reason, Keep::Always, kSoft}};
}
auto fields(const Ended*) {
  using R = Ended;
  return std::tuple{Field{"attempt", &R::attempt},
                    Field{"job_id", &R::job_id, Keep::Always, kSoft},
                    Field{"class", &R::cls},
                    Field{"slurm_state", &R::slurm_state, Keep::Always, kSoft},
                    Field{"exit_code", &R::exit_code, Keep::Always, kSoft},
                    Field{"signal", &R::signal, Keep::Always, kSoft},
                    Field{"nodes", &R::nodes},
                    Field{"step", &R::step},
                    Field{"checkpoint_step", &R::checkpoint_step, Keep::Always, kSoft},
                    Field{"resumed_from", &R::resumed_from, Keep::Always, kSoft},
                    Field{"progressed", &R::progressed},
                    Field{"action", &R::action},
                    Field{"delay", &R::delay},
                    Field{"reason", &R::reason, Keep::Always, kSoft},
                    Field{"suspects", &R::suspects},
                    Field{"follows_training", &R::follows_training, kWhenSet},
                    Field{"new_exclusion", &R::new_exclusion},
                    Field{"end_source", &R::end_source, kWhenSet, kSoft},
                    Field{"first_step_at", &R::first_step_at, Keep::Always, kSoft},
                    Field{"last_progress_at", &R::last_progress_at, Keep::Always, kSoft},
                    Field{"evidence_rule", &R::evidence_rule, kWhenSet, kSoft},
                    Field{"evidence_class", &R::evidence_class, kWhenSet, kSoft},
                    Field{"evidence_action", &R::evidence_action, kWhenSet, kSoft},
                    Field{"evidence_line", &R::evidence_line, kWhenSet, kSoft},
                    Field{"evidence_quote", &R::evidence_quote, kWhenSet, kSoft},
                    Field{"no_node_blamed", &R::no_node_blamed, kWhenSet, kSoft}};
}
auto fields(const Finished*) { return std::tuple{Field{"code", &Finished::code}, Field{"reason", &Finished::reason}}; }
auto fields(const Relaxed*) {
  using R = Relaxed;
  return std::tuple{Field{"attempt", &R::attempt}, Field{"job_id", &R::job_id, Keep::Always, kSoft}, Field{"node", &R::node}};
}
auto fields(const Quarantined*) {
  using R = Quarantined;
  return std::tuple{Field{"attempt", &R::attempt}, Field{"path", &R::path}, Field{"to", &R::to, Keep::Always, kSoft},
                    Field{"step", &R::step, Keep::Always, kSoft}, Field{"reason", &R::reason, Keep::Always, kSoft}};
}
auto fields(const Claimed*) {
  using R = Claimed;
  return std::tuple{Field{"attempt", &R::attempt}, Field{"job_id", &R::job_id}, Field{"task", &R::task, Keep::Always, kSoft},
                    Field{"how", &R::how}, Field{"resume_from", &R::resume_from}};
}
auto fields(const StepClaimed*) {
  using R = StepClaimed;
  return std::tuple{Field{"attempt", &R::attempt}, Field{"job_id", &R::job_id, Keep::Always, kSoft}, Field{"nodes", &R::nodes}};
}
auto fields(const ChainExhausted*) {
  using R = ChainExhausted;
  return std::tuple{Field{"attempt", &R::attempt}, Field{"job_id", &R::job_id, Keep::Always, kSoft}, Field{"tag", &R::tag}};
}
auto asked() {
  return std::tuple{Field{"request", &Asked::request}, Field{"verb", &Asked::verb, Keep::Always, kSoft},
                    Field{"by", &Asked::by, Keep::Always, kSoft}};
}
auto fields(const Resumed*) {
  return std::tuple_cat(asked(), std::tuple{Field{"from", &Resumed::from}, Field{"from_step", &Resumed::from_step}});
}
auto fields(const Paused*) { return std::tuple_cat(asked(), std::tuple{Field{"now", &Paused::now}}); }
auto fields(const CancelRequested*) { return asked(); }
auto fields(const Unexcluded*) {
  return std::tuple_cat(asked(), std::tuple{Field{"node", &Unexcluded::node}, Field{"why", &Unexcluded::why, Keep::Always, kSoft}});
}
auto fields(const RequestRefused*) {
  return std::tuple_cat(asked(), std::tuple{Field{"code", &RequestRefused::code, Keep::Always, kSoft},
                                            Field{"reason", &RequestRefused::reason, Keep::Always, kSoft}});
}
auto fields(const Held*) {
  return std::tuple{Field{"attempt", &Held::attempt}, Field{"job_id", &Held::job_id, Keep::Always, kSoft}, Field{"for", &Held::for_}};
}
auto fields(const Released*) {
  using R = Released;
  return std::tuple{Field{"attempt", &R::attempt}, Field{"job_id", &R::job_id, Keep::Always, kSoft},
                    Field{"for", &R::for_, kWhenSet, kSoft}};
}
auto fields(const SwitchSet*) { return std::tuple{Field{"attempt", &SwitchSet::attempt}, Field{"for", &SwitchSet::for_}}; }
auto fields(const SwitchCleared*) {
  return std::tuple{Field{"attempt", &SwitchCleared::attempt}, Field{"removed", &SwitchCleared::removed, Keep::Always, kSoft}};
}
auto fields(const Exclude*) {
  using R = Exclude;  // attempt: for status only, so one of another type reads as 0
  return std::tuple{Field{"attempt", &R::attempt, Keep::Always, kSoft}, Field{"node", &R::node},
                    Field{"reason", &R::reason},   Field{"until", &R::until},
                    Field{"rule", &R::rule, kWhenSet}, Field{"rank", &R::rank, kWhenSet},
                    Field{"step", &R::step, kWhenSet}, Field{"gpus", &R::gpus, kWhenSet, kSoft}};
}
auto fields(const ExclusionMoved*) {
  using R = ExclusionMoved;
  return std::tuple{Field{"attempt", &R::attempt, Keep::Always, kSoft}, Field{"from", &R::from}, Field{"to", &R::to},
                    Field{"gpus", &R::gpus}, Field{"until", &R::until}, Field{"reason", &R::reason, Keep::Always, kSoft}};
}
auto fields(const ExclusionLifted*) {
  using R = ExclusionLifted;
  return std::tuple{Field{"attempt", &R::attempt, Keep::Always, kSoft}, Field{"lifted", &R::lifted}, Field{"rank", &R::rank},
                    Field{"step", &R::step}, Field{"tolerance", &R::tolerance}, Field{"reason", &R::reason, Keep::Always, kSoft}};
}
auto fields(const DuplicateCancelled*) {
  using R = DuplicateCancelled;  // no replay reads it
  return std::tuple{Field{"attempt", &R::attempt, Keep::Always, kSoft}, Field{"job_id", &R::job_id, Keep::Always, kSoft},
                    Field{"state", &R::state, Keep::Always, kSoft}, Field{"attempt_job", &R::attempt_job, Keep::Always, kSoft},
                    Field{"revived", &R::revived, Keep::Always, kSoft}};
}

// What an ending's evidence holds beyond the table's fields, as the event tells it.
constexpr const char* kEvidence[] = {"first_failure", "first_reported", "victims", "health_failed"};

}  // namespace

MLSUP_PLAIN_RECORDS(MLSUP_FIELDS_JSON_DEFINE)

void to_json(json& j, const Ended& r) {
  write(j, r, fields(static_cast<const Ended*>(nullptr)));
  j.update(r.evidence);
}
void from_json(const json& j, Ended& r) {
  read(j, r, fields(static_cast<const Ended*>(nullptr)));
  for (const char* key : kEvidence)
    if (j.contains(key)) r.evidence[key] = j.at(key);
}

}  // namespace mlsup::engine::records
