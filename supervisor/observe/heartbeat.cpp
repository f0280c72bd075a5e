#include "observe/heartbeat.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <sstream>

#include "config/duration.h"
#include "util/strings.h"

namespace mlsup::engine {
namespace {

std::string seconds(double s) { return config::format_duration(config::Seconds(static_cast<long long>(s))); }

// A phase word: lowercase letters, '-' and '_', beginning with a letter.
bool phase_word(const std::string& w) {
  return !w.empty() && w[0] >= 'a' && w[0] <= 'z' &&
         std::all_of(w.begin(), w.end(), [](char c) { return (c >= 'a' && c <= 'z') || c == '-' || c == '_'; });
}

// The seconds of the content's last word when it is "compute=<s>" (finite, not negative); -1 otherwise.
double compute_seconds(std::string_view content) {
  content = util::trim(content);
  const auto space = content.find_last_of(" \t\r\n");
  const auto word = space == std::string_view::npos ? content : content.substr(space + 1);
  if (!word.starts_with("compute=")) return -1;
  double s = -1;
  const char* begin = word.data() + 8;
  const char* end = word.data() + word.size();
  const auto [ptr, ec] = std::from_chars(begin, end, s);
  return ec == std::errc() && ptr == end && ptr != begin && std::isfinite(s) && s >= 0 ? s : -1;
}

}  // namespace

HeartbeatSeen parse_heartbeat(const std::string& content) {
  HeartbeatSeen seen;
  seen.content = content;
  std::istringstream words(content);
  std::string first, word;
  words >> first;
  long long step = 0;
  const auto [ptr, ec] = std::from_chars(first.data(), first.data() + first.size(), step);
  if (!first.empty() && ec == std::errc() && ptr == first.data() + first.size() && step >= 0) seen.step = step;
  while (words >> word && phase_word(word)) {
    if (word == "waiting") {
      seen.waiting = true;
      break;
    }
    if (seen.phase.empty()) seen.phase = word;
  }
  seen.compute = compute_seconds(content);
  return seen;
}

HeartbeatSeen observe(const HeartbeatSeen& before, const std::optional<std::string>& content, double now) {
  if (!content || *content == before.content) return before;
  if (util::trim(*content).empty() && !before.content.empty()) {
    HeartbeatSeen same = before;
    ++same.empty_reads;
    return same;
  }
  HeartbeatSeen seen = parse_heartbeat(*content);
  seen.changed_at = now;
  seen.progress_at = seen.waiting ? before.progress_at : now;
  seen.running_since = before.running_since;
  seen.empty_reads = before.empty_reads;
  seen.first_step = before.content.empty() ? seen.step : before.first_step;
  return seen;
}

std::string hang_reason(const HeartbeatSeen& seen, const config::HeartbeatSettings& settings, double now) {
  if (!settings.enabled || seen.running_since <= 0) return "";
  if (seen.content.empty()) {
    const double waited = now - seen.running_since;
    if (waited < static_cast<double>(settings.startup_timeout.count())) return "";
    const char* none = settings.source == "file" ? "no heartbeat " : settings.source == "output" ? "no output "
                                                                                                  : "no heartbeat and no output ";
    return none + seconds(waited) +
           " after the job started (heartbeat.startup_timeout " +
           config::format_duration(settings.startup_timeout) + ")";
  }
  const bool output = seen.content.starts_with("output ");
  // The output shows the job lives, not that its start-up is over: ranks print, then load, compile
  // and meet (at width, for long); its silence counts only past the start-up window. So do ranks that
  // wait on their peers before this attempt's first step: they are still meeting.
  const bool meeting = seen.waiting && seen.first_step >= 0 && seen.step == seen.first_step &&
                       parse_heartbeat(seen.content).phase.empty();  // a rank in a save waits in it, not at the start
  const bool starting = now - seen.running_since < static_cast<double>(settings.startup_timeout.count());
  if ((output || meeting) && starting) return "";
  const bool phase = !seen.phase.empty();
  const auto limit = phase ? settings.save_timeout : settings.steady_timeout;
  // A heartbeat that only ever said "waiting" counts from the job's start.
  const double silent = now - (seen.progress_at > 0 ? seen.progress_at : seen.running_since);
  if (silent < static_cast<double>(limit.count())) return "";
  if (output)
    return "the job's output has not grown for " + seconds(silent) + " at " + seen.content.substr(7) +
           " bytes, and no heartbeat was written (heartbeat.steady_timeout " + config::format_duration(limit) + ")";
  return std::string(seen.waiting ? "heartbeat without progress for " : "heartbeat unchanged for ") + seconds(silent) +
         " at \"" + std::string(util::trim(seen.content)) + "\" (heartbeat." +
         (phase ? "save_timeout " : "steady_timeout ") + config::format_duration(limit) + ")";
}

std::string output_content(unsigned long long bytes) { return "output " + std::to_string(bytes); }

bool heartbeat_written(const HeartbeatSet& set) {
  return std::any_of(set.files.begin(), set.files.end(),
                     [](const auto& f) { return f.first != kOutputKey && !f.second.content.empty(); });
}

void observe(HeartbeatSet& set, const std::map<std::string, std::string>& contents, double now) {
  for (const auto& [name, content] : contents) {
    auto& seen = set.files[name];
    seen.running_since = set.running_since;
    seen = observe(seen, content, now);
  }
  if (heartbeat_written(set)) set.files.erase(kOutputKey);
}

HeartbeatSeen combined(const HeartbeatSet& set) {
  HeartbeatSeen all;
  all.running_since = set.running_since;
  bool first = true;
  for (const auto& [name, f] : set.files) {
    if (f.content.empty()) continue;
    if (first || f.progress_at > all.progress_at || (f.progress_at == all.progress_at && f.step > all.step)) {
      all.content = f.content;
      all.waiting = f.waiting;
      all.progress_at = f.progress_at;
      all.first_step = f.first_step;
    }
    first = false;
    all.changed_at = std::max(all.changed_at, f.changed_at);
    all.step = std::max(all.step, f.step);
    if (all.phase.empty() && !f.waiting) all.phase = f.phase;  // a rank blocked on its peers is not in its phase
  }
  return all;
}

std::string hang_reason(const HeartbeatSet& set, const config::HeartbeatSettings& settings, double now) {
  const std::string why = hang_reason(combined(set), settings, now);
  const auto n = std::count_if(set.files.begin(), set.files.end(), [](const auto& f) { return !f.second.content.empty(); });
  if (why.empty() || n < 2) return why;
  return why + " in all " + std::to_string(n) + " heartbeat files";
}

std::string heartbeat_node(const std::string& name) {
  const auto dot = name.rfind('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == name.size()) return "";
  if (!std::all_of(name.begin() + static_cast<long>(dot) + 1, name.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return "";
  return name.substr(0, dot);
}

std::vector<StaleFirst> stale_first(const HeartbeatSet& set, double margin) {
  std::map<std::string, std::pair<double, double>> nodes;  // node -> (stalest file's change, newest file's change)
  for (const auto& [name, f] : set.files) {
    const std::string node = heartbeat_node(name);
    if (node.empty() || f.content.empty()) continue;
    auto [it, fresh] = nodes.try_emplace(node, f.changed_at, f.changed_at);
    if (!fresh) it->second = {std::min(it->second.first, f.changed_at), std::max(it->second.second, f.changed_at)};
  }
  std::vector<StaleFirst> out;
  if (nodes.size() < 2) return out;
  for (const auto& [node, times] : nodes) {
    double others = 0;
    for (const auto& [other, t] : nodes)
      if (other != node) others = std::max(others, t.second);
    if (others - times.first >= margin) out.push_back({node, others - times.first});
  }
  return out;
}

std::vector<StaleFirst> waited_on(const HeartbeatSet& set, double margin) {
  auto suspects = stale_first(set, margin);
  const auto suspect = [&](const std::string& node) {
    return std::any_of(suspects.begin(), suspects.end(), [&](const StaleFirst& s) { return s.node == node; });
  };
  int waiting = 0;
  for (const auto& [name, f] : set.files) {
    const std::string node = heartbeat_node(name);
    if (node.empty() || f.content.empty() || suspect(node)) continue;
    if (!f.waiting) return {};
    ++waiting;
  }
  if (waiting == 0) suspects.clear();
  return suspects;
}

double stale_margin(const config::HeartbeatSettings& settings) {
  return std::max(2.0, static_cast<double>(settings.steady_timeout.count()) / 4.0);
}

void learn(Calibration& c, const HeartbeatSeen& before, const HeartbeatSeen& after) {
  if (before.progress_at <= 0 || after.progress_at <= before.progress_at || after.step <= before.step) return;
  if (!before.phase.empty() || !after.phase.empty()) return;
  c.longest = std::max(c.longest, after.progress_at - before.progress_at);
  ++c.steps;
}

config::Seconds steady_timeout(const config::HeartbeatSettings& settings, const Calibration& c) {
  if (!settings.calibrate || c.steps < kCalibrateAfter) return settings.steady_timeout;
  const double factor = settings.calibrate_factor * std::ldexp(1.0, std::min(c.doublings, 20));
  const auto wanted = config::Seconds(static_cast<long long>(std::ceil(c.longest * factor)));
  return std::clamp(wanted, std::min(settings.calibrate_min, settings.steady_timeout), settings.steady_timeout);
}

config::Seconds calibrate_floor(config::Millis poll_interval) {
  return config::Seconds((3 * poll_interval.count() + 999) / 1000);
}

config::HeartbeatSettings settings_in_force(config::HeartbeatSettings configured, config::Millis poll_interval,
                                            const Calibration& c) {
  configured.calibrate_min = std::max(configured.calibrate_min, calibrate_floor(poll_interval));
  // Each step is seen up to one poll after it was written, so a silence seen between two passes is
  // up to a poll longer than the training's own: the longest seen, less one poll, is its pace.
  Calibration pace = c;
  pace.longest = std::max(0.0, c.longest - static_cast<double>(poll_interval.count()) / 1000.0);
  configured.steady_timeout = steady_timeout(configured, pace);
  return configured;
}

bool is_calibrated(const config::HeartbeatSettings& in_force, const config::HeartbeatSettings& configured) {
  return in_force.steady_timeout != configured.steady_timeout;
}

void doubt(Calibration& c, int attempt) {
  if (c.doubled_in == attempt) return;
  c.doubled_in = attempt;
  ++c.doublings;
}

}  // namespace mlsup::engine
