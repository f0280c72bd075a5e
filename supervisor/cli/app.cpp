#include "cli/app.h"

#include <algorithm>
#include <ctime>
#include <functional>
#include <optional>
#include <iostream>
#include <stdexcept>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/check_verb.h"
#include "cli/exclusions_verb.h"
#include "cli/explain_verb.h"
#include "cli/init_verb.h"
#include "cli/logs_verb.h"
#include "cli/status_watch.h"
#include "cli/exit_codes.h"
#include "cli/campaign_verbs.h"
#include "cli/lifecycle_verbs.h"
#include "cli/plan_verb.h"
#include "cli/report_verb.h"
#include "cli/verbs.h"
#include "cli/version.h"
#include "edges/metrics_server.h"
#include "util/strings.h"

namespace mlsup::cli {
namespace {

constexpr const char* kSourcesHelp =
    "campaign configs (YAML) and folders; a folder stands for the *.yaml and *.yml files directly inside it "
    "(other files and subfolders are not read); a campaign set (a file with `runs:`) stands for each of its runs, "
    "SET:RUN for one. Several campaigns share one Slurm job query per pass; each keeps its own state directory, "
    "journal, lease and poll interval (a pass every poll_interval of its own)";

constexpr const char* kFoldersHelp =
    "campaign configs (YAML) and folders; a folder stands for the *.yaml and *.yml files directly inside it, a "
    "campaign set for each of its runs, SET:RUN for one";

// The --help footer: every exit code, from the one table.
std::string footer() {
  return "Exit codes:\n" + decide::exit_code_help() + kCheckCodesHelp + "See README.md and configs/reference.yaml.";
}

// `mlsup events` with its options; a --since it cannot read is wrong use.
int events_with(EventsOptions o, const std::string& since, bool json, const std::vector<std::string>& sources) {
  o.json = json;
  if (!since.empty()) {
    const auto at = parse_since(since, static_cast<double>(std::time(nullptr)));
    if (!at) {
      std::cerr << "mlsup events: " << at.error().str() << "\n";
      return kUsage;
    }
    o.filter.since = *at;
  }
  return events_verb(sources, o);
}

// Everything the command line sets: CLI11 writes the options into these while it parses.
struct Parsed {
  std::vector<std::string> config_paths;  // validate
  RenderOptions render;
  int render_attempt = 1;
  std::string render_resume;
  std::vector<std::string> render_exclude;
  bool json = false;
  bool watch = false;  // status --watch
  std::string history = "50";  // status --history N|all
  engine::Supervise supervise;  // run, tick, status, stop, save, events: its sources
  bool tick_verbose = false;
  EventsOptions events;
  std::string since;
  std::string life_config;  // resume, pause, cancel, unexclude, exclusions
  engine::Request resume{.verb = engine::Verb::Resume}, pause{.verb = engine::Verb::Pause},
      cancel{.verb = engine::Verb::Cancel}, unexclude{.verb = engine::Verb::Unexclude};
  CheckOptions check;
  LogsOptions logs;
  InitOptions init;
  ReportOptions report;
  PlanOptions plan;
  ExplainOptions explain;
};

// status --history: a count of attempts above 0, or all; nullopt when it is neither.
std::optional<std::size_t> history_limit(const std::string& v) {
  if (v == "all") return kAllHistory;
  std::size_t used = 0;
  try {
    const long long n = std::stoll(v, &used);
    if (used == v.size() && n > 0) return static_cast<std::size_t>(n);
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

// A verb: its subcommand, and what runs once the command line named it.
struct Verb {
  CLI::App* command;
  std::function<int()> act;
};

Verb add_validate(CLI::App& app, Parsed& p) {
  auto* cmd = app.add_subcommand(
      "validate", "check configs and their templates, every problem of each at once; render attempt 1 to be sure (a "
                  "campaign set: the set, then each run)");
  cmd->add_option("CONFIG", p.config_paths, "campaign configs (YAML), campaign sets, or SET:RUN")->required();
  return {cmd, [&p] { return validate_verb(p.config_paths); }};
}

Verb add_render(CLI::App& app, Parsed& p) {
  auto* cmd = app.add_subcommand(
      "render", "print the exact script and sbatch command of one attempt: once the campaign has run, the next one as "
                "mlsup would submit it (its tag, resume point, exclusions and working folder from the journal)");
  cmd->add_option("CONFIG", p.render.config_path, "campaign config (YAML)")->required();
  auto* attempt = cmd->add_option("--attempt", p.render_attempt, "attempt number (default: the next one)")
                      ->check(CLI::PositiveNumber);
  auto* resume = cmd->add_option("--resume-from", p.render_resume,
                                 "checkpoint the attempt resumes from (default: the newest complete one)");
  auto* exclude = cmd->add_option("--exclude", p.render_exclude,
                                  "nodes to exclude, comma-separated (default: the live exclusions)")
                      ->delimiter(',');
  cmd->add_option("--write", p.render.write_dir, "write DIR/job.sbatch and DIR/submit.sh instead of printing");
  cmd->add_flag("--json", p.render.json, "print as JSON");
  return {cmd, [&p, attempt, resume, exclude] {  // an option given overrides what the journal would say
            if (attempt->count() > 0) p.render.attempt = p.render_attempt;
            if (resume->count() > 0) p.render.resume_from = p.render_resume;
            if (exclude->count() > 0) p.render.exclude = p.render_exclude;
            return render_verb(p.render);
          }};
}

// A verb over configs, folders and sets (run, tick, status, stop, save, events).
CLI::App* add_campaign_verb(CLI::App& app, Parsed& p, const char* name, const char* summary, bool has_json) {
  auto* cmd = app.add_subcommand(name, summary);
  cmd->add_option("CONFIG", p.supervise.sources, kFoldersHelp)->required();
  if (has_json) cmd->add_flag("--json", p.json, "print as JSON");
  return cmd;
}

// run and tick: the sources' help at length, the submit rate and the metrics file.
CLI::App* add_supervising_verb(CLI::App& app, Parsed& p, const char* name, const char* summary) {
  auto* cmd = app.add_subcommand(name, summary);
  cmd->add_option("CONFIG", p.supervise.sources, kSourcesHelp)->required();
  cmd->add_option("--submit-rate", p.supervise.submit_rate,
                  "sbatch calls per second at most, over all campaigns, after a burst of 4 (default 2)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--metrics-textfile", p.supervise.metrics.textfile,
                  "write the campaigns' Prometheus metrics to this file (replaced whole, for node_exporter's "
                  "textfile collector; run: when they changed, at most every --metrics-every)");
  return cmd;
}

Verb add_run(CLI::App& app, Parsed& p) {
  auto* cmd = add_supervising_verb(app, p, "run", "supervise the campaigns until each completes or stops");
  cmd->add_option("--metrics-listen", p.supervise.metrics.listen,
                  "serve the campaigns' Prometheus metrics at http://HOST:PORT/metrics (e.g. 127.0.0.1:9410)")
      ->check([](const std::string& text) {
        const auto where = edges::parse_listen(text);
        return where ? std::string() : where.error().message;
      });
  cmd->add_option("--metrics-every", p.supervise.metrics.every, "seconds between two metrics expositions at least (default 10)")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--standby", p.supervise.standby,
                "wait for a campaign another supervisor holds (asked every 5 s) and take it over once that one stops "
                "or its lease runs out, instead of exiting 5: a second login node's supervisor");
  return {cmd, [&p] { return run_verb(p.supervise); }};
}

Verb add_tick(CLI::App& app, Parsed& p) {
  auto* cmd = add_supervising_verb(
      app, p, "tick", "one reconcile pass of each campaign, then exit (for cron); prints nothing when nothing happened");
  cmd->add_flag("--verbose,-v", p.tick_verbose,
                "print the closing line also when nothing happened (another supervisor holds the campaign, a standing "
                "stop)");
  return {cmd, [&p] { return tick_verb(p.supervise, p.tick_verbose); }};
}

Verb add_status(CLI::App& app, Parsed& p) {
  auto* cmd = add_campaign_verb(
      app, p, "status", "the campaign's state, the history of its attempts and its node exclusions; with several, a line each",
      true);
  cmd->add_flag("--watch", p.watch,
                "refresh in place every second (a line per change when not a terminal), the heartbeat read from its "
                "files, Slurm asked at most every 5 s; Ctrl-C ends")
      ->excludes("--json");
  cmd->add_option("--history", p.history, "how many of the newest attempts to show (the earlier ones are counted), or all")
      ->check([](const std::string& v) { return history_limit(v) ? std::string() : "N (a whole number above 0) or all"; })
      ->capture_default_str();
  return {cmd, [&p] {
            return p.watch ? status_watch(p.supervise.sources, {})
                           : status_verb(p.supervise.sources, p.json, history_limit(p.history).value_or(kStatusHistory));
          }};
}

Verb add_stop(CLI::App& app, Parsed& p) {
  auto* cmd = add_campaign_verb(
      app, p, "stop", "set the kill switch: the training saves and exits, nothing more is submitted; with several, a line each",
      false);
  return {cmd, [&p] { return switch_verb(p.supervise.sources, true); }};
}

Verb add_save(CLI::App& app, Parsed& p) {
  auto* cmd = add_campaign_verb(
      app, p, "save", "set the save switch: the training saves a checkpoint and goes on; with several, a line each", false);
  return {cmd, [&p] { return switch_verb(p.supervise.sources, false); }};
}

Verb add_events(CLI::App& app, Parsed& p) {
  auto* cmd = add_campaign_verb(
      app, p, "events", "the event log: every decision and its reason; with several campaigns, merged by time", true);
  cmd->add_flag("--follow,-f", p.events.follow, "after the log, print each event as it is appended, until interrupted");
  cmd->add_option("--kind", p.events.filter.kinds,
                  "only events of this kind (e.g. attempt-ended, excluded); repeat or comma-separate")
      ->delimiter(',');
  cmd->add_option("--since", p.since,
                  "only events from then on: a duration back from now (30m, 2h, 1d), a local time "
                  "(2026-12-02 04:30[:15]) or unix seconds (@1764650000)");
  return {cmd, [&p] { return events_with(p.events, p.since, p.json, p.supervise.sources); }};
}

// The lifecycle verbs: each leaves a request that the campaign's supervisor (or the verb) carries out.
CLI::App* add_lifecycle_verb(CLI::App& app, Parsed& p, const char* name, const char* summary) {
  auto* cmd = app.add_subcommand(name, summary);
  cmd->add_option("CONFIG", p.life_config, "campaign config (YAML)")->required();
  return cmd;
}

Verb add_resume(CLI::App& app, Parsed& p) {
  auto* cmd = add_lifecycle_verb(app, p, "resume",
                                 "reopen a stopped or paused campaign (budgets and the crash-loop count start afresh, "
                                 "the kill switch is cleared); the next run or tick carries it on");
  cmd->add_option("--from", p.resume.from, "the complete checkpoint the next attempt resumes from (default: the newest)");
  return {cmd, [&p] { return lifecycle_verb(p.life_config, p.resume); }};
}

Verb add_pause(CLI::App& app, Parsed& p) {
  auto* cmd = add_lifecycle_verb(app, p, "pause",
                                 "hold the campaign's queued job and start nothing new until `resume`; a running job "
                                 "goes on");
  cmd->add_flag("--now", p.pause.now, "also ask the running training to save and exit (the kill switch)");
  return {cmd, [&p] { return lifecycle_verb(p.life_config, p.pause); }};
}

Verb add_cancel(CLI::App& app, Parsed& p) {
  auto* cmd = add_lifecycle_verb(app, p, "cancel",
                                 "end the campaign now: its training is asked to save and exit, then its job is "
                                 "cancelled (a queued one at once)");
  return {cmd, [&p] { return lifecycle_verb(p.life_config, p.cancel); }};
}

Verb add_unexclude(CLI::App& app, Parsed& p) {
  auto* cmd = add_lifecycle_verb(app, p, "unexclude",
                                 "lift a node's live exclusion (journaled with who and why): the next attempt may "
                                 "run on it; `exclusions` lists them");
  cmd->add_option("NODE", p.unexclude.node, "the excluded node")->required();
  cmd->add_option("--why", p.unexclude.why, "why it is lifted, for the journal and the event (e.g. the node was repaired)");
  return {cmd, [&p] { return lifecycle_verb(p.life_config, p.unexclude); }};
}

Verb add_exclusions(CLI::App& app, Parsed& p) {
  auto* cmd = app.add_subcommand("exclusions",
                                 "the campaign's node exclusions, live ones first, each with its evidence (the attempt, "
                                 "its class, the rule) and who lifted it early");
  cmd->add_option("CONFIG", p.life_config, "campaign config (YAML)")->required();
  cmd->add_flag("--json", p.json, "print as JSON");
  return {cmd, [&p] { return exclusions_verb(p.life_config, p.json); }};
}

Verb add_check(CLI::App& app, Parsed& p) {
  auto* cmd = add_check_command(app, p.check);
  return {cmd, [&p] { return check_verb(p.check); }};
}

Verb add_init(CLI::App& app, Parsed& p) {
  auto* cmd = add_init_command(app, p.init);
  return {cmd, [&p] { return init_verb(p.init); }};
}

Verb add_logs(CLI::App& app, Parsed& p) {
  auto* cmd = add_logs_command(app, p.logs);
  return {cmd, [&p] { return logs_verb(p.logs); }};
}

Verb add_report(CLI::App& app, Parsed& p) {
  auto* cmd = add_report_verb(app, p.report);
  return {cmd, [&p] { return report_verb(p.report); }};
}

Verb add_plan(CLI::App& app, Parsed& p) {
  auto* cmd = add_plan_verb(app, p.plan);
  return {cmd, [&p] { return plan_verb(p.plan); }};
}

Verb add_explain(CLI::App& app, Parsed& p) {
  auto* cmd = add_explain_verb(app, p.explain);
  return {cmd, [&p] { return explain_verb(p.explain); }};
}

// Every verb, in the order --help and a mistyped command list them.
constexpr Verb (*kVerbs[])(CLI::App&, Parsed&) = {
    add_validate, add_render, add_run, add_tick, add_status, add_stop, add_save, add_events, add_resume, add_pause,
    add_cancel, add_exclusions, add_unexclude, add_logs, add_explain, add_check, add_report, add_plan, add_init};

// A first word that names no command: the nearest one and the list (exit 2); nullopt when it names one
// (or is an option).
std::optional<int> unknown_command(int argc, char** argv, const std::vector<std::string>& names) {
  if (argc < 2 || argv[1][0] == '-' || std::find(names.begin(), names.end(), argv[1]) != names.end()) return std::nullopt;
  const auto near = util::did_you_mean(argv[1], names);
  std::cerr << "mlsup: no command \"" << argv[1] << "\"" << (near.empty() ? "" : " (did you mean \"" + near + "\"?)")
            << "; the commands are " << util::join(names, ", ") << "; `mlsup --help` says what each does\n";
  return kUsage;
}

}  // namespace

int run(int argc, char** argv) {
  CLI::App app{"mlsup " MLSUP_VERSION ": keeps Slurm training campaigns alive", "mlsup"};
  app.set_version_flag("--version", std::function<std::string()>(version_flag),
                       "print mlsup's version and the Slurm it was built against, then exit");
  app.footer(footer());
  app.require_subcommand(1);
  Parsed parsed;
  std::vector<Verb> verbs;
  std::vector<std::string> names;
  for (const auto add : kVerbs) {
    verbs.push_back(add(app, parsed));
    auto* cmd = verbs.back().command;
    names.push_back(cmd->get_name());
    cmd->footer(cmd->get_name() == "check" ? kCheckCodesHelp : "Exit codes: `mlsup --help` lists them.");
  }
  if (const auto code = unknown_command(argc, argv, names)) return *code;
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    if (code != 0 && argc > 1 && std::string(argv[1]) == "check") return kCheckUsage;  // a monitoring system reads UNKNOWN
    return code == 0 ? kOk : kUsage;
  }
  for (const auto& verb : verbs)
    if (verb.command->parsed()) return verb.act();
  return kUsage;
}

}  // namespace mlsup::cli
