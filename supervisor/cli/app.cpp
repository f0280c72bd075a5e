#include "cli/app.h"

#include <algorithm>
#include <functional>
#include <map>
#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/exit_codes.h"
#include "cli/campaign_verbs.h"
#include "cli/verbs.h"
#include "util/strings.h"

namespace mlsup::cli {
namespace {

constexpr const char* kSourcesHelp =
    "campaign configs (YAML) and folders; a folder stands for the *.yaml and *.yml files directly inside it "
    "(other files and subfolders are not read). Several campaigns share one Slurm job query per pass; each "
    "keeps its own state directory, journal, lease and poll interval (a pass every poll_interval of its own)";

constexpr const char* kFoldersHelp =
    "campaign configs (YAML) and folders; a folder stands for the *.yaml and *.yml files directly inside it";

// The --help footer: every exit code, from the one table.
std::string footer() { return "Exit codes:\n" + decide::exit_code_help() + "See README.md and configs/reference.yaml."; }

}  // namespace

int run(int argc, char** argv) {
  CLI::App app{"mlsup " MLSUP_VERSION ": keeps Slurm training campaigns alive", "mlsup"};
  app.set_version_flag("--version", "mlsup " MLSUP_VERSION);
  app.footer(footer());
  app.require_subcommand(1);

  std::string config_path;
  auto* validate = app.add_subcommand("validate", "check a config and its template; render attempt 1 to be sure");
  validate->add_option("CONFIG", config_path, "campaign config (YAML)")->required();

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
      {"tick", "one reconcile pass of each campaign, then exit (for cron)", false},
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

  std::vector<std::string> names;
  for (auto* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    names.push_back(sub->get_name());
    sub->footer("Exit codes: `mlsup --help` lists them.");
  }
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
    return code == 0 ? kOk : kUsage;
  }
  if (validate->parsed()) return validate_verb(config_path);
  if (render_cmd->parsed()) {
    if (attempt_opt->count() > 0) render.attempt = render_attempt;
    if (resume_opt->count() > 0) render.resume_from = render_resume;
    if (exclude_opt->count() > 0) render.exclude = render_exclude;
    return render_verb(render);
  }
  const std::map<std::string, std::function<int()>> actions = {
      {"run", [&] { return run_verb(supervise); }},
      {"tick", [&] { return tick_verb(supervise); }},
      {"status", [&] { return status_verb(supervise.sources, json); }},
      {"stop", [&] { return switch_verb(supervise.sources, true); }},
      {"save", [&] { return switch_verb(supervise.sources, false); }},
      {"events", [&] { return events_verb(supervise.sources, json); }},
  };
  for (const auto& [name, sub] : campaign_cmds)
    if (sub->parsed()) return actions.at(name)();
  return kUsage;
}

}  // namespace mlsup::cli
