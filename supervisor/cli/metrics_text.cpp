#include "cli/metrics_text.h"

#include <charconv>
#include <cmath>
#include <optional>
#include <set>

#include "decide/classes.h"
#include "state/lifecycle.h"

namespace mlsup::cli {
namespace {

using nlohmann::json;
using Figure = std::optional<double>;

// The number at view[a][b] (b empty: view[a]); nullopt when it is absent or not a number.
Figure number_at(const json& view, const char* a, const char* b = nullptr) {
  if (!view.is_object() || !view.contains(a)) return std::nullopt;
  const json* v = &view[a];
  if (b) {
    if (!v->is_object() || !v->contains(b)) return std::nullopt;
    v = &(*v)[b];
  }
  return v->is_number() ? Figure(v->get<double>()) : std::nullopt;
}

// Live exclusions in the view's ledger.
Figure live_exclusions(const json& v) {
  if (!v.contains("exclusions") || !v["exclusions"].is_array()) return std::nullopt;
  double n = 0;
  for (const auto& e : v["exclusions"])
    if (e.is_object() && e.value("live", false)) ++n;
  return n;
}

// The checkpoint file system's entry in the view's disk (the one with a runway); nullptr when there is none.
const json* checkpoint_fs(const json& v) {
  if (!v.contains("disk") || !v["disk"].is_object() || !v["disk"].contains("file_systems")) return nullptr;
  for (const auto& fs : v["disk"]["file_systems"])
    if (fs.is_object() && fs.contains("runway") && fs["runway"].is_object()) return &fs;
  return nullptr;
}

// The checkpoint file system's runway in seconds: 0 without room for the next save; nullopt when the campaign does not
// fill it (retention holds it steady) or it is not known yet.
Figure runway_seconds(const json& v) {
  const json* fs = checkpoint_fs(v);
  return fs ? number_at(*fs, "runway", "seconds") : std::nullopt;
}

// One gauge of a campaign: its name, its help, and the figure it reads from the view.
struct Gauge {
  const char* name;
  const char* help;
  Figure (*read)(const json&);
};

constexpr Gauge kGauges[] = {
    {"mlsup_campaign_attempt", "The current attempt's number (1 for the first).", [](const json& v) { return number_at(v, "attempt"); }},
    {"mlsup_campaign_step", "The step reached: the heartbeat's, the last ending's, or the resume point.",
     [](const json& v) { return number_at(v, "step"); }},
    {"mlsup_campaign_target_steps", "The config's target.steps.", [](const json& v) { return number_at(v, "target_steps"); }},
    {"mlsup_campaign_step_rate_steps_per_second", "Steps per second over the heartbeat's recent steps.",
     [](const json& v) { return number_at(v, "step_rate"); }},
    {"mlsup_campaign_eta_seconds", "Time left to target.steps at the step rate.", [](const json& v) { return number_at(v, "eta"); }},
    {"mlsup_campaign_checkpoint_step", "The newest complete checkpoint's step.",
     [](const json& v) { return number_at(v, "checkpoint", "step"); }},
    {"mlsup_campaign_checkpoint_age_seconds", "Time since the newest complete checkpoint was written.",
     [](const json& v) { return number_at(v, "checkpoint", "age"); }},
    {"mlsup_campaign_heartbeat_age_seconds", "Time since the running attempt's heartbeat last changed, on mlsup's clock.",
     [](const json& v) { return number_at(v, "heartbeat_age"); }},
    {"mlsup_campaign_excluded_nodes", "Nodes the campaign's exclusions keep out now.", live_exclusions},
    {"mlsup_campaign_elapsed_seconds", "Time since the campaign's first submission.",
     [](const json& v) { return number_at(v, "time", "elapsed"); }},
    {"mlsup_campaign_time_lost_seconds", "Time lost to failures: failed attempts' steps not kept, and from each one's last progress until the training stepped again.",
     [](const json& v) { return number_at(v, "time", "lost_to_failures"); }},
    {"mlsup_campaign_recomputed_steps", "Steps computed again after failures.",
     [](const json& v) { return number_at(v, "time", "recomputed_steps"); }},
    {"mlsup_campaign_goodput_ratio", "The share of the elapsed time whose steps the campaign keeps (0 to 1).",
     [](const json& v) { return number_at(v, "time", "goodput"); }},
    {"mlsup_campaign_disk_runway_seconds",
     "Time until the checkpoint file system is full at the campaign's pace (absent while retention holds it steady).",
     runway_seconds},
    {"mlsup_campaign_checkpoint_bytes", "The newest complete checkpoint's size.",
     [](const json& v) { return number_at(v, "disk", "checkpoint_bytes"); }},
    {"mlsup_campaign_checkpoint_fs_free_bytes", "Bytes users may still write on the checkpoint file system.",
     [](const json& v) { const json* fs = checkpoint_fs(v); return fs ? number_at(*fs, "free_bytes") : std::nullopt; }},
    {"mlsup_campaign_exit_code", "The campaign's exit code once it has ended.", [](const json& v) { return number_at(v, "exit_code"); }},
    {"mlsup_campaign_supervised", "1 while a supervisor holds the campaign's lease.",
     [](const json& v) { return Figure(v.contains("supervisor") && v["supervisor"].is_object() ? 1.0 : 0.0); }},
    {"mlsup_campaign_journal_problems", "Journal records that could not be read or applied (the campaign does not act).",
     [](const json& v) { return Figure(v.contains("problems") ? static_cast<double>(v["problems"].size()) : 0.0); }},
};

// A sample's value: integers as such, others in the shortest form that reads back the same.
std::string number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char text[64];
  const auto r = std::to_chars(text, text + sizeof text, v);
  return std::string(text, r.ptr);
}

class Exposition {
 public:
  // The family's HELP and TYPE lines.
  void family(const std::string& name, const char* type, const char* help) {
    out_ += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
  }
  // One sample; labels: already written as name="value" pairs ("" for none).
  void sample(const std::string& name, const std::string& labels, double v) {
    out_ += name + (labels.empty() ? "" : "{" + labels + "}") + " " + number(v) + "\n";
  }
  std::string text() && { return std::move(out_); }

 private:
  std::string out_;
};

std::string campaign_label(const json& v) {
  return "campaign=\"" + label_value(v.is_object() ? v.value("campaign", std::string("?")) : "?") + "\"";
}

// The campaign's state as a state set: one sample per state name, 1 for its own.
void states(Exposition& e, const std::vector<json>& views) {
  e.family("mlsup_campaign_state", "gauge", "1 for the campaign's state (status's word), 0 for the others.");
  for (const auto& v : views) {
    const std::string now = v.is_object() ? v.value("state", std::string()) : "";
    for (const auto l : engine::kLifecycles) {
      const auto name = engine::lifecycle_name(l);
      e.sample("mlsup_campaign_state", campaign_label(v) + ",state=\"" + label_value(name) + "\"", name == now ? 1 : 0);
    }
  }
}

// Restarts by end class: every class the policy resubmits after (0 when none), and any other the view counts.
void restarts(Exposition& e, const std::vector<json>& views) {
  e.family("mlsup_campaign_restarts_total", "counter", "Attempts resubmitted after an ending, by the ending's class.");
  for (const auto& v : views) {
    std::set<std::string> classes;
    for (const auto& row : decide::class_table())
      if (row.action == decide::Action::Resubmit) classes.insert(std::string(row.name));
    const json by = v.is_object() && v.contains("restarts_by_class") && v["restarts_by_class"].is_object() ? v["restarts_by_class"]
                                                                                                           : json::object();
    for (const auto& [cls, n] : by.items()) classes.insert(cls);
    for (const auto& cls : classes)
      e.sample("mlsup_campaign_restarts_total", campaign_label(v) + ",class=\"" + label_value(cls) + "\"",
               by.contains(cls) && by[cls].is_number() ? by[cls].get<double>() : 0);
  }
}

// The supervisor's passes of each campaign, as a summary without quantiles.
void passes(Exposition& e, const engine::PassFigures& f) {
  e.family("mlsup_campaign_pass_duration_seconds", "summary", "The time of this supervisor's passes of each campaign.");
  for (const auto& [name, p] : f.by_campaign) {
    const std::string label = "campaign=\"" + label_value(name) + "\"";
    e.sample("mlsup_campaign_pass_duration_seconds_sum", label, p.seconds);
    e.sample("mlsup_campaign_pass_duration_seconds_count", label, static_cast<double>(p.count));
  }
}

void supervisor(Exposition& e, const engine::PassFigures& f) {
  passes(e, f);
  e.family("mlsup_supervisor_rounds_total", "counter", "Supervisor passes begun (each asks Slurm once for every campaign due).");
  e.sample("mlsup_supervisor_rounds_total", "", static_cast<double>(f.rounds));
  e.family("mlsup_slurm_queries_total", "counter", "Job queries sent to Slurm.");
  e.sample("mlsup_slurm_queries_total", "", static_cast<double>(f.slurm_queries));
  e.family("mlsup_slurm_errors_total", "counter", "Calls to Slurm that failed, by the error's kind.");
  for (const auto& [kind, n] : f.slurm_errors)
    e.sample("mlsup_slurm_errors_total", "kind=\"" + label_value(kind) + "\"", static_cast<double>(n));
}

}  // namespace

std::string label_value(std::string_view value) {
  std::string out;
  for (const char c : value) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string metrics_text(const std::vector<json>& views, const engine::PassFigures& figures) {
  Exposition e;
  states(e, views);
  for (const auto& g : kGauges) {
    e.family(g.name, "gauge", g.help);
    for (const auto& v : views)
      if (const auto x = v.is_object() ? g.read(v) : std::nullopt) e.sample(g.name, campaign_label(v), *x);
  }
  restarts(e, views);
  supervisor(e, figures);
  return std::move(e).text();
}

}  // namespace mlsup::cli
