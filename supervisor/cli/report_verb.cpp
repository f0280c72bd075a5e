#include "cli/report_verb.h"

#include <algorithm>
#include <filesystem>
#include <iostream>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "campaign/disk_facts.h"
#include "cli/campaign_verbs.h"
#include "events/kinds.h"
#include "events/outside.h"
#include "cli/events_view.h"
#include "cli/exit_codes.h"
#include "config/load.h"
#include "campaign/notify.h"
#include "journal/atomic_file.h"
#include "report/facts.h"
#include "report/html.h"
#include "report/markdown.h"
#include "report/summary.h"
#include "store/read_campaign.h"
#include "report/svg.h"
#include "util/json.h"
#include "views/plan_view.h"

namespace mlsup::cli {
namespace {

using nlohmann::json;

// A set's gate on the run in words ("waiting after first (running)"); "" when it holds nothing back.
std::string gate_words(const json& view) {
  if (!view.contains("set") || !view["set"]["gate_reason"].is_string()) return "";
  return util::string_field(view["set"], "gate") + " " + util::string_field(view["set"], "gate_reason");
}

// `mlsup plan` of the campaign now (its advice, its runway; the cluster's accounting is not asked).
json plan_of(const config::Config& c, const store::StoredCampaign& stored, const engine::Clocks& clocks) {
  return engine::plan_json({c, stored.journal.state, stored.memory,
                            engine::disk_facts(c, stored.memory), std::nullopt, clocks});
}

// The checkpoint file system's runway in words, from a plan; "" when none was worked out.
std::string runway_of(const json& plan) {
  for (const auto& fs : plan["disk"]["file_systems"])
    if (fs["runway"].is_object()) return fs["runway"].value("text", std::string());
  return "";
}

// One campaign's facts over the window, from what `status` reads of it at the same clocks.
report::RunFacts facts_of(const config::Config& c, const std::string& file, const report::Window& w,
                          const engine::Clocks& clocks) {
  const auto stored = store::read_campaign(c, clocks, true);
  const json view = status_json(c, stored, clocks);
  const json plan = plan_of(c, stored, clocks);
  const report::RunInput in{.run = c.name, .config = file, .state = stored.journal.state, .records = stored.journal.records,
                            .current_step = view["step"].is_number_integer() ? view["step"].get<long long>() : -1,
                            .state_name = util::string_field(view, "state"),
                            .job_state = util::string_field(view, "job_state"), .gate = gate_words(view),
                            .advice = plan["advice"].get<std::vector<std::string>>(), .runway = runway_of(plan)};
  return report::run_facts(in, w);
}

// Writes the three files into dir; the first error.
util::Result<void> write_files(const report::Report& r, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  const std::pair<const char*, std::string> files[] = {
      {"report.md", report::render_markdown(r)},
      {"report.svg", report::render_svg(r)},
      {"report.html", report::render_html(r, report::render_svg(r, false))}};
  for (const auto& [name, text] : files)
    if (auto ok = journal::write_atomically(dir + "/" + name, text); !ok) return ok;
  return {};
}

// Sends line through each distinct notification channel of the configs (a command, a webhook; the first config
// that names it gives the folder it runs in and the cooldown), as an alert of kind "report"; what happened, per channel.
std::vector<std::string> notify_all(const std::vector<config::Config>& configs, const std::string& line, double now) {
  std::vector<std::string> out, seen;
  for (const auto& c : configs) {
    const std::string channel = c.notify.command + "\n" + c.notify.webhook;
    if (c.notify.command.empty() && c.notify.webhook.empty()) continue;
    if (std::find(seen.begin(), seen.end(), channel) != seen.end()) continue;
    seen.push_back(channel);
    const std::string name = c.set_file.empty() ? c.name : std::filesystem::path(c.set_file).stem().string();
    const json event = events::line(events::Report{.reason = line}, now, name);
    out.push_back(c.name + "'s channels: " + engine::Notifier(c.notify, c.state_dir, c.base_dir).alert(event, now));
  }
  if (out.empty()) out.push_back("no run names a notification channel (notify.command, notify.webhook)");
  return out;
}

}  // namespace

CLI::App* add_report_verb(CLI::App& app, ReportOptions& o) {
  auto* sub = app.add_subcommand("report", "the morning report: each run's attempts, endings, exclusions, steps, time "
                                           "lost and goodput over a window, as HTML, Markdown and an SVG timeline");
  sub->add_option("CONFIG", o.sources,
                  "campaign sets (each stands for its runs), SET:RUN, campaign configs and folders of them")
      ->required();
  sub->add_option("--since", o.since,
                  "the window's start (default 12h): a duration back from now (30m, 12h, 1d), a local time "
                  "(2026-12-02 04:30[:15]) or unix seconds (@1764650000)");
  sub->add_option("--out", o.out_dir,
                  "the folder report.html, report.md and report.svg are written to (default: the current folder; "
                  "made if missing, the files replaced)");
  sub->add_flag("--json", o.json, "print the report's facts as JSON (the files are written all the same)");
  sub->add_flag("--notify", o.notify,
                "also send the report in one line through the runs' notification channels (notify.command, "
                "notify.webhook; each channel once, alert kind report, its cooldown); run from cron at the time wanted");
  return sub;
}

int report_verb(const ReportOptions& o) {
  const auto clocks = engine::clocks_now();
  const auto since = parse_since(o.since, clocks.wall);
  if (!since) {
    std::cerr << "mlsup report: " << since.error().str() << "\n";
    return kUsage;
  }
  std::vector<std::string> problems;
  const auto files = engine::config_files(o.sources, problems);
  int code = problems.empty() ? kOk : kBadInput;
  for (const auto& p : problems) std::cerr << "mlsup: " << p << "\n";
  report::Report r{.window = {*since, clocks.wall}};
  std::vector<config::Config> configs;
  for (const auto& file : files) {
    auto c = config::load_config_file(file);
    if (!c) {
      for (const auto& e : c.error()) std::cerr << e.str() << "\n";
      code = kBadInput;
      continue;
    }
    r.runs.push_back(facts_of(*c, file, r.window, clocks));
    configs.push_back(std::move(*c));
  }
  if (r.runs.empty() && code != kOk) return code;  // nothing loaded: an empty report would read as a quiet night
  if (auto ok = write_files(r, o.out_dir); !ok) {
    std::cerr << "mlsup report: " << ok.error().str() << "\n";
    return kRuntimeFailure;
  }
  if (o.notify)
    for (const auto& said : notify_all(configs, report::summary_line(r), clocks.wall)) std::cerr << "mlsup report: " << said << "\n";
  if (o.json) std::cout << util::dump_json(report::to_json(r), 2) << "\n";
  else
    std::cout << "mlsup report: " << r.runs.size() << " run(s); wrote " << o.out_dir << "/report.html, report.md and "
              << "report.svg\n";
  return code;
}

}  // namespace mlsup::cli
