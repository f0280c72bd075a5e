// Every field of the state, written and read by name: one put/get pair per type, the structs' fields
// listed once in a visit() each, so that writing and reading cannot disagree.
#include "state/snapshot.h"

#include <set>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace mlsup::engine {
namespace {
using nlohmann::json;

// A field read into v from j[key]; throws when it is missing or of another type.
template <class T>
void get(const json& j, const char* key, T& v);

// One value as JSON, and back.
template <class T>
json put(const T& v);
template <class T>
void take(const json& j, T& v);
template <class T>
json put_row(const T& v);
template <class T>
void take_row(const json& j, T& v);

// The fields of each struct, visited as (key, member) pairs by writer and reader alike.
template <class S, class F>
void visit(S& a, F&& f)
  requires std::is_same_v<std::remove_const_t<S>, AttemptState>
{
  f("number", a.number), f("tag", a.tag), f("resume_from", a.resume_from), f("resume_step", a.resume_step);
  f("exclude", a.exclude), f("signal_lead", a.signal_lead), f("debug", a.debug), f("relaxed_at", a.relaxed_at), f("relaxed", a.relaxed);
  f("intent_time", a.intent_time), f("job_id", a.job_id), f("submit_failures", a.submit_failures);
  f("failed_submissions", a.failed_submissions), f("submissions", a.submissions), f("chain", a.chain);
  f("task_job_id", a.task_job_id), f("in_job", a.in_job), f("step_claimed", a.step_claimed), f("step_nodes", a.step_nodes);
  f("steps_only", a.steps_only), f("cancel_reason", a.cancel_reason), f("cancel_evidence", a.cancel_evidence);
  f("pending_alerted", a.pending_alerted);
  f("held", a.held), f("held_for", a.held_for), f("sbatch", a.sbatch), f("sbatch_awaited", a.sbatch_awaited);
  f("uncertain", a.uncertain), f("spares_dropped", a.spares_dropped), f("switch_set_at", a.switch_set_at);
  f("switch_for", a.switch_for), f("ended", a.ended), f("end_class", a.end_class), f("end_step", a.end_step);
  f("progressed", a.progressed), f("explained", a.explained);
  f("submitted_at", a.submitted_at), f("ended_at", a.ended_at), f("step_times", a.step_times);
  f("first_step_at", a.first_step_at), f("last_progress_at", a.last_progress_at);
  f("end_slurm_state", a.end_slurm_state), f("end_nodes", a.end_nodes);
}
template <class S, class F>
void visit(S& s, F&& f)
  requires std::is_same_v<std::remove_const_t<S>, CampaignState>
{
  f("campaign_id", s.campaign_id), f("attempts", s.attempts), f("earlier", s.earlier), f("restarts", s.restarts);
  f("restarts_earlier", s.restarts_earlier), f("ledger", s.ledger);
  f("ledger_attempts", s.ledger_attempts), f("failures", s.failures), f("rule_exclusions", s.rule_exclusions);
  f("training_faults", s.training_faults), f("next_submit_at", s.next_submit_at), f("quarantined", s.quarantined);
  f("quarantined_in_a_row", s.quarantined_in_a_row), f("proven_checkpoint", s.proven_checkpoint);
  f("proven_step", s.proven_step), f("awaiting_submit", s.awaiting_submit), f("finished_code", s.finished_code);
  f("finished_reason", s.finished_reason), f("requests_done", s.requests_done), f("paused", s.paused);
  f("pause_now", s.pause_now), f("cancel_requested", s.cancel_requested), f("resume_point", s.resume_point);
  f("resume_point_step", s.resume_point_step), f("began", s.began), f("finished_at", s.finished_at);
}
template <class S, class F>
void visit(S& e, F&& f)
  requires std::is_same_v<std::remove_const_t<S>, EarlierAttempts>
{
  f("count", e.count), f("useful", e.useful), f("lost", e.lost), f("recomputed", e.recomputed);
}
template <class S, class F>
void visit(S& r, F&& f)
  requires std::is_same_v<std::remove_const_t<S>, SbatchRun>
{
  f("pid", r.pid), f("start_ticks", r.start_ticks), f("host", r.host), f("boot_id", r.boot_id), f("time", r.time);
  f("server_time", r.server_time);
}
template <class S, class F>
void visit(S& r, F&& f)
  requires std::is_same_v<std::remove_const_t<S>, CancelEvidence>
{
  f("rule", r.rule), f("class", r.cls), f("action", r.action), f("quote", r.quote), f("line", r.line);
}
template <class S, class F>
void visit(S& r, F&& f)
  requires std::is_same_v<std::remove_const_t<S>, decide::SubmitFailure>
{
  f("time", r.time), f("kind", r.kind), f("message", r.message);
}
template <class S, class F>
void visit(S& r, F&& f)
  requires std::is_same_v<std::remove_const_t<S>, decide::Restart>
{
  f("time", r.time), f("class", r.cls), f("progressed", r.progressed), f("new_exclusion", r.new_exclusion);
  f("fell_back", r.fell_back);
}
template <class S, class F>
void visit(S& r, F&& f)
  requires std::is_same_v<std::remove_const_t<S>, decide::RestartCount>
{
  f("class", r.cls), f("count", r.count);
}
template <class S, class F>
void visit(S& r, F&& f)
  requires std::is_same_v<std::remove_const_t<S>, decide::Exclusion>
{
  f("node", r.node), f("reason", r.reason), f("since", r.since), f("until", r.until), f("gpus", r.gpus);
  f("ended_by", r.ended_by);
}
template <class S, class F>
void visit(S& r, F&& f)
  requires std::is_same_v<std::remove_const_t<S>, decide::PastFailure>
{
  f("time", r.time), f("nodes", r.nodes);
}
template <class S, class F>
void visit(S& r, F&& f)
  requires std::is_same_v<std::remove_const_t<S>, decide::RuleExclusion>
{
  f("entry", r.entry), f("node", r.failure.node), f("rank", r.failure.rank), f("step", r.failure.step);
}
template <class S, class F>
void visit(S& r, F&& f)
  requires std::is_same_v<std::remove_const_t<S>, decide::TrainingFault>
{
  f("rank", r.rank), f("step", r.step), f("tolerance", r.tolerance);
}

template <class T>
concept Visited = requires(T& t) { visit(t, [](const char*, auto&) {}); };
template <class T>
struct IsVector : std::false_type {};
template <class T>
struct IsVector<std::vector<T>> : std::true_type {};
template <class T>
struct IsOptional : std::false_type {};
template <class T>
struct IsOptional<std::optional<T>> : std::true_type {};

// An element of a list: a struct as the array of its fields' values in visit() order (a long list,
// such as every restart of a long campaign, is then a third of its size as objects), else as put().
template <class T>
json put_row(const T& v) {
  if constexpr (Visited<T>) {
    json a = json::array();
    visit(v, [&](const char*, const auto& m) { a.push_back(put(m)); });
    return a;
  } else {
    return put(v);
  }
}
template <class T>
void take_row(const json& j, T& v) {
  if constexpr (Visited<T>) {
    if (!j.is_array()) throw std::invalid_argument("not a row");
    std::size_t i = 0;
    visit(v, [&](const char*, auto& m) { take(j.at(i++), m); });
    if (i != j.size()) throw std::invalid_argument("a row of another length");
  } else {
    take(j, v);
  }
}

template <class T>
json put(const T& v) {
  if constexpr (Visited<T>) {
    json j = json::object();
    visit(v, [&](const char* key, const auto& m) { j[key] = put(m); });
    return j;
  } else if constexpr (std::is_same_v<T, decide::EndClass>) {
    return std::string(decide::class_name(v));
  } else if constexpr (std::is_same_v<T, slurm::ErrorKind>) {
    return std::string(slurm::error_kind_name(v));
  } else if constexpr (IsOptional<T>::value) {
    return v ? put(*v) : json(nullptr);
  } else if constexpr (IsVector<T>::value || std::is_same_v<T, std::set<std::string>>) {
    json a = json::array();
    for (const auto& x : v) a.push_back(put_row(x));
    return a;
  } else {
    return json(v);
  }
}

template <class T>
void take(const json& j, T& v) {
  if constexpr (Visited<T>) {
    if (!j.is_object()) throw std::invalid_argument("not an object");
    visit(v, [&](const char* key, auto& m) { get(j, key, m); });
  } else if constexpr (std::is_same_v<T, decide::EndClass>) {
    const auto c = decide::class_from_name(j.get<std::string>());
    if (!c) throw std::invalid_argument("not a class");
    v = *c;
  } else if constexpr (std::is_same_v<T, slurm::ErrorKind>) {
    v = slurm::error_kind_from_name(j.get<std::string>());
  } else if constexpr (IsOptional<T>::value) {
    if (j.is_null()) return (void)(v = std::nullopt);
    typename T::value_type x{};
    take(j, x);
    v = std::move(x);
  } else if constexpr (IsVector<T>::value) {
    if (!j.is_array()) throw std::invalid_argument("not an array");
    v.clear();
    v.reserve(j.size());
    for (const auto& e : j) take_row(e, v.emplace_back());
  } else if constexpr (std::is_same_v<T, std::set<std::string>>) {
    v.clear();
    for (const auto& e : j) v.insert(e.get<std::string>());
  } else {
    v = j.get<T>();
  }
}

template <class T>
void get(const json& j, const char* key, T& v) {
  take(j.at(key), v);
}

// A member added to one of these must be added to its visit() above, and kStateCodecVersion raised:
// the sizes fail the build as a reminder (then set them anew).
static_assert(sizeof(AttemptState) == 736 && sizeof(CampaignState) == 520 && sizeof(EarlierAttempts) == 32 && sizeof(SbatchRun) == 96 && sizeof(CancelEvidence) == 136,
              "the state changed: list the new member in state/snapshot.cpp and raise kStateCodecVersion");

}  // namespace

json state_to_json(const CampaignState& s) {
  json j = put(s);
  j["codec"] = kStateCodecVersion;
  return j;
}

std::optional<CampaignState> state_from_json(const json& j) {
  try {
    if (!j.is_object() || j.value("codec", 0) != kStateCodecVersion) return std::nullopt;
    CampaignState s;
    take(j, s);
    return s;
  } catch (const std::exception&) {  // nlohmann's type errors and ours: not a snapshot of this version
    return std::nullopt;
  }
}

}  // namespace mlsup::engine
