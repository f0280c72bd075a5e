#include "campaign/notify.h"

#include <chrono>
#include <future>

#include "edges/http_post.h"
#include "edges/process.h"
#include "views/alert_kinds.h"
#include "journal/atomic_file.h"
#include "util/json.h"

namespace mlsup::engine {
namespace {

using nlohmann::json;

std::string field(const json& e, const char* key) { return e.contains(key) ? util::json_text(e[key]) : ""; }

// The alert kind the event was told as (campaign.cpp names it), else its event name.
std::string kind_of(const json& e) {
  const std::string kind = util::string_field(e, "alert_kind");
  return kind.empty() ? field(e, "event") : kind;
}

}  // namespace

Notifier::Notifier(config::NotifySettings settings, std::string state_dir, std::string working_dir, AlertBounds bounds)
    : settings_(std::move(settings)),
      state_file_(std::move(state_dir) + "/notify.json"),
      working_dir_(std::move(working_dir)),
      bounds_(bounds) {}

std::string Notifier::alert(const json& event, double now) {
  if (settings_.command.empty() && settings_.webhook.empty()) return "none configured";
  const std::string kind = kind_of(event);
  auto text = journal::read_file_if_exists(state_file_);
  json last = text && *text ? json::parse(**text, nullptr, false) : json::object();
  if (!last.is_object()) last = json::object();
  const auto previous = last.find(kind);  // a value of another type than a time is no earlier alert
  if (previous != last.end() && previous->is_number() &&
      now - previous->get<double>() < static_cast<double>(settings_.cooldown.count()))
    return "cooldown";
  last[kind] = now;
  (void)journal::write_atomically(state_file_, util::dump_json(last) + "\n");
  // Side by side, so that the alert takes the longer of the two bounds, not their sum. (The default
  // policy runs the webhook at get() when no thread can be started.)
  std::future<std::string> webhook;
  if (!settings_.webhook.empty()) webhook = std::async([this, &event] { return post_webhook(event); });
  std::string outcome;
  if (!settings_.command.empty()) outcome += "command: " + run_command(event);
  if (webhook.valid()) outcome += std::string(outcome.empty() ? "" : "; ") + "webhook: " + webhook.get();
  return outcome;
}

std::string Notifier::run_command(const json& event) const {
  edges::ProcessRequest r;
  r.argv = {"/bin/sh", "-c", settings_.command};
  r.env_add = {{"MLSUP_EVENT", field(event, "event")},     {"MLSUP_EVENT_REASON", field(event, "reason")},
               {"MLSUP_EVENT_CAMPAIGN", field(event, "campaign")}, {"MLSUP_EVENT_ATTEMPT", field(event, "attempt")},
               {"MLSUP_EVENT_JOB_ID", field(event, "job_id")},     {"MLSUP_EVENT_JSON", util::dump_json(event)},
               {"MLSUP_ALERT_KIND", kind_of(event)},               {"MLSUP_ALERT_SUMMARY", alert_summary(event, kind_of(event))}};
  r.working_dir = working_dir_;
  r.timeout = bounds_.command;
  const auto result = edges::run_process(r);
  if (!result.started) return "could not start: " + result.start_error;
  if (result.timed_out) return result.timeout_message;
  return result.exit_code == 0 ? "sent" : "exited " + std::to_string(result.exit_code);
}

std::string Notifier::post_webhook(const json& event) const {
  const std::string body = alert_payload(event, kind_of(event), settings_.format, settings_.include_output);
  return edges::post({.url = settings_.webhook, .body = body, .ca_file = settings_.ca_file, .timeout = bounds_.webhook});
}

}  // namespace mlsup::engine
