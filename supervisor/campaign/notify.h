#pragma once
// Alerts to people: a shell command and/or a webhook (http or https, edges/http_post.h) per alert, with a
// cooldown per kind of alert (views/alert_kinds.h) so that a flapping campaign does not page anyone a
// hundred times.
#include <chrono>
#include <string>

#include <nlohmann/json.hpp>

#include "config/config.h"

namespace mlsup::engine {

// How long each way of telling may take (the command is killed, the webhook given up).
struct AlertBounds {
  std::chrono::milliseconds command{std::chrono::seconds(30)};
  std::chrono::milliseconds webhook{std::chrono::seconds(10)};
};

class Notifier {
 public:
  // Remembers the last alert of each kind in <state_dir>/notify.json (so ticks share the cooldown);
  // the command runs in working_dir (the config's folder).
  Notifier(config::NotifySettings settings, std::string state_dir, std::string working_dir, AlertBounds bounds = {});

  // Sends event (it has "event", "reason" and, as campaign.cpp tells it, "alert_kind") unless one of its
  // kind went out within the cooldown;
  // the command and the webhook run side by side, so it returns within the longer of their bounds.
  // Returns what happened, for the event log: "sent", "cooldown", "none configured", or the error.
  std::string alert(const nlohmann::json& event, double now);

 private:
  std::string run_command(const nlohmann::json& event) const;
  std::string post_webhook(const nlohmann::json& event) const;

  config::NotifySettings settings_;
  std::string state_file_;
  std::string working_dir_;
  AlertBounds bounds_;
};

}  // namespace mlsup::engine
