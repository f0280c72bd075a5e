#include "views/status_view.h"

#include <algorithm>
#include <cmath>

#include "decide/classes.h"
#include "decide/signal_lead.h"
#include "observe/heartbeat.h"

namespace mlsup::engine {
namespace {

using nlohmann::json;

// The running attempt's heartbeat as memory holds it; nullptr once it ended or when memory is about another.
const HeartbeatSet* current_heartbeat(const CampaignState& s, const Memory& m) {
  const auto* a = s.current();
  return a && !a->ended && m.attempt == a->number ? &m.heartbeat : nullptr;
}

// The step the campaign stands at and where it was read; nullopt before the first attempt.
std::optional<std::pair<long long, std::string>> current_step(const CampaignState& s, const Memory& m) {
  const auto* a = s.current();
  if (!a) return std::nullopt;
  if (a->ended && a->end_step >= 0) return std::pair{a->end_step, std::string("ended")};
  if (const auto* hb = current_heartbeat(s, m); hb && !a->ended) {
    const long long step = combined(*hb).step;
    if (step >= 0) return std::pair{step, std::string("heartbeat")};
  }
  return std::pair{a->resume_step, std::string("resume_point")};
}

// Steps per second over the steps seen (first to last), and the seconds they span; nullopt with fewer than two.
std::optional<std::pair<double, double>> step_rate(const CampaignState& s, const Memory& m) {
  const auto* a = s.current();
  if (!a || a->ended || !current_heartbeat(s, m) || m.steps.size() < 2) return std::nullopt;
  const double span = m.steps.back().at - m.steps.front().at;
  if (span <= 0) return std::nullopt;
  return std::pair{static_cast<double>(m.steps.back().step - m.steps.front().step) / span, span};
}

json or_null(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

}  // namespace

RunningTimes running_times(const CampaignState& s, const Memory& m, const Clocks& now) {
  const auto* hb = current_heartbeat(s, m);
  if (!hb) return {};
  if (m.first_step_at <= 0) return {};
  return {m.first_step_wall > 0 ? m.first_step_wall : wall_of(m.first_step_at, now),
          m.last_progress_wall > 0 ? m.last_progress_wall : wall_of(combined(*hb).progress_at, now)};
}

namespace {

// The seconds an attempt spent stepping (timed), else its span.
double stepping(const AttemptSpan& a) {
  if (!a.timed) return std::max(0.0, a.end - a.start);
  return a.first_step > 0 ? std::max(0.0, a.last_progress - a.first_step) : 0;
}

}  // namespace

double kept_time(const AttemptSpan& a) {
  return a.done > 0 ? stepping(a) * static_cast<double>(a.kept) / static_cast<double>(a.done) : 0;
}

double time_lost(const AttemptSpan& a) {
  if (!a.failed) return 0;
  if (!a.timed) return std::max(0.0, a.end - a.start) - kept_time(a) + a.gap;
  const double recomputed = stepping(a) - kept_time(a);
  const double from = a.last_progress > 0 ? a.last_progress : a.end;  // the silence before detection counts
  return recomputed + std::max(0.0, a.lost_until - from);
}

// The time figures (README: "time lost", "goodput") over the attempts' spans and those t let go.
json time_figures(const std::vector<AttemptSpan>& spans, const CampaignState& t, double now) {
  double useful = t.earlier.useful, lost = t.earlier.lost;
  long long recomputed = t.earlier.recomputed;
  for (const auto& a : spans) {
    useful += kept_time(a);
    recomputed += a.done - a.kept;
    lost += time_lost(a);
  }
  const double elapsed = (t.finished_at > 0 ? t.finished_at : now) - t.began;
  return {{"began", t.began > 0 ? json(t.began) : json(nullptr)}, {"elapsed", t.began > 0 ? json(elapsed) : json(nullptr)},
          {"useful", useful}, {"lost_to_failures", lost}, {"recomputed_steps", recomputed},
          {"goodput", t.began > 0 && elapsed > 0 ? json(useful / elapsed) : json(nullptr)}};
}

namespace {

// The pre-timeout signal's lead: configured, in force for the current attempt, what the next would get,
// what a save and a step need as measured, and whether a fixed lead is shorter than that.
json signal_lead_json(const config::Config& c, const CampaignState& s, const PaceFigures& pace) {
  const long long configured = c.slurm.signal_lead.value.count();
  const long long limit = c.slurm.time_limit ? c.slurm.time_limit->count() : 0;
  const auto needed = decide::needed_lead(pace.save_p95, pace.step_p95);
  const auto sized = c.slurm.signal_lead.automatic ? decide::auto_lead(pace.save_p95, pace.step_p95, limit) : std::nullopt;
  const auto* a = s.current();
  return {{"configured", configured},
          {"auto", c.slurm.signal_lead.automatic},
          {"current", a ? json(a->signal_lead > 0 ? a->signal_lead : configured) : json(nullptr)},
          {"next", sized.value_or(c.slurm.signal_lead.automatic && limit > 0 ? std::min(configured, limit / 2) : configured)},
          {"needed", or_null(needed)},
          {"short", !c.slurm.signal_lead.automatic && needed && static_cast<double>(configured) < *needed},
          {"warning", short_lead_warning(c, pace).value_or("")}};
}

}  // namespace

std::vector<AttemptSpan> attempt_spans(const CampaignState& s, long long current_step, double now,
                                       const RunningTimes& running) {
  const double stop = s.finished_at > 0 ? s.finished_at : now;
  std::vector<AttemptSpan> out;
  for (std::size_t i = 0; i < s.attempts.size(); ++i) {
    const auto& a = s.attempts[i];
    const auto* next = i + 1 < s.attempts.size() ? &s.attempts[i + 1] : nullptr;
    AttemptSpan span{.number = a.number};
    span.start = a.submitted_at > 0 ? a.submitted_at : a.intent_time;
    span.end = a.ended && a.ended_at > 0 ? a.ended_at : stop;
    long long reached = a.ended ? a.end_step : (next ? -1 : current_step);
    if (reached < 0) reached = a.resume_step;
    span.done = std::max(0LL, reached - a.resume_step);
    span.kept = next ? std::clamp(next->resume_step - a.resume_step, 0LL, span.done) : span.done;
    span.failed = a.ended && a.end_class && decide::row(*a.end_class).backoff;
    if (a.ended) {
      const double resumed = next ? (next->submitted_at > 0 ? next->submitted_at : next->intent_time) : stop;
      span.gap = std::max(0.0, resumed - span.end);
    }
    if (a.ended && a.step_times) {
      span.timed = true;
      span.first_step = a.first_step_at;
      span.last_progress = a.last_progress_at;
    } else if (!a.ended && !next && (running.first_step > 0 || running.last_progress > 0)) {
      span.timed = true;
      span.first_step = running.first_step;
      span.last_progress = running.last_progress;
    }
    out.push_back(span);
  }
  // A failure's loss runs until the training steps again: the next attempt's first step, else its end (its
  // own loss goes on from there), else the campaign's end or now.
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (!out[i].failed) continue;
    const auto* next = i + 1 < out.size() ? &out[i + 1] : nullptr;
    out[i].lost_until = !next                                  ? stop
                        : next->timed && next->first_step > 0 ? next->first_step
                        : s.attempts[i + 1].ended             ? next->end
                                                               : stop;
  }
  return out;
}

void fold_earlier(CampaignState& s, std::size_t keep) {
  std::size_t drop = 0;  // those whose figures are final: ended, and so is the attempt after them
  while (drop + keep < s.attempts.size() && s.attempts[drop].ended && s.attempts[drop + 1].ended) ++drop;
  if (s.attempts.size() - drop > 4 * keep) drop = s.attempts.size() - keep;  // one never ended: held memory stays bounded
  if (drop == 0) return;
  const auto spans = attempt_spans(s, -1, 0);
  for (std::size_t i = 0; i < drop; ++i) {
    s.earlier.useful += kept_time(spans[i]);
    s.earlier.lost += time_lost(spans[i]);
    s.earlier.recomputed += spans[i].done - spans[i].kept;
  }
  s.earlier.count += static_cast<int>(drop);
  s.attempts.erase(s.attempts.begin(), s.attempts.begin() + static_cast<long>(drop));
  s.attempts.shrink_to_fit();  // what a long journal's replay grew is given back
}

json status_figures(const StatusInputs& in) {
  const auto& s = in.state;
  json j;
  const auto step = current_step(s, in.memory);
  j["step"] = step ? json(step->first) : json(nullptr);
  j["step_source"] = step ? json(step->second) : json(nullptr);
  const auto rate = step_rate(s, in.memory);
  j["step_rate"] = rate ? json(rate->first) : json(nullptr);
  j["step_rate_window"] = rate ? json(rate->second) : json(nullptr);
  const long long target = in.config.target_steps;
  j["target_steps"] = target > 0 ? json(target) : json(nullptr);
  std::optional<double> eta;
  if (target > 0 && step && step->first >= target) eta = 0.0;
  else if (target > 0 && step && rate && rate->first > 0) eta = static_cast<double>(target - step->first) / rate->first;
  j["eta"] = or_null(eta);
  j["eta_at"] = eta ? json(in.now.wall + *eta) : json(nullptr);
  j["checkpoint"] = nullptr;
  if (const auto& c = in.checkpoint)
    j["checkpoint"] = {{"path", c->path}, {"step", c->step}, {"written", c->written > 0 ? json(c->written) : json(nullptr)},
                       {"age", c->written > 0 ? json(in.now.wall - c->written) : json(nullptr)}};
  j["heartbeat_age"] = nullptr;
  if (const auto* hb = current_heartbeat(s, in.memory); hb && combined(*hb).changed_at > 0)
    j["heartbeat_age"] = std::max(0.0, in.now.mono - combined(*hb).changed_at);
  const auto& cal = in.memory.calibration;
  const auto in_force = settings_in_force(in.config.heartbeat, in.config.poll_interval, cal);
  j["hang_timeout"] = {{"steady", in_force.steady_timeout.count()},
                       {"configured", in.config.heartbeat.steady_timeout.count()},
                       {"calibrated", is_calibrated(in_force, in.config.heartbeat)},
                       {"steps_seen", cal.steps}};
  const auto pace = pace_figures(in.memory.pace);
  j["pace"] = {{"step_p50", or_null(pace.step_p50)}, {"step_p95", or_null(pace.step_p95)}, {"steps_measured", pace.steps},
               {"save_p50", or_null(pace.save_p50)}, {"save_p95", or_null(pace.save_p95)}, {"saves_measured", pace.saves}};
  j["signal_lead"] = signal_lead_json(in.config, s, pace);
  j["restarts_by_class"] = json::object();
  long long restarts = 0;
  const auto count = [&](decide::EndClass cls, int n) {
    auto& by = j["restarts_by_class"][std::string(decide::class_name(cls))];
    by = (by.is_null() ? 0 : by.get<int>()) + n;
    restarts += n;
  };
  for (const auto& e : s.restarts_earlier) count(e.cls, e.count);
  for (const auto& r : s.restarts) count(r.cls, 1);
  j["restarts"] = restarts;
  const auto spans = attempt_spans(s, step ? step->first : -1, in.now.wall, running_times(s, in.memory, in.now));
  j["time"] = time_figures(spans, s, in.now.wall);
  return j;
}

std::optional<std::string> short_lead_warning(const config::Config& c, const PaceFigures& pace) {
  const auto needed = decide::needed_lead(pace.save_p95, pace.step_p95);
  const auto configured = static_cast<double>(c.slurm.signal_lead.value.count());
  if (c.slurm.signal_lead.automatic || !needed || configured >= *needed) return std::nullopt;
  return "slurm.signal_lead " + human_duration(configured) + " is shorter than a save and a step take as measured (" +
         human_duration(*needed) + ", p95): a time limit would cut the save off; set it longer, or auto";
}

std::string human_duration(double seconds) {
  if (!(seconds >= 0) || seconds > 1e10) return "?";
  const auto s = static_cast<long long>(std::llround(seconds));
  const auto two = [](long long v) { return (v < 10 ? "0" : "") + std::to_string(v); };
  if (s < 60) return std::to_string(s) + "s";
  if (s < 3600) return std::to_string(s / 60) + "m" + two(s % 60) + "s";
  if (s < 86400) return std::to_string(s / 3600) + "h" + two(s % 3600 / 60) + "m";
  return std::to_string(s / 86400) + "d" + two(s % 86400 / 3600) + "h";
}

}  // namespace mlsup::engine
