#include "cli/status_text.h"

#include <cmath>
#include <cstdio>
#include <ctime>

#include "views/plan_view.h"
#include "views/status_view.h"
#include "util/json.h"

namespace mlsup::cli {
namespace {

using nlohmann::json;
using engine::human_duration;

bool has(const json& j, const char* key) { return j.is_object() && j.contains(key) && !j[key].is_null(); }

// A number with the given digits after the point.
std::string fixed(double v, int digits) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", digits, v);
  return text;
}

std::string state_line(const json& v) {
  std::string line = "state: " + util::string_field(v, "state", "?");
  if (has(v, "exit_code")) line += " (exit " + util::json_text(v["exit_code"]) + ": " + util::string_field(v, "reason") + ")";
  if (has(v, "supervisor"))
    line += ", supervised by pid " + util::json_text(v["supervisor"]["pid"]) + " on " +
            util::string_field(v["supervisor"], "host", "?");
  else if (!has(v, "exit_code") && util::string_field(v, "state") != "not started")
    line += ", no supervisor holds it now (`mlsup run` or `tick` carries it on)";
  return line;
}

// Where the job's state was read, and how old it is: " (Slurm, asked now)", " (when it ended, 2m00s ago)".
std::string job_seen_text(const json& v) {
  if (!has(v, "job_seen")) return "";
  const auto& s = v["job_seen"];
  const auto source = util::string_field(s, "source");
  const std::string age = has(s, "age") ? human_duration(s["age"].get<double>()) : "?";
  std::string text;
  if (source == "slurm") text = util::string_field(v, "job_state") == "gone"
                                    ? "Slurm no longer shows it: the next pass reads how it ended"
                                    : "Slurm, asked now";
  else if (source == "journal") text = "when it ended, " + age + " ago";
  else if (source == "supervisor") text = "as its supervisor last wrote it, " + age + " ago";
  if (has(s, "slurm_error")) text += (text.empty() ? "" : "; ") + std::string("Slurm: ") + util::string_field(s, "slurm_error");
  return text.empty() ? "" : " (" + text + ")";
}

std::string attempt_line(const json& v) {
  if (!has(v, "attempt")) return "attempt: none yet";
  std::string line = "attempt: " + util::json_text(v["attempt"]);
  line += has(v, "job_id") ? ", job " + util::json_text(v["job_id"]) : std::string(", not submitted");
  if (has(v, "job_state")) line += " " + util::json_text(v["job_state"]);
  if (has(v, "nodes") && !util::string_field(v, "nodes").empty()) line += " on " + util::json_text(v["nodes"]);
  line += job_seen_text(v);
  if (has(v, "last_end")) line += "; last ending: " + util::json_text(v["last_end"]);
  return line;
}

// "; a hang after 5s without a step (calibrated from 23 steps; configured 1m00s)", from hang_timeout.
std::string hang_timeout_text(const json& v) {
  if (!has(v, "hang_timeout")) return "";
  const auto& h = v["hang_timeout"];
  std::string text = "; a hang after " + human_duration(h.value("steady", 0.0)) + " without a step";
  if (h.value("calibrated", false))
    text += " (calibrated from " + std::to_string(h.value("steps_seen", 0)) + " steps; configured " +
            human_duration(h.value("configured", 0.0)) + ")";
  return text;
}

std::string step_line(const json& v) {
  if (!has(v, "step")) return "step: none yet";
  std::string line = "step: " + util::json_text(v["step"]);
  if (has(v, "target_steps")) line += " of " + util::json_text(v["target_steps"]);
  const auto source = util::string_field(v, "step_source");
  if (source == "ended") return line + " (where the last attempt ended)";
  if (source != "heartbeat") return line + " (the attempt's resume point; no heartbeat step yet)";
  line += has(v, "heartbeat_age") ? " (heartbeat " + human_duration(v["heartbeat_age"].get<double>()) + " ago)"
                                  : std::string(" (heartbeat)");
  return line + hang_timeout_text(v);
}

std::string rate_line(const json& v) {
  if (!has(v, "step_rate"))
    return util::string_field(v, "step_source") == "ended" ? "rate: none (no attempt is running)"
                                                           : "rate: not known yet (two heartbeat steps of the running attempt are needed)";
  std::string line = "rate: " + fixed(v["step_rate"].get<double>(), 2) + " steps/s over the last " +
                     human_duration(v["step_rate_window"].get<double>());
  if (has(v, "eta")) line += "; ETA " + human_duration(v["eta"].get<double>()) + " (" + local_time(v["eta_at"].get<double>()) + ")";
  return line;
}

std::string checkpoint_line(const json& v) {
  if (!has(v, "checkpoint")) return "checkpoint: none complete";
  const auto& c = v["checkpoint"];
  return "checkpoint: " + util::string_field(c, "path") + " (step " + util::json_text(c["step"]) +
         (has(c, "age") ? ", written " + human_duration(c["age"].get<double>()) + " ago)" : std::string(")"));
}

std::string restarts_line(const json& v) {
  std::string line = "restarts: " + util::json_text(v.value("restarts", json(0)));
  std::string by;
  if (v.contains("restarts_by_class"))
    for (const auto& [cls, n] : v["restarts_by_class"].items()) by += (by.empty() ? "" : ", ") + cls + " " + util::json_text(n);
  return by.empty() ? line : line + " (" + by + ")";
}

// Seconds as a pace is told: two decimals below 10 s ("0.25s"), else as a duration ("1m30s").
std::string pace_seconds(const json& s) { return s.get<double>() < 10 ? fixed(s.get<double>(), 2) + "s" : human_duration(s.get<double>()); }

// "pace: a step 0.25s (p95 0.31s, 40 measured); a save 1m30s (p95 1m32s, 2 measured)", from pace.
std::string pace_line(const json& v) {
  if (!has(v, "pace")) return "pace: not measured yet";
  const auto& p = v["pace"];
  std::vector<std::string> parts;
  for (const auto& [kind, key] : {std::pair{"a step ", "step"}, std::pair{"a save ", "save"}}) {
    const std::string k = key;
    if (!has(p, (k + "_p50").c_str())) continue;
    parts.push_back(kind + pace_seconds(p[k + "_p50"]) + " (p95 " + pace_seconds(p[k + "_p95"]) + ", " +
                    util::json_text(p[k + "s_measured"]) + " measured)");
  }
  if (parts.empty()) return "pace: not measured yet (steps and saves are timed from the heartbeat)";
  return "pace: " + parts.front() + (parts.size() > 1 ? "; " + parts.back() : std::string());
}

std::string time_line(const json& v) {
  if (!has(v, "time") || !has(v["time"], "elapsed")) return "time: the campaign has not begun";
  const auto& t = v["time"];
  std::string line = "time: " + human_duration(t["elapsed"].get<double>()) + " since the campaign began; lost to failures " +
                     human_duration(t.value("lost_to_failures", 0.0)) + " (" + util::json_text(t.value("recomputed_steps", json(0))) +
                     " steps recomputed)";
  if (has(t, "goodput")) line += "; goodput " + fixed(100 * t["goodput"].get<double>(), 1) + "%";
  return line;
}


}  // namespace

std::string local_time(double t) {
  const std::time_t s = static_cast<std::time_t>(t);
  std::tm tm{};
  char text[32];
  if (!(std::fabs(t) < 1e12) || !::localtime_r(&s, &tm) || std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", &tm) == 0)
    return "?";
  return text;
}

std::vector<std::string> status_lines(const json& v) {
  std::vector<std::string> lines = {"campaign: " + util::string_field(v, "campaign", "?") +
                                        (has(v, "campaign_id") ? " (id " + util::json_text(v["campaign_id"]) + ")" : std::string()) +
                                        ", state in " + util::string_field(v, "state_dir"),
                                    state_line(v), attempt_line(v), step_line(v), rate_line(v), pace_line(v), checkpoint_line(v),
                                    restarts_line(v), time_line(v)};
  if (has(v, "window")) lines.insert(lines.begin() + 2, window_line(v["window"]));
  for (const auto& line : engine::disk_lines(v.value("disk", json()))) lines.push_back("disk: " + line);
  if (v.contains("problems"))
    for (const auto& p : v["problems"]) lines.push_back("problem: " + util::json_text(p));
  if (const auto& d = v.value("debug", json()); d.is_object()) {
    std::string names;
    const json env = d.value("env", json::object());
    for (const auto& [name, value] : env.items()) names += (names.empty() ? "" : " ") + name;
    lines.push_back("debug: the attempt runs with " + names + " (debug_on_retry): " + util::string_field(d, "why"));
  }
  if (const auto& l = v.value("signal_lead", json()); l.is_object() && !util::string_field(l, "warning").empty())
    lines.push_back("warning: " + util::string_field(l, "warning"));
  return lines;
}

std::string window_line(const json& w) {
  std::string line = "window: " + util::string_field(w, "hours");
  if (const json days_given = w.value("days", json::array()); !days_given.empty()) {
    std::string days;
    for (const auto& d : days_given) days += (days.empty() ? "" : ",") + util::json_text(d);
    line += " " + days;
  }
  line += " (" + (util::string_field(w, "zone").empty() ? std::string("local time") : util::string_field(w, "zone")) + ")";
  if (w.contains("open"))
    line += std::string(w["open"].get<bool>() ? ", open until " : ", closed until ") + local_time(w["until"].get<double>());
  return line + "; at its end: " + util::string_field(w, "at_end");
}

std::string status_brief(const json& v) {
  std::string out;
  if (has(v, "step")) out += "  step " + util::json_text(v["step"]) + (has(v, "target_steps") ? "/" + util::json_text(v["target_steps"]) : "");
  if (has(v, "step_rate")) out += " " + fixed(v["step_rate"].get<double>(), 2) + "/s";
  if (has(v, "eta")) out += " ETA " + human_duration(v["eta"].get<double>());
  if (v.value("restarts", json(0)) != 0) out += "  restarts " + util::json_text(v["restarts"]);
  return out;
}

}  // namespace mlsup::cli
