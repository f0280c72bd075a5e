#pragma once
// Liveness from the heartbeat file, judged on mlsup's own clock: a heartbeat is alive when its
// content changed since mlsup last looked, so clock skew and attribute caching on shared
// filesystems cannot fake a hang (nor hide one).
#include <optional>
#include <string>

#include "config/config.h"

namespace mlsup::engine {

// What mlsup has seen of one attempt's heartbeat; kept across passes (and ticks) in the state dir.
struct HeartbeatSeen {
  std::string content;              // the file's last content seen ("" = never seen)
  double changed_at = 0;            // mlsup's clock when that content was first seen
  double running_since = 0;         // mlsup's clock when the job was first seen running
  long long step = -1;              // the step in content, -1 when none
  bool saving = false;              // the content's second word is "saving"
};

// The step and the saving flag in a heartbeat's content: "<step>" or "<step> saving"; garbage gives step -1.
HeartbeatSeen parse_heartbeat(const std::string& content);

// Folds one look at the file (nullopt = missing) into what was seen, at mlsup's time now.
HeartbeatSeen observe(const HeartbeatSeen& before, const std::optional<std::string>& content, double now);

// Why the attempt counts as hung at now, or "" when it does not.
std::string hang_reason(const HeartbeatSeen& seen, const config::HeartbeatSettings& settings, double now);

}  // namespace mlsup::engine
