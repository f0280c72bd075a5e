#include "state/memory.h"

#include <algorithm>

namespace mlsup::engine {
namespace {

using nlohmann::json;

// j[key] when it has the type of fallback, else fallback: a damaged file never throws.
template <typename T>
T get(const json& j, const char* key, T fallback) {
  if (!j.is_object()) return fallback;
  const auto it = j.find(key);
  if (it == j.end()) return fallback;
  if constexpr (std::is_same_v<T, std::string>) {
    return it->is_string() ? it->get<std::string>() : fallback;
  } else if constexpr (std::is_same_v<T, bool>) {
    return it->is_boolean() ? it->get<bool>() : fallback;
  } else {
    return it->is_number() ? it->get<T>() : fallback;
  }
}

json heartbeat_json(const HeartbeatSet& set) {
  json files = json::object();
  for (const auto& [name, f] : set.files)
    files[name] = {{"content", f.content}, {"changed_at", f.changed_at}, {"progress_at", f.progress_at},
                   {"empty_reads", f.empty_reads}, {"first_step", f.first_step}};
  return {{"running_since", set.running_since}, {"files", files}};
}

HeartbeatSet heartbeat_from(const json& j) {
  HeartbeatSet set;
  set.running_since = get(j, "running_since", 0.0);
  // Each file's observation; a heartbeat.json of an older mlsup has only P's, at the top level.
  const json files = j.is_object() && j.contains("files") && j["files"].is_object() ? j["files"] : json{{"", j}};
  for (const auto& [name, f] : files.items()) {
    if (!f.is_object()) continue;
    auto seen = parse_heartbeat(get(f, "content", std::string()));
    seen.changed_at = get(f, "changed_at", 0.0);
    seen.progress_at = get(f, "progress_at", seen.waiting ? 0.0 : seen.changed_at);
    seen.empty_reads = get(f, "empty_reads", 0);
    seen.first_step = get(f, "first_step", -1LL);
    seen.running_since = set.running_since;
    set.files[name] = seen;
  }
  return set;
}

json deadline_json(const Deadline& d) { return {{"attempt", d.attempt}, {"count", d.count}, {"at", d.at}}; }

Deadline deadline_from(const json& j) { return {get(j, "attempt", 0), get(j, "count", 0), get(j, "at", 0.0)}; }

// A re-based time older than the clock itself: as old as can be said, and still not "never" (0).
constexpr double kEarliest = 1e-6;

// Applies fn to every mono time of m (zero stays zero: "never").
template <typename Fn>
void each_time(Memory& m, Fn fn) {
  for (double* t : {&m.heartbeat.running_since, &m.running_seen_at, &m.suspended_at, &m.pending_since, &m.unavailable_since, &m.checkpoints_looked_at,
                    &m.waited_on_probed_at, &m.pace.saving_since, &m.first_step_at,
                    &m.cancel.first_at, &m.cancel.next_at, &m.resubmit.at, &m.sbatch_retry.at, &m.slurm_failing_since})
    if (*t > 0) *t = std::max(kEarliest, fn(*t));
  for (auto& s : m.steps)
    if (s.at > 0) s.at = std::max(kEarliest, fn(s.at));
  for (auto& [name, pace] : m.stragglers)
    if (pace.slower_since > 0) pace.slower_since = std::max(kEarliest, fn(pace.slower_since));
  for (auto& [name, f] : m.heartbeat.files) {
    for (double* t : {&f.changed_at, &f.progress_at})
      if (*t > 0) *t = std::max(kEarliest, fn(*t));
    f.running_since = m.heartbeat.running_since;
  }
}

json stragglers_json(const std::map<std::string, decide::RankPace>& paces) {
  json out = json::object();
  for (const auto& [name, p] : paces)
    out[name] = {{"smoothed", p.smoothed}, {"step", p.step}, {"slower_since", p.slower_since}, {"told", p.told}};
  return out;
}

std::map<std::string, decide::RankPace> stragglers_from(const json& j) {
  std::map<std::string, decide::RankPace> out;
  if (!j.is_object()) return out;
  for (const auto& [name, p] : j.items())
    if (p.is_object()) out[name] = {get(p, "smoothed", -1.0), get(p, "step", -1LL), get(p, "slower_since", 0.0), get(p, "told", false)};
  return out;
}

json pace_json(const Pace& p) { return {{"steps", p.steps}, {"saves", p.saves}, {"saving_since", p.saving_since}}; }

std::vector<double> numbers_from(const json& j) {
  std::vector<double> out;
  if (j.is_array())
    for (const auto& v : j)
      if (v.is_number() && v.get<double>() >= 0) out.push_back(v.get<double>());
  if (out.size() > kPaceSamples) out.erase(out.begin(), out.end() - kPaceSamples);
  return out;
}

Pace pace_from(const json& j) {
  if (!j.is_object()) return {};
  return {numbers_from(j.value("steps", json())), numbers_from(j.value("saves", json())), get(j, "saving_since", 0.0)};
}

json steps_json(const std::vector<StepSeen>& steps) {
  json out = json::array();
  for (const auto& s : steps) out.push_back({s.at, s.step});
  return out;
}

std::vector<StepSeen> steps_from(const json& j) {
  std::vector<StepSeen> out;
  if (!j.is_array()) return out;
  for (const auto& s : j)
    if (s.is_array() && s.size() == 2 && s[0].is_number() && s[1].is_number_integer())
      out.push_back({s[0].get<double>(), s[1].get<long long>()});
  return out;
}

}  // namespace

void note_step(Memory& m, long long step, double now) {
  if (step < 0 || (!m.steps.empty() && m.steps.back().step == step)) return;
  m.steps.push_back({now, step});
  if (m.steps.size() <= 2) return;
  const auto old = std::find_if(m.steps.begin(), m.steps.end(), [&](const StepSeen& s) { return s.at >= now - kStepWindow; });
  const auto keep_from = std::min(old, m.steps.end() - 2);
  if (keep_from > m.steps.begin()) m.steps.erase(m.steps.begin(), keep_from);
}

void focus(Memory& m, int attempt) {
  if (m.attempt == attempt) return;
  const Memory fresh;
  m.attempt = attempt;
  m.heartbeat = fresh.heartbeat;
  m.steps.clear();
  m.running_seen_at = 0;
  m.running_nodes.clear();
  m.first_step_at = 0;
  m.first_step_wall = 0;
  m.last_progress_wall = 0;
  m.pace.saving_since = 0;  // a save the attempt before left unfinished is no measure
  m.suspended_at = 0;
  m.pending_since = 0;
  m.pending_reason.clear();
  m.unavailable_since = 0;
  m.checkpoints_looked_at = 0;
  m.waited_on_probed_at = 0;
  m.stragglers.clear();  // another job: other ranks on other nodes
  m.cancel = fresh.cancel;
  m.release_error.clear();
}

Memory decisions_of(Memory m, const config::HeartbeatSettings& heartbeat, config::Millis poll_interval) {
  const Memory fresh;
  m.clock_id.clear();
  m.saved_wall = m.saved_mono = 0;
  const auto in_force = settings_in_force(heartbeat, poll_interval, m.calibration).steady_timeout;
  m.calibration.longest = static_cast<double>(in_force.count());  // a longer silence alone changes nothing
  m.calibration.steps = std::min(m.calibration.steps, kCalibrateAfter);  // nor the count past calibration's
  m.pace.steps.clear();  // a save measured is kept at once
  m.pace.saving_since = 0;
  m.heartbeat = fresh.heartbeat;
  m.steps.resize(std::min<std::size_t>(m.steps.size(), 2));  // a rate once two steps were seen, at once
  for (auto& seen : m.steps) seen = {};
  m.running_seen_at = 0;
  m.last_progress_wall = 0;
  m.checkpoints_looked_at = 0;
  m.waited_on_probed_at = 0;
  for (auto& [name, pace] : m.stragglers) pace = {.told = pace.told};  // a straggler told is a decision: saved at once
  m.sized_path.clear();
  m.sized_bytes = m.sized_files = 0;
  m.duplicates_swept_at = 0;
  return m;
}

json to_json(const Memory& m) {
  const auto& c = m.cancel;
  return {{"version", 1},
          {"clock", {{"id", m.clock_id}, {"wall", m.saved_wall}, {"mono", m.saved_mono}}},
          {"calibration", {{"longest", m.calibration.longest}, {"steps", m.calibration.steps},
                           {"doublings", m.calibration.doublings}, {"doubled_in", m.calibration.doubled_in}}},
          {"pace", pace_json(m.pace)},
          {"attempt", m.attempt},
          {"heartbeat", heartbeat_json(m.heartbeat)},
          {"steps", steps_json(m.steps)},
          {"running_seen_at", m.running_seen_at},
          {"running_nodes", m.running_nodes},
          {"first_step_at", m.first_step_at},
          {"first_step_wall", m.first_step_wall},
          {"last_progress_wall", m.last_progress_wall},
          {"suspended_at", m.suspended_at},
          {"pending_since", m.pending_since},
          {"pending_reason", m.pending_reason},
          {"unavailable_since", m.unavailable_since},
          {"checkpoints_looked_at", m.checkpoints_looked_at},
          {"waited_on_probed_at", m.waited_on_probed_at},
          {"stragglers", stragglers_json(m.stragglers)},
          {"cancel", {{"sent", c.sent}, {"failed", c.failed}, {"first_at", c.first_at}, {"next_at", c.next_at},
                      {"alerted", c.alerted}}},
          {"resubmit", deadline_json(m.resubmit)},
          {"sbatch_retry", deadline_json(m.sbatch_retry)},
          {"tag_absent", {{"attempt", m.tag_absent.attempt}, {"count", m.tag_absent.count}, {"looks", m.tag_absent.looks}}},
          {"slurm_error", m.slurm_error},
          {"slurm_failing_since", m.slurm_failing_since},
          {"slurm_alerted", m.slurm_alerted},
          {"disk_level", m.disk_level},
          {"runway_told", m.runway_told},
          {"sized_path", m.sized_path},
          {"sized_bytes", m.sized_bytes},
          {"sized_files", m.sized_files},
          {"forgotten_told", m.forgotten_told},
          {"shortfall", m.shortfall},
          {"release_error", m.release_error},
          {"window_told", m.window_told}};
}

Memory memory_from_json(const json& j) {
  Memory m;
  if (!j.is_object()) return m;
  if (!j.contains("version")) {  // heartbeat.json of an older mlsup: wall-clock times
    m.clock_id = "wall";
    m.attempt = get(j, "attempt", 0);
    m.heartbeat = heartbeat_from(j);
    const json cal = j.contains("calibration") ? j["calibration"] : json();
    m.calibration = {get(cal, "longest", 0.0), get(cal, "steps", 0)};
    return m;
  }
  const json clock = j.contains("clock") ? j["clock"] : json();
  m.clock_id = get(clock, "id", std::string());
  m.saved_wall = get(clock, "wall", 0.0);
  m.saved_mono = get(clock, "mono", 0.0);
  const json cal = j.contains("calibration") ? j["calibration"] : json();
  m.calibration = {get(cal, "longest", 0.0), get(cal, "steps", 0), get(cal, "doublings", 0), get(cal, "doubled_in", 0)};
  m.pace = pace_from(j.contains("pace") ? j["pace"] : json());
  m.attempt = get(j, "attempt", 0);
  m.heartbeat = heartbeat_from(j.contains("heartbeat") ? j["heartbeat"] : json::object());
  m.steps = steps_from(j.contains("steps") ? j["steps"] : json());
  m.running_seen_at = get(j, "running_seen_at", 0.0);
  m.running_nodes = get(j, "running_nodes", std::string());
  m.first_step_at = get(j, "first_step_at", 0.0);
  m.first_step_wall = get(j, "first_step_wall", 0.0);
  m.last_progress_wall = get(j, "last_progress_wall", 0.0);
  m.suspended_at = get(j, "suspended_at", 0.0);
  m.pending_since = get(j, "pending_since", 0.0);
  m.pending_reason = get(j, "pending_reason", std::string());
  m.unavailable_since = get(j, "unavailable_since", 0.0);
  m.checkpoints_looked_at = get(j, "checkpoints_looked_at", get(j, "chain_refreshed_at", 0.0));  // its older name
  m.waited_on_probed_at = get(j, "waited_on_probed_at", 0.0);
  m.stragglers = stragglers_from(j.contains("stragglers") ? j["stragglers"] : json());
  const json c = j.contains("cancel") ? j["cancel"] : json();
  m.cancel = {get(c, "sent", 0), get(c, "failed", 0), get(c, "first_at", 0.0), get(c, "next_at", 0.0),
              get(c, "alerted", false)};
  m.resubmit = deadline_from(j.contains("resubmit") ? j["resubmit"] : json());
  m.sbatch_retry = deadline_from(j.contains("sbatch_retry") ? j["sbatch_retry"] : json());
  const json absent = j.contains("tag_absent") ? j["tag_absent"] : json();
  m.tag_absent = {get(absent, "attempt", 0), get(absent, "count", 0), get(absent, "looks", 0)};
  m.slurm_error = get(j, "slurm_error", std::string());
  m.slurm_failing_since = get(j, "slurm_failing_since", 0.0);
  m.slurm_alerted = get(j, "slurm_alerted", false);
  m.disk_level = get(j, "disk_level", 0);
  m.runway_told = get(j, "runway_told", false);
  m.sized_path = get(j, "sized_path", std::string());
  m.sized_bytes = get(j, "sized_bytes", 0.0);
  m.sized_files = get(j, "sized_files", 0.0);
  m.forgotten_told = get(j, "forgotten_told", 0);
  m.shortfall = get(j, "shortfall", std::string());
  m.release_error = get(j, "release_error", std::string());
  m.window_told = get(j, "window_told", 0);
  return m;
}

double wall_of(double mono, const Clocks& now) { return mono > 0 ? now.wall - std::max(0.0, now.mono - mono) : 0.0; }

void rebase(Memory& m, const Clocks& now) {
  if (m.clock_id == now.clock_id) return;
  if (m.clock_id == "wall") {
    each_time(m, [&](double t) { return t - now.wall + now.mono; });
  } else {
    const double elapsed = std::max(0.0, now.wall - m.saved_wall);
    each_time(m, [&](double t) { return now.mono - elapsed - (m.saved_mono - t); });
  }
  m.clock_id = now.clock_id;
}

void start_wait(Deadline& d, int attempt, int count, double seconds, double now) {
  d = {attempt, count, now + std::max(0.0, seconds)};
}

bool waited(Deadline& d, int attempt, int count, double wall_deadline, const Clocks& c) {
  if (d.attempt != attempt || d.count != count) start_wait(d, attempt, count, wall_deadline - c.wall, c.mono);
  return c.mono >= d.at;
}

void shift(HeartbeatSet& set, double seconds) {
  if (set.running_since > 0) set.running_since += seconds;
  for (auto& [name, f] : set.files) {
    if (f.changed_at > 0) f.changed_at += seconds;
    if (f.progress_at > 0) f.progress_at += seconds;
    f.running_since = set.running_since;
  }
}

}  // namespace mlsup::engine
