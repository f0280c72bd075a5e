#include "cli/app.h"

#include <functional>
#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/exit_codes.h"
#include "cli/verbs.h"
#include "util/strings.h"

namespace mlsup::cli {
namespace {

// Verbs that the help lists but this build does not carry out yet.
struct PlannedVerb {
  const char* name;
  const char* summary;
};

constexpr PlannedVerb kPlannedVerbs[] = {
    {"run", "supervise a campaign until it completes or stops (not in this build yet)"},
    {"tick", "one reconcile pass, for cron (not in this build yet)"},
    {"status", "show a campaign's state (not in this build yet)"},
    {"stop", "create the kill switch: the training saves and exits, nothing is resubmitted (not in this build yet)"},
    {"save", "create the save switch: the training saves a checkpoint and goes on (not in this build yet)"},
    {"events", "print a campaign's event log (not in this build yet)"},
};

constexpr const char* kFooter = R"(Exit codes:
  0  done
  1  a runtime failure (a file could not be written, ...)
  2  the command line is wrong
  3  the config or the template is wrong (the message says file:line:column)
  4  the verb is not in this build
See README.md and configs/reference.yaml.)";

}  // namespace

int run(int argc, char** argv) {
  CLI::App app{"mlsup " MLSUP_VERSION ": keeps Slurm training campaigns alive", "mlsup"};
  app.set_version_flag("--version", "mlsup " MLSUP_VERSION);
  app.footer(kFooter);
  app.require_subcommand(1);

  std::string config_path;
  auto* validate = app.add_subcommand("validate", "check a config and its template; render attempt 1 to be sure");
  validate->add_option("CONFIG", config_path, "campaign config (YAML)")->required();

  RenderOptions render;
  auto* render_cmd = app.add_subcommand("render", "print the exact script and sbatch command of one attempt");
  render_cmd->add_option("CONFIG", render.config_path, "campaign config (YAML)")->required();
  render_cmd->add_option("--attempt", render.attempt, "attempt number")->check(CLI::PositiveNumber);
  render_cmd->add_option("--resume-from", render.resume_from, "checkpoint the attempt resumes from");
  render_cmd->add_option("--exclude", render.exclude, "nodes to exclude (comma-separated)")->delimiter(',');
  render_cmd->add_option("--write", render.write_dir, "write DIR/job.sbatch and DIR/submit.sh instead of printing");
  render_cmd->add_flag("--json", render.json, "print as JSON");

  std::string planned_name;
  for (const auto& verb : kPlannedVerbs) {
    auto* sub = app.add_subcommand(verb.name, verb.summary);
    sub->allow_extras();
    sub->callback([&planned_name, name = verb.name] { planned_name = name; });
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? kOk : kUsage;
  }
  if (validate->parsed()) return validate_verb(config_path);
  if (render_cmd->parsed()) return render_verb(render);
  std::cerr << "mlsup " << planned_name << ": not in this build (mlsup " MLSUP_VERSION ")\n";
  return kNotAvailable;
}

}  // namespace mlsup::cli
