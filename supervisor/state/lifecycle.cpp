#include "state/lifecycle.h"

#include <algorithm>
#include <array>

#include "decide/exit_codes.h"
#include "util/json.h"
#include "util/strings.h"

namespace mlsup::engine {
namespace {

using nlohmann::json;

using L = Lifecycle;

constexpr std::array<std::string_view, 4> kVerbs = {"resume", "pause", "cancel", "unexclude"};
constexpr std::array<std::string_view, 6> kLifecycleNames = {"not started", "running", "paused",
                                                             "completed",   "stopped", "cancelled"};

// What a verb meets in a state: the code to refuse with (0: it goes ahead, or nothing is left to do
// when said is not empty) and what to say.
struct Rule {
  Verb verb;
  Lifecycle state;
  int code;
  std::string_view said;  // "" when the request goes ahead
};

constexpr std::array<Rule, 14> kRules{{
    {Verb::Resume, L::NotStarted, decide::kNotStopped,
     "has not started: there is nothing to resume (`mlsup run` starts it)"},
    {Verb::Resume, L::Running, decide::kNotStopped,
     "is running: there is nothing to resume (`mlsup pause` or `mlsup stop` first)"},
    {Verb::Resume, L::Completed, decide::kNotStopped,
     "has completed: there is nothing to resume (a new campaign needs a state and checkpoint directory of its own)"},
    {Verb::Resume, L::Paused, 0, ""},
    {Verb::Resume, L::Stopped, 0, ""},
    {Verb::Resume, L::Cancelled, 0, ""},
    {Verb::Pause, L::NotStarted, 0, ""},
    {Verb::Pause, L::Running, 0, ""},
    {Verb::Pause, L::Completed, decide::kAlreadyEnded, "has completed: there is nothing to pause"},
    {Verb::Pause, L::Stopped, decide::kAlreadyEnded, "has stopped: there is nothing to pause (`mlsup resume` reopens it)"},
    {Verb::Pause, L::Cancelled, decide::kAlreadyEnded,
     "was cancelled: there is nothing to pause (`mlsup resume` reopens it)"},
    {Verb::Cancel, L::Completed, decide::kAlreadyEnded, "has completed: there is nothing to cancel"},
    {Verb::Cancel, L::Stopped, decide::kAlreadyEnded, "has stopped already: its jobs are gone"},
    {Verb::Cancel, L::Cancelled, decide::kAlreadyEnded, "was cancelled already"},
}};

// unexclude: NODE has no live exclusion at the request's time; the message names the live ones.
std::optional<Refusal> not_excluded(const CampaignState& s, const Request& r) {
  const auto live = decide::excluded_nodes(s.ledger, r.time, -1);
  if (std::find(live.begin(), live.end(), r.node) != live.end()) return std::nullopt;
  return Refusal{decide::kNotExcluded,
                 r.node + " is not excluded now; " +
                     (live.empty() ? std::string("the campaign has no live exclusion")
                                   : "the live exclusions are " + util::join(live, ", ")) +
                     " (`mlsup exclusions` lists them with their evidence); nothing was changed"};
}

}  // namespace

std::string_view verb_name(Verb v) { return kVerbs[static_cast<std::size_t>(v)]; }

json to_json(const Request& r) {
  return {{"verb", std::string(verb_name(r.verb))}, {"now", r.now}, {"from", r.from}, {"from_step", r.from_step},
          {"node", r.node}, {"why", r.why}, {"by", r.by}, {"time", r.time}};
}

std::optional<Request> request_from_json(const std::string& id, const json& j) {
  const std::string verb = util::string_field(j, "verb");
  for (std::size_t i = 0; i < kVerbs.size(); ++i) {
    if (kVerbs[i] != verb) continue;
    Request r{id, static_cast<Verb>(i)};
    r.now = j.contains("now") && j["now"].is_boolean() && j["now"].get<bool>();
    r.from = util::string_field(j, "from");
    r.from_step = static_cast<long long>(util::number_field(j, "from_step"));
    r.node = util::string_field(j, "node");
    r.why = util::string_field(j, "why");
    r.by = util::string_field(j, "by", "?");
    r.time = util::number_field(j, "time");
    return r;
  }
  return std::nullopt;
}

Lifecycle lifecycle_of(const CampaignState& s) {
  if (s.finished_code)
    return *s.finished_code == decide::kCompleted   ? L::Completed
           : *s.finished_code == decide::kCancelled ? L::Cancelled
                                                    : L::Stopped;
  if (s.paused) return L::Paused;
  return s.attempts.empty() ? L::NotStarted : L::Running;
}

std::string_view lifecycle_name(Lifecycle l) { return kLifecycleNames[static_cast<std::size_t>(l)]; }

std::string state_name(const CampaignState& s) { return std::string(lifecycle_name(lifecycle_of(s))); }

std::optional<Refusal> refuse(const CampaignState& s, const Request& r) {
  if (r.verb == Verb::Unexclude) return not_excluded(s, r);
  const Lifecycle state = lifecycle_of(s);
  for (const auto& rule : kRules)
    if (rule.verb == r.verb && rule.state == state && rule.code != 0)
      return Refusal{rule.code, "the campaign " + std::string(rule.said)};
  const AttemptState* a = s.current();
  if (r.verb == Verb::Resume && !r.from.empty() && a && !a->ended)
    return Refusal{decide::kNotStopped, "the campaign's attempt " + std::to_string(a->number) +
                                            " has not ended: --from applies to a new attempt only (`mlsup resume` "
                                            "without it releases the pause)"};
  if (r.verb == Verb::Pause && s.paused && (s.pause_now || !r.now))
    return Refusal{decide::kCompleted, "the campaign is paused already; nothing was changed"};
  if (r.verb == Verb::Cancel && s.cancel_requested)
    return Refusal{decide::kCompleted, "the campaign is being cancelled already; nothing was changed"};
  return std::nullopt;
}

std::string what_happens(const CampaignState& s, const Request& r) {
  const AttemptState* a = s.current();
  const bool live = a && !a->ended && a->job_id;
  switch (r.verb) {
    case Verb::Resume:
      return std::string(live ? "the pause ends: a held job is released" : "the campaign is reopened") +
             (r.from.empty() ? "" : ", the next attempt resumes from " + r.from) +
             "; budgets and the crash-loop count start afresh, the kill switch is cleared; the next `mlsup run` "
             "or `mlsup tick` carries the campaign on";
    case Verb::Pause:
      return std::string("nothing new starts until `mlsup resume`; a queued job is held") +
             (r.now ? ", a running one is asked through the kill switch to save and exit"
                    : ", a running one goes on");
    case Verb::Cancel:
      return std::string("the campaign ends now: ") +
             (live ? "its training is asked through the kill switch to save and exit, and its job is cancelled "
                     "(a queued one at once; a running one once it has exited, or after policy.stop_grace, longer when its "
                     "saves were measured longer, never while its heartbeat says it saves)"
                   : "it has no job in Slurm");
    case Verb::Unexclude:
      return r.node + "'s exclusion is lifted: the next attempt may run on it (a job already queued keeps its "
                      "--exclude); a new failure there may exclude it again";
  }
  return "";
}

}  // namespace mlsup::engine
