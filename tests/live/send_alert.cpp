// mlsup_send_alert: sends one event as an alert the way a campaign does (the config's notify.on,
// format, webhook, CA file and cooldown) and prints what happened, as the event log's "notified" says.
// Used by tests/alerts/test_https_webhook.sh.
//   mlsup_send_alert CONFIG EVENT_JSON
#include <chrono>
#include <filesystem>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "config/load.h"
#include "views/alert_kinds.h"
#include "campaign/notify.h"

using namespace mlsup;

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: mlsup_send_alert CONFIG EVENT_JSON\n";
    return 2;
  }
  const auto c = config::load_config_file(argv[1]);
  if (!c) {
    for (const auto& e : c.error()) std::cerr << e.str() << "\n";
    return 2;
  }
  auto event = nlohmann::json::parse(argv[2], nullptr, false);
  const auto kind = engine::chosen_alert(event, c->notify.on);
  if (!kind) {
    std::cout << "not chosen\n";
    return 0;
  }
  event["alert_kind"] = std::string(*kind);
  std::filesystem::create_directories(c->state_dir);
  engine::Notifier notifier(c->notify, c->state_dir, c->base_dir);
  const double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  std::cout << notifier.alert(event, now) << "\n";
  return 0;
}
