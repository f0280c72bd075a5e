#pragma once
// `mlsup status` for people: the figures of status --json (views/status_view.h) as lines.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace mlsup::cli {

// t (unix seconds) as "YYYY-MM-DD HH:MM:SS" in local time; "?" for a time no calendar holds.
std::string local_time(double t);

// The full view's lines before the history: state, attempt and job, step, rate and ETA, checkpoint,
// heartbeat, restarts, live exclusions, time lost and goodput, problems (view: one status --json object).
std::vector<std::string> status_lines(const nlohmann::json& view);

// The window (status --json's "window", not null) in a line: "window: 20:00-07:00 mon-fri (Europe/Berlin),
// closed until 2026-12-03 20:00:00; at its end: pause".
std::string window_line(const nlohmann::json& window);

// The figures in a few words for one campaign's line among several: "step 120/500 1.5/s ETA 4m12s restarts 2".
std::string status_brief(const nlohmann::json& view);

}  // namespace mlsup::cli
