#include "views/plan_view.h"

#include <algorithm>
#include <cmath>

#include "decide/plan.h"
#include "decide/signal_lead.h"
#include "views/status_view.h"

namespace mlsup::engine {
namespace {

using nlohmann::json;

json or_null(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

// The restart cost assumed until a failure and the next attempt's first step were seen.
constexpr double kAssumedRestart = 300;

// The failures' record: running time, failures, and the restart cost of each failure followed by a step.
struct FailureRecord {
  double exposure = 0;
  int failures = 0;
  std::vector<double> restarts;  // from the last progress (or the end) until the training stepped again
};

FailureRecord failure_record(const std::vector<AttemptSpan>& spans) {
  FailureRecord r;
  for (std::size_t i = 0; i < spans.size(); ++i) {
    const auto& a = spans[i];
    const double from = a.timed ? a.first_step : a.start;
    if (from > 0) r.exposure += std::max(0.0, a.end - from);
    if (!a.failed) continue;
    ++r.failures;
    const auto* next = i + 1 < spans.size() ? &spans[i + 1] : nullptr;
    if (next && next->timed && next->first_step > 0 && a.lost_until == next->first_step)
      r.restarts.push_back(std::max(0.0, a.lost_until - (a.last_progress > 0 ? a.last_progress : a.end)));
  }
  return r;
}

// The history's fields in the mtbf json (node_failures, node_seconds; accounting_error where it was asked and not
// had); the history when it gives a rate (a node failure at least).
std::optional<slurm::NodeFailureHistory> history_fields(const PlanInputs& in, json& j) {
  if (!in.accounting_error.empty()) j["accounting_error"] = in.accounting_error;
  if (!in.history) return std::nullopt;
  if (!in.history->available) {
    j["accounting_error"] = "the site keeps no accounting";
    return std::nullopt;
  }
  j["node_failures"] = in.history->node_failures, j["node_seconds"] = in.history->node_seconds;
  if (in.history->node_failures <= 0 || in.history->node_seconds <= 0) return std::nullopt;
  return in.history;
}

// The MTBF and its source: --mtbf, the campaign's failures, the cluster's node failures (a job of `nodes` nodes
// meets each node's), the campaign's running time as a lower bound, none.
json mtbf_json(const PlanInputs& in, const FailureRecord& r, int nodes) {
  json j = {{"failures", r.failures}, {"exposure", r.exposure}, {"lower_bound", false}};
  const auto campaign = decide::mtbf_from(r.exposure, r.failures);
  const auto history = in.mtbf_given ? std::nullopt : history_fields(in, j);
  if (in.mtbf_given) {
    j["seconds"] = *in.mtbf_given, j["source"] = "given";
  } else if (campaign && !campaign->lower_bound) {
    j["seconds"] = campaign->seconds, j["source"] = "campaign";
  } else if (history) {
    j["seconds"] = history->node_seconds / history->node_failures / std::max(1, nodes), j["source"] = "accounting";
  } else if (campaign) {
    j["seconds"] = campaign->seconds, j["source"] = "campaign", j["lower_bound"] = true;
  } else {
    j["seconds"] = nullptr, j["source"] = "none";
  }
  return j;
}

// The campaign's attempts as spans, from the status figures' step.
std::vector<AttemptSpan> spans_of(const PlanInputs& in, const json& status) {
  const long long step = status["step"].is_number() ? status["step"].get<long long>() : 0;
  return attempt_spans(in.state, step, in.now.wall, running_times(in.state, in.memory, in.now));
}

json restart_json(const FailureRecord& r) {
  if (r.restarts.empty()) return {{"seconds", kAssumedRestart}, {"source", "assumed"}, {"samples", 0}};
  double sum = 0;
  for (double v : r.restarts) sum += v;
  return {{"seconds", sum / static_cast<double>(r.restarts.size())}, {"source", "campaign"}, {"samples", r.restarts.size()}};
}

std::optional<double> number(const json& j) { return j.is_number() ? std::optional<double>(j.get<double>()) : std::nullopt; }

json wall_json(std::optional<double> wall, int nodes) {
  if (!wall) return nullptr;
  return {{"wall", *wall}, {"node_hours", *wall / 3600 * nodes}};
}

std::string steps_words(const json& steps) { return steps.is_number() ? std::to_string(steps.get<long long>()) + " steps" : "? steps"; }

std::string percent(double share) { return std::to_string(static_cast<int>(std::lround(share * 100))) + "%"; }

// Node-seconds in node-hours, whole ("400 node-hours"; "<1 node-hour" below one).
std::string node_hours(const json& node_seconds) {
  const double hours = node_seconds.get<double>() / 3600;
  return hours < 0.5 ? "<1 node-hour" : std::to_string(std::lround(hours)) + " node-hours";
}

// Why the cluster's accounting history gave no MTBF, as a clause (" (...)"); "" when it was not asked.
std::string accounting_words(const json& mtbf) {
  if (mtbf.contains("accounting_error")) return " (the cluster's accounting was not read: " + mtbf["accounting_error"].get<std::string>() + ")";
  if (mtbf.contains("node_failures"))
    return " (the cluster's accounting has no node failure either, in " + node_hours(mtbf["node_seconds"]) + " of jobs)";
  return "";
}

// The advice sentences from the plan's figures.
std::vector<std::string> advice(const json& p) {
  std::vector<std::string> out;
  const auto& in = p["inputs"];
  const auto interval = number(in["interval"]);
  const auto advised = number(p["advised"]["interval"]);
  const auto& mtbf = in["mtbf"];
  if (!number(in["save_seconds"])) out.push_back("no save measured yet: the interval advice waits for one (a heartbeat `saving` phase)");
  else if (!number(mtbf["seconds"]))
    out.push_back("no failure rate known" + accounting_words(mtbf) +
                  ": pass --mtbf (the cluster's mean time between failures of a job this wide)");
  if (interval && advised && std::abs(*interval - *advised) > 0.25 * *advised)
    out.push_back("save every " + steps_words(p["advised"]["every_steps"]) + " (about " + human_duration(*advised) +
                  " of compute) instead of every " + steps_words(in["save_every_steps"]) + ": goodput " +
                  percent(p["goodput"]["current"].get<double>()) + " -> " + percent(p["goodput"]["advised"].get<double>()));
  if (mtbf.value("lower_bound", false))
    out.push_back("no failure in " + human_duration(mtbf["exposure"].get<double>()) +
                  " of running: the MTBF is at least that, so the advised interval is a floor" + accounting_words(mtbf) +
                  "; --mtbf gives the cluster's");
  const auto& limit = p["time_limit"];
  const bool steps_left = in["steps_left"].is_number() && in["steps_left"].get<long long>() > 0;
  if (steps_left && number(limit["advised"]) && number(limit["configured"]) && limit["advised"].get<double>() < limit["configured"].get<double>())
    out.push_back("slurm.time " + human_duration(limit["advised"].get<double>()) + " fits the rest of the training: a shorter limit starts sooner");
  else if (steps_left && limit["limits_left"].is_number() && limit["limits_left"].get<long long>() > 0)
    out.push_back(std::to_string(limit["limits_left"].get<long long>()) +
                  " more time limits to the target, each a restart: the partition's longest slurm.time saves them");
  if (p["signal_lead"]["warning"].is_string() && !p["signal_lead"]["warning"].get<std::string>().empty())
    out.push_back(p["signal_lead"]["warning"].get<std::string>());
  for (const auto& fs : p["disk"]["file_systems"])
    if (fs["runway"].is_object() && fs["runway"].value("short", false)) out.push_back("disk: " + fs["runway"].value("text", std::string()));
  return out;
}

// plan_text's MTBF line, without its end: the figure and where it came from.
std::string mtbf_line(const json& m, int nodes) {
  const auto dur = [](const json& v) { return v.is_number() ? human_duration(v.get<double>()) : std::string("?"); };
  const std::string source = m.value("source", std::string("none"));
  std::string line = "  MTBF " + std::string(m.value("lower_bound", false) ? "at least " : "") + dur(m["seconds"]) + " (" + source + ": ";
  if (source == "accounting")
    return line + std::to_string(m["node_failures"].get<int>()) + " node failure(s) in " + node_hours(m["node_seconds"]) +
           " of the cluster's jobs, for " + std::to_string(nodes) + " node(s))";
  return line + std::to_string(m["failures"].get<int>()) + " failure(s) in " + dur(m["exposure"]) + " of running)";
}

}  // namespace

decide::RunwayInputs runway_inputs(const config::Config& c, const PaceFigures& pace, const DiskFacts& disk) {
  decide::RunwayInputs in{.checkpoint = disk.checkpoint_size, .keep = c.checkpoint.keep,
                          .complete = static_cast<int>(disk.checkpoint_steps.size())};
  if (const auto compute = decide::save_interval(disk.checkpoint_steps, pace.step_p50))
    in.cadence = *compute + pace.save_p50.value_or(0);
  return in;
}

json disk_json(const config::Config& c, const PaceFigures& pace, const DiskFacts& disk) {
  const auto in = runway_inputs(c, pace, disk);
  const double alert = static_cast<double>(c.disk.runway_alert.count());
  json j = {{"checkpoint_bytes", in.checkpoint ? json(in.checkpoint->bytes) : json(nullptr)},
            {"checkpoint_files", in.checkpoint ? json(in.checkpoint->files) : json(nullptr)},
            {"cadence", or_null(in.cadence)}, {"runway_alert", alert}, {"file_systems", json::array()}};
  for (const auto& fs : disk.file_systems) {
    json f = {{"path", fs.use.path}, {"roles", fs.roles}, {"free_bytes", or_null(fs.use.free_bytes)},
              {"free_inodes", or_null(fs.use.free_inodes)}, {"bytes_percent", fs.use.bytes_percent},
              {"inodes_percent", or_null(fs.use.inodes_percent)}, {"runway", nullptr}};
    if (std::find(fs.roles.begin(), fs.roles.end(), "checkpoints") != fs.roles.end()) {
      const auto r = decide::runway(fs.use, in);
      f["runway"] = {{"state", decide::runway_state_name(r.state)}, {"seconds", or_null(r.seconds)}, {"inodes", r.inodes},
                     {"short", decide::runway_short(r, alert)}, {"text", decide::runway_text(r, fs.use, in)}};
    }
    j["file_systems"].push_back(std::move(f));
  }
  return j;
}

std::vector<std::string> disk_lines(const json& disk) {
  std::vector<std::string> out;
  if (!disk.is_object()) return out;
  for (const auto& fs : disk.value("file_systems", json::array())) {
    std::string roles;
    for (const auto& r : fs["roles"]) roles += (roles.empty() ? "" : ", ") + r.get<std::string>();
    const std::string free = fs["free_bytes"].is_number() ? decide::human_bytes(fs["free_bytes"].get<double>()) + " free" : "free ?";
    std::string line = roles + ": " + free;
    if (fs["runway"].is_object())
      line += "; " + fs["runway"].value("text", std::string()) + (fs["runway"].value("short", false) ? "  (SHORT)" : "");
    else line += " on " + fs.value("path", std::string());
    out.push_back(line);
  }
  return out;
}

bool wants_history(const PlanInputs& in) {
  if (in.mtbf_given) return false;
  const json status = status_figures({in.config, in.state, in.memory, std::nullopt, in.now});
  return failure_record(spans_of(in, status)).failures == 0;
}

json plan_json(const PlanInputs& in) {
  const auto& c = in.config;
  const auto pace = pace_figures(in.memory.pace);
  const json status = status_figures({c, in.state, in.memory, std::nullopt, in.now});
  const long long step = status["step"].is_number() ? status["step"].get<long long>() : 0;
  const auto record = failure_record(spans_of(in, status));
  const int nodes = c.slurm.nodes.value_or(1);
  json p = {{"campaign", c.name}};
  auto& inputs = p["inputs"];
  inputs = {{"step", step}, {"target_steps", c.target_steps > 0 ? json(c.target_steps) : json(nullptr)},
            {"steps_left", c.target_steps > 0 ? json(std::max(0LL, c.target_steps - step)) : json(nullptr)},
            {"nodes", nodes}, {"step_seconds", or_null(pace.step_p50)}, {"steps_measured", pace.steps},
            {"save_seconds", or_null(pace.save_p50)}, {"save_p95", or_null(pace.save_p95)}, {"saves_measured", pace.saves},
            {"save_every_steps", nullptr}, {"interval", nullptr}};
  if (const auto every = decide::save_every_steps(in.disk.checkpoint_steps)) inputs["save_every_steps"] = *every;
  const auto interval = decide::save_interval(in.disk.checkpoint_steps, pace.step_p50);
  inputs["interval"] = or_null(interval);
  inputs["mtbf"] = mtbf_json(in, record, nodes);
  inputs["restart"] = restart_json(record);
  const auto mtbf = number(inputs["mtbf"]["seconds"]);
  const double restart = inputs["restart"]["seconds"].get<double>();
  std::optional<double> advised;
  if (pace.save_p50 && mtbf) advised = decide::young_daly_interval(*pace.save_p50, *mtbf);
  p["advised"] = {{"interval", or_null(advised)}, {"every_steps", nullptr}};
  if (advised && pace.step_p50 && *pace.step_p50 > 0)
    p["advised"]["every_steps"] = std::max(1LL, std::llround(*advised / *pace.step_p50));
  const auto goodput = [&](std::optional<double> t) -> std::optional<double> {
    if (!t || !pace.save_p50) return std::nullopt;
    return decide::expected_goodput(*t, *pace.save_p50, mtbf, restart);
  };
  const auto now_goodput = goodput(interval), advised_goodput = goodput(advised);
  p["goodput"] = {{"current", or_null(now_goodput)}, {"advised", or_null(advised_goodput)}};
  const long long left = inputs["steps_left"].is_number() ? inputs["steps_left"].get<long long>() : 0;
  const auto wall = [&](std::optional<double> g) {
    return c.target_steps > 0 && g ? decide::wall_to_steps(left, pace.step_p50, *g) : std::nullopt;
  };
  const auto wall_now = wall(now_goodput), wall_advised = wall(advised_goodput);
  p["to_target"] = {{"current", wall_json(wall_now, nodes)}, {"advised", wall_json(wall_advised, nodes)}};
  const long long lead = status["signal_lead"]["next"].get<long long>();
  const auto limit = c.slurm.time_limit ? std::optional<long long>(c.slurm.time_limit->count()) : std::nullopt;
  const auto rest = wall_advised ? wall_advised : wall_now;
  p["time_limit"] = {{"configured", limit ? json(*limit) : json(nullptr)}, {"advised", nullptr}, {"limits_left", nullptr}};
  if (rest) {
    const long long fit = decide::fitting_time_limit(*rest, lead);
    p["time_limit"]["advised"] = limit ? std::min(*limit, fit) : fit;
    if (limit) p["time_limit"]["limits_left"] = decide::time_limits_left(*rest, *limit, lead);
  }
  const auto auto_lead = decide::auto_lead(pace.save_p95, pace.step_p95, limit.value_or(0));
  p["signal_lead"] = {{"configured", c.slurm.signal_lead.value.count()}, {"auto", c.slurm.signal_lead.automatic},
                      {"needed", status["signal_lead"]["needed"]},
                      {"advised", auto_lead ? json(*auto_lead) : json(nullptr)},
                      {"warning", status["signal_lead"]["warning"]}};
  p["disk"] = disk_json(c, pace, in.disk);
  p["advice"] = advice(p);
  return p;
}

std::string plan_text(const json& p) {
  const auto dur = [](const json& v) { return v.is_number() ? human_duration(v.get<double>()) : std::string("?"); };
  const auto& in = p["inputs"];
  std::string t = "plan for " + p.value("campaign", std::string("?")) + "\n";
  t += "  step " + std::to_string(in["step"].get<long long>()) +
       (in["target_steps"].is_number() ? " of " + std::to_string(in["target_steps"].get<long long>()) : "") + ", " +
       std::to_string(in["nodes"].get<int>()) + " node(s)\n";
  t += "  measured: a step " + (in["step_seconds"].is_number() ? std::to_string(in["step_seconds"].get<double>()).substr(0, 5) + " s" : "?") +
       " (" + std::to_string(in["steps_measured"].get<std::size_t>()) + " samples), a save " + dur(in["save_seconds"]) + " (" +
       std::to_string(in["saves_measured"].get<std::size_t>()) + "), a save every " + steps_words(in["save_every_steps"]) + " (" +
       dur(in["interval"]) + " of compute)\n";
  t += mtbf_line(in["mtbf"], in["nodes"].get<int>()) + "; a restart costs " + dur(in["restart"]["seconds"]) + " (" +
       in["restart"].value("source", std::string()) + ")\n";
  if (in["mtbf"].value("source", std::string()) != "accounting") {
    const auto why = accounting_words(in["mtbf"]);
    if (!why.empty()) t += "  cluster history unused" + why + "\n";
  }
  const auto share = [](const json& v) { return v.is_number() ? percent(v.get<double>()) : std::string("?"); };
  t += "  Young/Daly interval: " + dur(p["advised"]["interval"]) + " of compute (" + steps_words(p["advised"]["every_steps"]) +
       "); goodput " + share(p["goodput"]["current"]) + " now, " + share(p["goodput"]["advised"]) + " advised\n";
  const auto target = [&](const json& w) {
    return w.is_object() ? dur(w["wall"]) + ", " + std::to_string(std::lround(w["node_hours"].get<double>())) + " node-hours"
                         : std::string("?");
  };
  if (in["target_steps"].is_number())
    t += "  to target: " + target(p["to_target"]["current"]) + " now; " + target(p["to_target"]["advised"]) + " advised\n";
  t += "  slurm.time: " + dur(p["time_limit"]["configured"]) + " configured, " + dur(p["time_limit"]["advised"]) +
       " advised; signal lead " + dur(p["signal_lead"]["configured"]) + (p["signal_lead"].value("auto", false) ? " (auto)" : "") +
       ", " + dur(p["signal_lead"]["advised"]) + " sized\n";
  for (const auto& line : disk_lines(p["disk"])) t += "  disk: " + line + "\n";
  for (const auto& a : p["advice"]) t += "  advice: " + a.get<std::string>() + "\n";
  return t;
}

}  // namespace mlsup::engine
