#include "report/facts.h"

#include <algorithm>
#include <map>

#include "decide/classes.h"
#include "decide/ledger.h"
#include "views/status_view.h"
#include "util/json.h"

namespace mlsup::report {
namespace {

using nlohmann::json;

// The `ended` record of each attempt, by its number.
std::map<int, const json*> ended_records(const std::vector<engine::JournalRecord>& records) {
  std::map<int, const json*> out;
  for (const auto& r : records)
    if (r.type == "ended" && r.data.is_object())
      out[static_cast<int>(util::number_field(r.data, "attempt"))] = &r.data;
  return out;
}

// How an attempt still open stands: not yet submitted, waiting in the queue, or running.
std::string open_ending(const engine::AttemptState& a, bool current, const std::string& job_state) {
  if (!a.job_id) return "not_submitted";
  return current && job_state == "PENDING" ? "pending" : "running";
}

// One attempt from its state, its span (status's) and its ending record.
AttemptFacts attempt_facts(const engine::AttemptState& a, const engine::AttemptSpan& span, const json* ended, bool current,
                           const std::string& job_state) {
  AttemptFacts f{.number = a.number, .start = span.start, .end = span.end, .open = !a.ended};
  if (a.job_id) f.job_id = *a.job_id;
  f.ending = a.ended ? (a.end_class ? std::string(decide::class_name(*a.end_class)) : "unknown")
                     : open_ending(a, current, job_state);
  if (ended) {
    f.nodes = util::string_field(*ended, "nodes");
    f.action = util::string_field(*ended, "action");
    f.reason = util::string_field(*ended, "reason");
    f.evidence_rule = util::string_field(*ended, "evidence_rule");
    f.evidence_quote = util::string_field(*ended, "evidence_quote");
  }
  f.failure = span.failed;
  f.from_step = a.resume_step;
  f.to_step = a.resume_step + span.done;
  f.kept = span.kept;
  f.lost = engine::time_lost(span);  // status's lost_to_failures, attempt by attempt
  return f;
}

// What runs now, in words: the state, then the open attempt and its job, or what keeps the run from starting.
std::string now_words(const RunInput& in, long long step) {
  const auto* a = in.state.current();
  std::string detail;
  if (!in.gate.empty()) detail = in.gate;
  else if (in.state.finished_code) detail = in.state.finished_reason;
  else if (a && !a->ended) {
    detail = "attempt " + std::to_string(a->number) +
             (a->job_id ? ", job " + std::to_string(*a->job_id) : std::string(", not submitted yet"));
    if (a->job_id && !in.job_state.empty()) detail += " " + in.job_state;
    if (step >= 0) detail += ", step " + std::to_string(step);
  } else if (a && a->end_class)
    detail = "attempt " + std::to_string(a->number) + " ended " + std::string(decide::class_name(*a->end_class)) +
             "; the next is to be submitted";
  return detail.empty() ? in.state_name : in.state_name + ": " + detail;
}

json attempt_json(const AttemptFacts& a) {
  json j = {{"number", a.number}, {"job_id", a.job_id ? json(*a.job_id) : json(nullptr)}, {"nodes", a.nodes},
          {"start", a.start}, {"end", a.end}, {"open", a.open}, {"ending", a.ending}, {"action", a.action},
          {"reason", a.reason}, {"failure", a.failure}, {"from_step", a.from_step}, {"to_step", a.to_step},
          {"kept", a.kept}, {"lost", a.lost}};
  if (!a.evidence_rule.empty()) j.update({{"evidence_rule", a.evidence_rule}, {"evidence_quote", a.evidence_quote}});
  return j;
}

json run_json(const RunFacts& r) {
  json j = {{"run", r.run}, {"config", r.config}, {"state", r.state}, {"now", r.now},
            {"step", r.step >= 0 ? json(r.step) : json(nullptr)}, {"steps_gained", r.steps_gained},
            {"recomputed_steps", r.recomputed}, {"failures", r.failures}, {"lost_to_failures", r.lost},
            {"time", r.time}, {"advice", r.advice}, {"runway", r.runway}, {"attempts", json::array()}, {"exclusions", json::array()}};
  for (const auto& a : r.attempts) j["attempts"].push_back(attempt_json(a));
  for (const auto& e : r.exclusions)
    j["exclusions"].push_back({{"node", e.node}, {"attempt", e.attempt > 0 ? json(e.attempt) : json(nullptr)},
                               {"reason", e.reason}, {"since", e.since}, {"until", e.until}, {"gpus", e.gpus},
                               {"ended_by", e.ended_by.empty() ? json(nullptr) : json(e.ended_by)}});
  return j;
}

}  // namespace

RunFacts run_facts(const RunInput& in, const Window& w) {
  const auto& s = in.state;
  RunFacts out{.run = in.run, .config = in.config, .state = in.state_name};
  const auto spans = engine::attempt_spans(s, in.current_step, w.until);
  const auto ended = ended_records(in.records);
  for (std::size_t i = 0; i < spans.size() && i < s.attempts.size(); ++i) {
    if (spans[i].end < w.since || spans[i].start > w.until) continue;  // outside the window
    const auto e = ended.find(s.attempts[i].number);
    auto a = attempt_facts(s.attempts[i], spans[i], e == ended.end() ? nullptr : e->second, i + 1 == s.attempts.size(),
                           in.job_state);
    out.steps_gained += a.kept;
    out.recomputed += a.to_step - a.from_step - a.kept;
    out.failures += a.failure ? 1 : 0;
    out.lost += a.lost;
    out.attempts.push_back(std::move(a));
  }
  for (std::size_t i = 0; i < s.ledger.size(); ++i) {
    const auto& e = s.ledger[i];
    if (e.since < w.since || e.since > w.until) continue;
    out.exclusions.push_back(
        {e.node, i < s.ledger_attempts.size() ? s.ledger_attempts[i] : 0, e.reason, e.since, e.until, e.gpus, e.ended_by});
  }
  out.step = in.current_step;
  out.now = now_words(in, out.step);
  out.time = engine::time_figures(spans, s, w.until);
  out.advice = in.advice;
  out.runway = in.runway;
  return out;
}

std::string exclusion_text(const ExclusionFacts& e) { return decide::exclusion_words(e.reason, e.gpus, e.ended_by); }

json to_json(const Report& r) {
  json j = {{"since", r.window.since}, {"until", r.window.until}, {"runs", json::array()}};
  for (const auto& run : r.runs) j["runs"].push_back(run_json(run));
  return j;
}

}  // namespace mlsup::report
