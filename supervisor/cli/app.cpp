#include "cli/app.h"

#include <algorithm>
#include <ctime>
#include <functional>
#include <map>
#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/check_verb.h"
#include "cli/exit_codes.h"
#include "cli/campaign_verbs.h"
#include "cli/lifecycle_verbs.h"
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

}  // namespace

int run(int argc, char** argv) {
  CLI::App app{"mlsup " MLSUP_VERSION ": keeps Slurm training campaigns alive", "mlsup"};
  app.set_version_flag("--version", std::function<std::string()>(version_flag),
                       "print mlsup's version and the Slurm it was built against, then exit");
  app.footer(footer());
  app.require_subcommand(1);

  std::string config_path;
  auto* validate = app.add_subcommand("validate", "check a config and its template; render attempt 1 to be sure (a campaign set: the set, then each run)");
  validate->add_option("CONFIG", config_path, "campaign config (YAML), campaign set, or SET:RUN")->required();

  RenderOptions render;
  int render_attempt = 1;
  std::string render_resume;
  std::vector<std::string> render_exclude;
  auto* render_cmd = app.add_subcommand(
      "render", "print the exact script and sbatch command of one attempt: once the campaign has run, the next one as "
                "mlsup would submit it (its tag, resume point, exclusions and working folder from the journal)");
  render_cmd->add_option("CONFIG", render.config_path, "campaign config (YAML)")->required();
  auto* attempt_opt = render_cmd->add_option("--attempt", render_attempt, "attempt number (default: the next one)")
                          ->check(CLI::PositiveNumber);
  auto* resume_opt = render_cmd->add_option("--resume-from", render_resume,
                                            "checkpoint the attempt resumes from (default: the newest complete one)");
  auto* exclude_opt = render_cmd->add_option("--exclude", render_exclude,
                                             "nodes to exclude, comma-separated (default: the live exclusions)")
                          ->delimiter(',');
  render_cmd->add_option("--write", render.write_dir, "write DIR/job.sbatch and DIR/submit.sh instead of printing");
  render_cmd->add_flag("--json", render.json, "print as JSON");

  bool json = false;
  struct CampaignVerb {
    const char* name;
    const char* summary;
    bool has_json;
  };
  const CampaignVerb verbs[] = {
      {"run", "supervise the campaigns until each completes or stops", false},
      {"tick", "one reconcile pass of each campaign, then exit (for cron); prints nothing when nothing happened", false},
      {"status", "the campaign's state, the history of its attempts and its node exclusions; with several, a line each", true},
      {"stop", "set the kill switch: the training saves and exits, nothing more is submitted; with several, a line each", false},
      {"save", "set the save switch: the training saves a checkpoint and goes on; with several, a line each", false},
      {"events", "the event log: every decision and its reason; with several campaigns, merged by time", true},
  };
  std::map<std::string, CLI::App*> campaign_cmds;
  engine::Supervise supervise;
  for (const auto& verb : verbs) {
    auto* sub = app.add_subcommand(verb.name, verb.summary);
    const bool supervises = std::string(verb.name) == "run" || std::string(verb.name) == "tick";
    if (supervises) {
      sub->add_option("CONFIG", supervise.sources, kSourcesHelp)->required();
      sub->add_option("--submit-rate", supervise.submit_rate,
                      "sbatch calls per second at most, over all campaigns, after a burst of 4 (default 2)")
          ->check(CLI::PositiveNumber);
    } else
      sub->add_option("CONFIG", supervise.sources, kFoldersHelp)->required();
    if (verb.has_json) sub->add_flag("--json", json, "print as JSON");
    campaign_cmds[verb.name] = sub;
  }

  auto* run_cmd = campaign_cmds.at("run");
  for (auto* sub : {run_cmd, campaign_cmds.at("tick")})
    sub->add_option("--metrics-textfile", supervise.metrics.textfile,
                    "write the campaigns' Prometheus metrics to this file (replaced whole, for node_exporter's "
                    "textfile collector; run: when they changed, at most every --metrics-every)");
  run_cmd
      ->add_option("--metrics-listen", supervise.metrics.listen,
                   "serve the campaigns' Prometheus metrics at http://HOST:PORT/metrics (e.g. 127.0.0.1:9410)")
      ->check([](const std::string& text) {
        const auto where = edges::parse_listen(text);
        return where ? std::string() : where.error().message;
      });
  run_cmd->add_option("--metrics-every", supervise.metrics.every, "seconds between two metrics expositions at least (default 10)")
      ->check(CLI::PositiveNumber);
  run_cmd->add_flag("--standby", supervise.standby,
                    "wait for a campaign another supervisor holds (asked every 5 s) and take it over once that one stops "
                    "or its lease runs out, instead of exiting 5: a second login node's supervisor");

  bool tick_verbose = false;
  campaign_cmds.at("tick")->add_flag("--verbose,-v", tick_verbose,
                                     "print the closing line also when nothing happened (another supervisor holds "
                                     "the campaign, a standing stop)");

  EventsOptions events;
  std::string since;
  auto* events_cmd = campaign_cmds.at("events");
  events_cmd->add_flag("--follow,-f", events.follow, "after the log, print each event as it is appended, until interrupted");
  events_cmd->add_option("--kind", events.filter.kinds, "only events of this kind (e.g. attempt-ended, excluded); repeat or comma-separate")
      ->delimiter(',');
  events_cmd->add_option("--since", since,
                         "only events from then on: a duration back from now (30m, 2h, 1d), a local time "
                         "(2026-12-02 04:30[:15]) or unix seconds (@1764650000)");
  // The lifecycle verbs: each leaves a request that the campaign's supervisor (or the verb) carries out.
  std::string life_config;
  engine::Request resume_req{.verb = engine::Verb::Resume}, pause_req{.verb = engine::Verb::Pause},
      cancel_req{.verb = engine::Verb::Cancel};
  auto* resume = app.add_subcommand(
      "resume", "reopen a stopped or paused campaign (budgets and the crash-loop count start afresh, the kill switch is "
                "cleared); the next run or tick carries it on");
  resume->add_option("CONFIG", life_config, "campaign config (YAML)")->required();
  resume->add_option("--from", resume_req.from, "the complete checkpoint the next attempt resumes from (default: the newest)");
  auto* pause = app.add_subcommand("pause", "hold the campaign's queued job and start nothing new until `resume`; "
                                            "a running job goes on");
  pause->add_option("CONFIG", life_config, "campaign config (YAML)")->required();
  pause->add_flag("--now", pause_req.now, "also ask the running training to save and exit (the kill switch)");
  auto* cancel = app.add_subcommand("cancel", "end the campaign now: its training is asked to save and exit, then its "
                                              "job is cancelled (a queued one at once)");
  cancel->add_option("CONFIG", life_config, "campaign config (YAML)")->required();

  CheckOptions check;
  auto* check_cmd = add_check_command(app, check);
  ReportOptions report;
  auto* report_cmd = add_report_verb(app, report);

  std::vector<std::string> names;
  for (auto* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    names.push_back(sub->get_name());
    sub->footer("Exit codes: `mlsup --help` lists them.");
  }
  check_cmd->footer(kCheckCodesHelp);
  if (argc > 1 && argv[1][0] != '-' && std::find(names.begin(), names.end(), argv[1]) == names.end()) {
    const auto near = util::did_you_mean(argv[1], names);
    std::cerr << "mlsup: no command \"" << argv[1] << "\"" << (near.empty() ? "" : " (did you mean \"" + near + "\"?)")
              << "; the commands are " << util::join(names, ", ") << "; `mlsup --help` says what each does\n";
    return kUsage;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    if (code != 0 && argc > 1 && std::string(argv[1]) == "check") return kCheckUsage;  // a monitoring system reads UNKNOWN
    return code == 0 ? kOk : kUsage;
  }
  if (validate->parsed()) return validate_verb(config_path);
  if (render_cmd->parsed()) {
    if (attempt_opt->count() > 0) render.attempt = render_attempt;
    if (resume_opt->count() > 0) render.resume_from = render_resume;
    if (exclude_opt->count() > 0) render.exclude = render_exclude;
    return render_verb(render);
  }
  if (resume->parsed()) return lifecycle_verb(life_config, resume_req);
  if (pause->parsed()) return lifecycle_verb(life_config, pause_req);
  if (cancel->parsed()) return lifecycle_verb(life_config, cancel_req);
  if (check_cmd->parsed()) return check_verb(check);
  if (report_cmd->parsed()) return report_verb(report);
  const std::map<std::string, std::function<int()>> actions = {
      {"run", [&] { return run_verb(supervise); }},
      {"tick", [&] { return tick_verb(supervise, tick_verbose); }},
      {"status", [&] { return status_verb(supervise.sources, json); }},
      {"stop", [&] { return switch_verb(supervise.sources, true); }},
      {"save", [&] { return switch_verb(supervise.sources, false); }},
      {"events", [&] { return events_with(events, since, json, supervise.sources); }},
  };
  for (const auto& [name, sub] : campaign_cmds)
    if (sub->parsed()) return actions.at(name)();
  return kUsage;
}

}  // namespace mlsup::cli
