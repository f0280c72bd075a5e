#include "state/records.h"

namespace mlsup::engine::records {
using nlohmann::json;

namespace {

// Reads key into v when present (a wrong type throws, and replay reports the record); else keeps v.
template <class T>
void read(const json& j, const char* key, T& v) {
  v = j.value(key, v);
}

// As read, for a field that replay does not use: one of another type is left at its default, as an
// older mlsup's journal may have it, rather than making the whole record unusable.
template <class T>
void soft(const json& j, const char* key, T& v) {
  try {
    v = j.value(key, v);
  } catch (const json::exception&) {
  }
}

std::optional<decide::Action> action_from_name(std::string_view name) {
  for (auto a : {decide::Action::Finish, decide::Action::Resubmit, decide::Action::Stop, decide::Action::Pause})
    if (decide::action_name(a) == name) return a;
  return std::nullopt;
}

void asked_to_json(json& j, const Asked& r) { j = {{"request", r.request}, {"verb", r.verb}, {"by", r.by}}; }
void asked_from_json(const json& j, Asked& r) {
  read(j, "request", r.request);
  soft(j, "verb", r.verb);
  soft(j, "by", r.by);
}

void submitted_to_json(json& j, const Submitted& r) {
  j = {{"attempt", r.attempt}, {"job_id", r.job_id}, {"chain", r.chain.value_or(false)}, {"held", r.held}};
}
void submitted_from_json(const json& j, Submitted& r) {
  read(j, "attempt", r.attempt);
  read(j, "job_id", r.job_id);
  if (j.contains("chain")) r.chain = j.value("chain", false);
  read(j, "held", r.held);
}

}  // namespace

void to_json(json& j, const Campaign& r) { j = {{"id", r.id}, {"name", r.name}}; }
void from_json(const json& j, Campaign& r) {
  read(j, "id", r.id);
  soft(j, "name", r.name);
}

void to_json(json& j, const SubmitIntent& r) {
  j = {{"attempt", r.attempt}, {"tag", r.tag}, {"resume_from", r.resume_from}, {"resume_step", r.resume_step}, {"exclude", r.exclude}};
  if (r.chain) j.update({{"chain", true}, {"chain_job", r.chain_job}});
  if (r.in_job) j.update({{"in_job", r.in_job}, {"step_nodes", r.step_nodes}});
}
void from_json(const json& j, SubmitIntent& r) {
  read(j, "attempt", r.attempt);
  read(j, "tag", r.tag);
  read(j, "resume_from", r.resume_from);
  read(j, "resume_step", r.resume_step);
  read(j, "exclude", r.exclude);
  read(j, "chain", r.chain);
  read(j, "chain_job", r.chain_job);
  read(j, "in_job", r.in_job);
  read(j, "step_nodes", r.step_nodes);
}

void to_json(json& j, const Submitted& r) { submitted_to_json(j, r); }
void from_json(const json& j, Submitted& r) { submitted_from_json(j, r); }
void to_json(json& j, const Adopted& r) { submitted_to_json(j, r); }
void from_json(const json& j, Adopted& r) { submitted_from_json(j, r); }

void to_json(json& j, const SubmitFailed& r) {
  j = {{"attempt", r.attempt}, {"kind", std::string(slurm::error_kind_name(r.kind))}, {"code", r.code},
       {"message", r.message}, {"outcome", r.outcome}};
}
void from_json(const json& j, SubmitFailed& r) {
  read(j, "attempt", r.attempt);
  r.kind = slurm::error_kind_from_name(j.value("kind", ""));
  soft(j, "code", r.code);
  read(j, "message", r.message);
  soft(j, "outcome", r.outcome);
}

void to_json(json& j, const SbatchStarted& r) {
  j = {{"attempt", r.attempt}, {"pid", r.pid}, {"start_ticks", r.start_ticks}, {"host", r.host}, {"boot_id", r.boot_id}};
  if (r.server_time) j["server_time"] = *r.server_time;
}
void from_json(const json& j, SbatchStarted& r) {
  read(j, "attempt", r.attempt);
  read(j, "pid", r.pid);
  read(j, "start_ticks", r.start_ticks);
  read(j, "host", r.host);
  read(j, "boot_id", r.boot_id);
  if (j.contains("server_time")) r.server_time = j.value("server_time", 0.0);
}

void to_json(json& j, const SbatchAwaited& r) { j = {{"attempt", r.attempt}, {"pid", r.pid}, {"host", r.host}}; }
void from_json(const json& j, SbatchAwaited& r) {
  read(j, "attempt", r.attempt);
  read(j, "pid", r.pid);
  soft(j, "host", r.host);
}

void to_json(json& j, const SbatchEnded& r) { j = {{"attempt", r.attempt}, {"pid", r.pid}, {"killed", r.killed}}; }
void from_json(const json& j, SbatchEnded& r) {
  read(j, "attempt", r.attempt);
  soft(j, "pid", r.pid);
  soft(j, "killed", r.killed);
}

void to_json(json& j, const SparesDropped& r) { j = {{"attempt", r.attempt}, {"job_id", r.job_id}, {"nodes", r.nodes}}; }
void from_json(const json& j, SparesDropped& r) {
  read(j, "attempt", r.attempt);
  soft(j, "job_id", r.job_id);
  soft(j, "nodes", r.nodes);
}

void to_json(json& j, const CancelIntent& r) {
  j = {{"attempt", r.attempt}, {"job_id", r.job_id}, {"class", r.cls ? std::string(decide::class_name(*r.cls)) : ""},
       {"reason", r.reason}};
  if (r.steps_only) j["steps_only"] = true;
}
void from_json(const json& j, CancelIntent& r) {
  read(j, "attempt", r.attempt);
  soft(j, "job_id", r.job_id);
  r.cls = decide::class_from_name(j.value("class", ""));
  soft(j, "reason", r.reason);
  read(j, "steps_only", r.steps_only);
}

void to_json(json& j, const PendingAlert& r) { j = {{"attempt", r.attempt}, {"job_id", r.job_id}, {"reason", r.reason}}; }
void from_json(const json& j, PendingAlert& r) {
  read(j, "attempt", r.attempt);
  soft(j, "job_id", r.job_id);
  soft(j, "reason", r.reason);
}

void to_json(json& j, const Ended& r) {
  j = {{"attempt", r.attempt},
       {"job_id", r.job_id},
       {"class", r.cls ? std::string(decide::class_name(*r.cls)) : ""},
       {"slurm_state", std::string(slurm::state_name(r.slurm_state))},
       {"exit_code", r.exit_code},
       {"signal", r.signal},
       {"nodes", r.nodes},
       {"step", r.step},
       {"checkpoint_step", r.checkpoint_step},
       {"resumed_from", r.resumed_from},
       {"progressed", r.progressed},
       {"action", r.action ? std::string(decide::action_name(*r.action)) : ""},
       {"delay", r.delay},
       {"reason", r.reason},
       {"new_exclusion", r.new_exclusion}};
  j.update(r.evidence);
  if (r.suspects) j["suspects"] = *r.suspects;
  if (r.follows_training) j["follows_training"] = true;
  if (!r.end_source.empty()) j["end_source"] = r.end_source;
}
void from_json(const json& j, Ended& r) {
  read(j, "attempt", r.attempt);
  soft(j, "job_id", r.job_id);
  r.cls = decide::class_from_name(j.value("class", ""));
  std::string state;
  soft(j, "slurm_state", state);
  r.slurm_state = slurm::state_from_name(state);
  soft(j, "exit_code", r.exit_code);
  soft(j, "signal", r.signal);
  read(j, "nodes", r.nodes);
  read(j, "step", r.step);
  soft(j, "checkpoint_step", r.checkpoint_step);
  soft(j, "resumed_from", r.resumed_from);
  read(j, "progressed", r.progressed);
  r.action = action_from_name(j.value("action", ""));
  read(j, "delay", r.delay);
  soft(j, "reason", r.reason);
  read(j, "new_exclusion", r.new_exclusion);
  if (j.contains("suspects")) r.suspects = j.value("suspects", std::vector<std::string>{});
  read(j, "follows_training", r.follows_training);
  soft(j, "end_source", r.end_source);
  for (const char* key : {"first_failure", "first_reported", "victims", "health_failed"})
    if (j.contains(key)) r.evidence[key] = j.at(key);
}

void to_json(json& j, const Finished& r) { j = {{"code", r.code}, {"reason", r.reason}}; }
void from_json(const json& j, Finished& r) {
  read(j, "code", r.code);
  read(j, "reason", r.reason);
}

void to_json(json& j, const Relaxed& r) { j = {{"attempt", r.attempt}, {"job_id", r.job_id}, {"node", r.node}}; }
void from_json(const json& j, Relaxed& r) {
  read(j, "attempt", r.attempt);
  soft(j, "job_id", r.job_id);
  read(j, "node", r.node);
}

void to_json(json& j, const Claimed& r) {
  j = {{"attempt", r.attempt}, {"job_id", r.job_id}, {"task", r.task}, {"how", r.how}, {"resume_from", r.resume_from.value_or("")}};
}
void from_json(const json& j, Claimed& r) {
  read(j, "attempt", r.attempt);
  read(j, "job_id", r.job_id);
  soft(j, "task", r.task);
  read(j, "how", r.how);
  if (j.contains("resume_from")) r.resume_from = j.value("resume_from", "");
}

void to_json(json& j, const StepClaimed& r) { j = {{"attempt", r.attempt}, {"job_id", r.job_id}, {"nodes", r.nodes}}; }
void from_json(const json& j, StepClaimed& r) {
  read(j, "attempt", r.attempt);
  soft(j, "job_id", r.job_id);
  read(j, "nodes", r.nodes);
}

void to_json(json& j, const ChainExhausted& r) { j = {{"attempt", r.attempt}, {"job_id", r.job_id}, {"tag", r.tag.value_or("")}}; }
void from_json(const json& j, ChainExhausted& r) {
  read(j, "attempt", r.attempt);
  soft(j, "job_id", r.job_id);
  if (j.contains("tag")) r.tag = j.value("tag", "");
}

void to_json(json& j, const Resumed& r) {
  asked_to_json(j, r);
  j.update({{"from", r.from}, {"from_step", r.from_step}});
}
void from_json(const json& j, Resumed& r) {
  asked_from_json(j, r);
  read(j, "from", r.from);
  read(j, "from_step", r.from_step);
}

void to_json(json& j, const Paused& r) {
  asked_to_json(j, r);
  j["now"] = r.now;
}
void from_json(const json& j, Paused& r) {
  asked_from_json(j, r);
  read(j, "now", r.now);
}

void to_json(json& j, const CancelRequested& r) { asked_to_json(j, r); }
void from_json(const json& j, CancelRequested& r) { asked_from_json(j, r); }

void to_json(json& j, const RequestRefused& r) {
  asked_to_json(j, r);
  j.update({{"code", r.code}, {"reason", r.reason}});
}
void from_json(const json& j, RequestRefused& r) {
  asked_from_json(j, r);
  soft(j, "code", r.code);
  soft(j, "reason", r.reason);
}

void to_json(json& j, const Held& r) { j = {{"attempt", r.attempt}, {"job_id", r.job_id}, {"for", r.for_}}; }
void from_json(const json& j, Held& r) {
  read(j, "attempt", r.attempt);
  soft(j, "job_id", r.job_id);
  r.for_ = j.value("for", "pause");
}

void to_json(json& j, const Released& r) {
  j = {{"attempt", r.attempt}, {"job_id", r.job_id}};
  if (!r.for_.empty()) j["for"] = r.for_;
}
void from_json(const json& j, Released& r) {
  read(j, "attempt", r.attempt);
  soft(j, "job_id", r.job_id);
  soft(j, "for", r.for_);
}

void to_json(json& j, const SwitchSet& r) { j = {{"attempt", r.attempt}, {"for", r.for_}}; }
void from_json(const json& j, SwitchSet& r) {
  read(j, "attempt", r.attempt);
  read(j, "for", r.for_);
}

void to_json(json& j, const SwitchCleared& r) { j = {{"attempt", r.attempt}, {"removed", r.removed}}; }
void from_json(const json& j, SwitchCleared& r) {
  read(j, "attempt", r.attempt);
  soft(j, "removed", r.removed);
}

void to_json(json& j, const Exclude& r) {
  j = {{"attempt", r.attempt}, {"node", r.node}, {"reason", r.reason}, {"until", r.until}};
  if (r.first_evidence) j.update({{"rule", "first_evidence"}, {"rank", r.rank}, {"step", r.step}});
}
void from_json(const json& j, Exclude& r) {
  const auto at = j.find("attempt");
  r.attempt = at != j.end() && at->is_number_integer() ? at->get<int>() : 0;
  read(j, "node", r.node);
  read(j, "reason", r.reason);
  read(j, "until", r.until);
  r.first_evidence = j.value("rule", "") == "first_evidence";
  read(j, "rank", r.rank);
  read(j, "step", r.step);
}

void to_json(json& j, const ExclusionLifted& r) {
  j = {{"attempt", r.attempt}, {"lifted", r.lifted}, {"rank", r.rank}, {"step", r.step}, {"tolerance", r.tolerance},
       {"reason", r.reason}};
}
void from_json(const json& j, ExclusionLifted& r) {
  soft(j, "attempt", r.attempt);
  read(j, "lifted", r.lifted);
  read(j, "rank", r.rank);
  read(j, "step", r.step);
  read(j, "tolerance", r.tolerance);
  soft(j, "reason", r.reason);
}

void to_json(json& j, const DuplicateCancelled& r) {
  j = {{"attempt", r.attempt}, {"job_id", r.job_id}, {"state", r.state}, {"attempt_job", r.attempt_job}, {"revived", r.revived}};
}
void from_json(const json& j, DuplicateCancelled& r) {
  soft(j, "attempt", r.attempt);
  soft(j, "job_id", r.job_id);
  soft(j, "state", r.state);
  soft(j, "attempt_job", r.attempt_job);
  soft(j, "revived", r.revived);
}

}  // namespace mlsup::engine::records
