#include "cli/init_verb.h"

#include <algorithm>
#include <filesystem>
#include <iostream>

#include "cli/exit_codes.h"
#include "cli/starter_templates.h"
#include "cli/verbs.h"
#include "journal/atomic_file.h"
#include "util/strings.h"

namespace mlsup::cli {
namespace fs = std::filesystem;
namespace {

// What differs between the starters: how the training's processes are started, and the vars it needs.
struct Launch {
  std::string_view kind;
  std::string_view how;     // a comment line: who starts the processes
  bool per_node = false;    // vars.nproc_per_node: a launcher per node starts the workers
  std::string_view layout;  // checkpoint.layout that fits the usual trainer of the kind
};

constexpr Launch kLaunches[] = {
    {"srun", "srun starts slurm.ntasks_per_node python processes per node itself (RANK, WORLD_SIZE set)", false, "glob"},
    {"torchrun", "one torchrun per node starts vars.nproc_per_node workers (c10d rendezvous on the first node)", true,
     "glob"},
    {"accelerate", "one `accelerate launch --multi_gpu` per node starts vars.nproc_per_node workers", true, "hf"},
    {"megatron", "one `deepspeed --no_ssh` per node starts vars.nproc_per_node workers of a Megatron-style script", true,
     "megatron"},
};

const Launch* launch_of(const std::string& kind) {
  const auto it = std::find_if(std::begin(kLaunches), std::end(kLaunches), [&](const Launch& l) { return l.kind == kind; });
  return it == std::end(kLaunches) ? nullptr : &*it;
}

// A campaign name from a folder's name: the characters a name may hold, "training" when none is left.
std::string name_from(const fs::path& dir) {
  std::string name;
  for (const char ch : fs::absolute(dir).lexically_normal().filename().string())
    name += std::isalnum(static_cast<unsigned char>(ch)) || ch == '.' || ch == '_' || ch == '-' ? ch : '-';
  while (!name.empty() && !std::isalnum(static_cast<unsigned char>(name.front()))) name.erase(name.begin());
  if (name.size() > 64) name.resize(64);
  return name.empty() ? "training" : name;
}

// The starter config: every key a first campaign sets, and the contract with the training in comments.
std::string starter_config(const std::string& name, const Launch& l, const std::string& template_file) {
  std::string out;
  out += "# mlsup campaign " + name + " (written by `mlsup init --template " + std::string(l.kind) + "`).\n";
  out += "# Check it: mlsup validate campaign.yaml     Run it: mlsup run campaign.yaml (or `tick` from cron)\n";
  out += "# Every key and its default: configs/reference.yaml in the mlsup sources (share/mlsup/configs).\n";
  out += "name: " + name + "\n";
  out += "# The batch script, rendered for each attempt: {{slurm.*}} from slurm: below, {{vars.*}} from vars:.\n";
  out += "# " + std::string(l.how) + ".\n";
  out += "template: " + template_file + "\n\n";
  out += "vars:\n";
  out += "  # The training script, run with python on the job's nodes (relative to this folder, where jobs start).\n";
  out += "  script: train.py\n";
  out += "  # Its arguments, inserted raw (shell words): \"$MLSUP_CHECKPOINT_DIR\" expands when the job runs.\n";
  out += "  script_args: \"\"\n";
  if (l.per_node) out += "  # Training processes per node: one per GPU.\n  nproc_per_node: \"1\"\n";
  out += "\nslurm:\n  nodes: 1\n";
  out += l.per_node ? "  ntasks_per_node: 1  # one launcher per node\n" : "  ntasks_per_node: 1  # processes per node: one per GPU\n";
  out += "  time: \"01:00:00\"   # each job's limit; mlsup asks for a save slurm.signal_lead before it\n";
  out += "  # partition: gpu\n  # gpus_per_node: 8\n\n";
  out += "# The contract. Each job's training gets in its environment:\n"
         "#   MLSUP_RESUME_FROM     the checkpoint to resume from (\"\" on a fresh start): load it first\n"
         "#   MLSUP_CHECKPOINT_DIR  where to save, one folder (or file) per checkpoint with its step in the name\n"
         "#   MLSUP_HEARTBEAT_FILE  write \"STEP\" into it (atomically) as steps go by: silence is a hang\n"
         "#   MLSUP_SAVE_SWITCH     when this file appears, save a checkpoint and go on\n"
         "#   MLSUP_KILL_SWITCH     when this file appears, save and exit 0: the campaign stops\n"
         "# and SIGUSR1 slurm.signal_lead before the time limit: save and exit, mlsup resubmits. Exit\n"
         "# MLSUP_NO_RETRY_EXIT_CODE (13) for a failure that a retry cannot fix. The python helper\n"
         "# (`import mlsup_train`) does all of this; README.md, \"The training contract\", says more.\n";
  out += "checkpoint:\n";
  out += "  layout: " + std::string(l.layout) + "\n";
  if (l.layout == "glob") out += "  # A file the training writes last into each checkpoint: only then is it complete.\n  complete_marker: COMPLETE\n";
  out += "  keep: 3             # complete checkpoints kept; older ones are deleted (0: keep all)\n\n";
  out += "heartbeat:\n"
         "  startup_timeout: 30m  # from the job's start to its first heartbeat (imports, data loading)\n"
         "  steady_timeout: 10m   # the longest silence between two heartbeats before the job counts as hung\n\n";
  out += "policy:\n  budgets:\n    failed: 5/1d        # at most 5 failed attempts a day, then the campaign stops\n";
  return out;
}

// Writes text to path unless it exists (or force); says what it did or why not.
bool write_new(const fs::path& path, const std::string& text, bool force) {
  std::error_code ec;
  if (!force && fs::exists(path, ec)) {
    std::cerr << "mlsup init: " << path.string() << " exists; keep it, or pass --force to write over it\n";
    return false;
  }
  if (auto ok = journal::write_atomically(path.string(), text, 0644); !ok) {
    std::cerr << "mlsup init: cannot write " << path.string() << ": " << ok.error().message << "\n";
    return false;
  }
  std::cout << "wrote " << path.string() << "\n";
  return true;
}

}  // namespace

CLI::App* add_init_command(CLI::App& app, InitOptions& o) {
  std::vector<std::string> kinds;
  for (const auto& l : kLaunches) kinds.emplace_back(l.kind);
  auto* cmd = app.add_subcommand("init", "write a starter campaign.yaml and batch script template into DIR (default: "
                                         "here), with the contract with the training explained; they validate as written");
  cmd->add_option("DIR", o.dir, "the folder to write into (made when missing)");
  cmd->add_option("--template", o.kind, "how the training is started: " + util::join(kinds, ", ") + " (default torchrun)")
      ->check(CLI::IsMember(kinds));
  cmd->add_option("--name", o.name, "the campaign's name (default: the folder's name)");
  cmd->add_flag("--force", o.force, "write over files that exist");
  return cmd;
}

int init_verb(const InitOptions& o) {
  const Launch* l = launch_of(o.kind);
  const auto& all = starter_templates();
  const auto shipped = std::find_if(all.begin(), all.end(), [&](const StarterTemplate& t) { return t.kind == o.kind; });
  if (!l || shipped == all.end()) {
    std::cerr << "mlsup init: --template " << o.kind << ": no such template\n";
    return kUsage;
  }
  std::error_code ec;
  fs::create_directories(o.dir, ec);
  if (ec) {
    std::cerr << "mlsup init: cannot make " << o.dir << ": " << ec.message() << "\n";
    return kRuntimeFailure;
  }
  const std::string template_file = o.kind + ".sbatch.tmpl";
  const fs::path config = fs::path(o.dir) / "campaign.yaml";
  const std::string name = o.name.empty() ? name_from(o.dir) : o.name;
  if (!write_new(fs::path(o.dir) / template_file, std::string(shipped->text), o.force) ||
      !write_new(config, starter_config(name, *l, template_file), o.force))
    return kRuntimeFailure;
  std::cout << "next: put your training at " << (fs::path(o.dir) / "train.py").string()
            << " (or change vars.script), then `mlsup run " << config.string() << "`\n";
  return validate_verb({config.string()});
}

}  // namespace mlsup::cli
