#pragma once
// Which events are alerts, of which kind (config/alert_kinds.h names them), and what an alert says:
// its one-line summary and the webhook's body in each notify.format. Pure: events in, text out.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace mlsup::engine {

// The alert kind of an event ("hang" for hang-detected, "restart" for an ending that resubmits, ...);
// an event flagged "alert" that no row names is "trouble"; nullopt for an event that is no alert.
std::optional<std::string_view> alert_kind(const nlohmann::json& event);

// The kind of event when it is an alert and on (notify.on) chooses it.
std::optional<std::string_view> chosen_alert(const nlohmann::json& event, const std::vector<std::string>& on);

// One readable line: "mlsup <campaign>: <kind>: <reason> (attempt N, job J, node X)".
std::string alert_summary(const nlohmann::json& event, std::string_view kind);

// The webhook's body: the event with alert_kind and summary (json; the job's output tail only when
// include_output), or {"text": summary} (slack).
std::string alert_payload(const nlohmann::json& event, std::string_view kind, std::string_view format,
                          bool include_output = false);

}  // namespace mlsup::engine
