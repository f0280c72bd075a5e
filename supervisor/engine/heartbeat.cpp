#include "engine/heartbeat.h"

#include <charconv>
#include <sstream>

#include "config/duration.h"
#include "util/strings.h"

namespace mlsup::engine {
namespace {

std::string seconds(double s) { return config::format_duration(config::Seconds(static_cast<long long>(s))); }

}  // namespace

HeartbeatSeen parse_heartbeat(const std::string& content) {
  HeartbeatSeen seen;
  seen.content = content;
  std::istringstream words(content);
  std::string first, second;
  words >> first >> second;
  long long step = 0;
  const auto [ptr, ec] = std::from_chars(first.data(), first.data() + first.size(), step);
  if (!first.empty() && ec == std::errc() && ptr == first.data() + first.size() && step >= 0) seen.step = step;
  seen.saving = second == "saving";
  return seen;
}

HeartbeatSeen observe(const HeartbeatSeen& before, const std::optional<std::string>& content, double now) {
  if (!content || *content == before.content) return before;
  HeartbeatSeen seen = parse_heartbeat(*content);
  seen.changed_at = now;
  seen.running_since = before.running_since;
  return seen;
}

std::string hang_reason(const HeartbeatSeen& seen, const config::HeartbeatSettings& settings, double now) {
  if (!settings.enabled || seen.running_since <= 0) return "";
  if (seen.content.empty()) {
    const double waited = now - seen.running_since;
    if (waited < static_cast<double>(settings.startup_timeout.count())) return "";
    return "no heartbeat " + seconds(waited) + " after the job started (heartbeat.startup_timeout " +
           config::format_duration(settings.startup_timeout) + ")";
  }
  const auto limit = seen.saving ? settings.save_timeout : settings.steady_timeout;
  const double silent = now - seen.changed_at;
  if (silent < static_cast<double>(limit.count())) return "";
  return "heartbeat unchanged for " + seconds(silent) + " at \"" + std::string(util::trim(seen.content)) + "\" (heartbeat." +
         (seen.saving ? "save_timeout " : "steady_timeout ") + config::format_duration(limit) + ")";
}

}  // namespace mlsup::engine
