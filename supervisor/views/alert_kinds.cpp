#include "views/alert_kinds.h"

#include <algorithm>
#include <iterator>
#include <utility>

#include "decide/classes.h"
#include "decide/classify.h"
#include "events/kinds.h"
#include "util/json.h"

namespace mlsup::engine {
namespace {

using nlohmann::json;

struct AlertRow {
  events::EventKind event;      // the event
  std::string_view kind;        // the alert kind it is
  bool (*when)(const json&);    // nullptr = always
};

// An ending that is a failure and resubmits: not the routine ends of a long campaign (a time limit,
// a preemption, a planned exit short of the target).
bool restarts_failure(const json& e) {
  const auto cls = decide::class_from_name(util::string_field(e, "class"));
  return util::string_field(e, "action") == decide::action_name(decide::Action::Resubmit) && !(cls && decide::row(*cls).routine);
}

// The events that are alerts; any other event flagged "alert" is the supervisor's trouble.
constexpr AlertRow kRows[] = {
    {"stopped", "stopped", nullptr},
    {"completed", "completed", nullptr},
    {"pending-stuck", "pending", nullptr},
    {"budget-nearly-spent", "budget", nullptr},
    {"slurm-unreachable", "trouble", nullptr},
    {"hang-detected", "hang", nullptr},
    {"attempt-ended", "restart", restarts_failure},
    {"excluded", "exclusion", nullptr},
    {"disk-nearly-full", "disk", nullptr},
    {"disk-runway-short", "disk", nullptr},
    {"straggler", "straggler", nullptr},
};

// The text of a field ("" when absent), on one line.
std::string one_line(const json& e, const char* key) {
  std::string text = e.is_object() && e.contains(key) ? util::json_text(e[key]) : "";
  std::replace(text.begin(), text.end(), '\n', ' ');
  return text;
}

}  // namespace

std::optional<std::string_view> alert_kind(const json& event) {
  const std::string name = util::string_field(event, "event");
  for (const auto& row : kRows)
    if (row.event.name() == name && (!row.when || row.when(event))) return row.kind;
  if (event.is_object() && event.value("alert", false) == true) return "trouble";
  return std::nullopt;
}

std::optional<std::string_view> chosen_alert(const json& event, const std::vector<std::string>& on) {
  const auto kind = alert_kind(event);
  if (!kind || std::find(on.begin(), on.end(), *kind) == on.end()) return std::nullopt;
  return kind;
}

std::string alert_summary(const json& event, std::string_view kind) {
  constexpr std::size_t kLongest = 400;  // a chat line, not a log
  std::string what = one_line(event, "reason");
  if (what.empty()) what = one_line(event, "detail");
  if (what.empty()) what = one_line(event, "event");
  if (what.size() > kLongest) what = what.substr(0, kLongest) + "...";
  std::string line = "mlsup " + one_line(event, "campaign") + ": " + std::string(kind) + ": " + what;
  std::vector<std::string> where;
  static constexpr std::pair<const char*, const char*> kWhere[] = {{"attempt", "attempt"}, {"job_id", "job"}, {"node", "node"}};
  for (const auto& [key, label] : kWhere)
    if (const auto v = one_line(event, key); !v.empty() && v != "0") where.push_back(std::string(label) + " " + v);
  if (!where.empty()) {
    line += " (";
    for (std::size_t i = 0; i < where.size(); ++i) line += (i ? ", " : "") + where[i];
    line += ")";
  }
  return line;
}

std::string alert_payload(const json& event, std::string_view kind, std::string_view format, bool include_output) {
  if (format == "slack") return util::dump_json(json{{"text", alert_summary(event, kind)}});
  json body = event;
  if (!include_output) body.erase("output_tail");
  body["alert_kind"] = std::string(kind);
  body["summary"] = alert_summary(event, kind);
  return util::dump_json(body);
}

}  // namespace mlsup::engine
