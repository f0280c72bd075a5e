#include "config/schema.h"

#include <algorithm>
#include <array>

namespace mlsup::config {
namespace {

constexpr std::array<std::string_view, 9> kBudgetClasses{
    "failed", "node_fail", "out_of_memory", "hang", "boot_fail", "timeout", "preempted", "planned_exit", "forgotten"};

// The names notify.on may list.
std::vector<std::string_view> alert_kind_names() {
  std::vector<std::string_view> names;
  for (const auto& k : alert_kinds()) names.push_back(k.name);
  return names;
}

// The Config field of the budget for one failure class.
template <std::size_t I>
Field budget_field(Config& c) {
  return &c.policy.budgets[std::string(kBudgetClasses[I])];
}

const std::vector<KeySpec>& table() {
  static const std::vector<KeySpec> keys = {
      {"name", Kind::String, [](Config& c) -> Field { return &c.name; },
       "campaign name: tags its jobs, names its state; letters, digits, '.', '_', '-'"},
      {"template", Kind::Path, [](Config& c) -> Field { return &c.template_path; },
       "sbatch template (or a plain sbatch script) to render for each attempt"},
      {"state_dir", Kind::Path, [](Config& c) -> Field { return &c.state_dir; },
       "journal, events, heartbeats and switches; \"\" = .mlsup/<name> beside the config"},
      {"vars", Kind::StringMap, [](Config& c) -> Field { return &c.vars; },
       "your template variables, used as {{vars.KEY}}"},
      {"slurm.partition", Kind::String, [](Config& c) -> Field { return &c.slurm.partition; },
       "sbatch --partition; \"\" = the script's or the cluster's default"},
      {"slurm.nodes", Kind::OptionalInt, [](Config& c) -> Field { return &c.slurm.nodes; },
       "sbatch --nodes; null = the script's", 1},
      {"slurm.ntasks_per_node", Kind::OptionalInt, [](Config& c) -> Field { return &c.slurm.ntasks_per_node; },
       "sbatch --ntasks-per-node; null = the script's", 1},
      {"slurm.gpus_per_node", Kind::OptionalInt, [](Config& c) -> Field { return &c.slurm.gpus_per_node; },
       "sbatch --gpus-per-node; null = the script's", 0},
      {"slurm.cpus_per_task", Kind::OptionalInt, [](Config& c) -> Field { return &c.slurm.cpus_per_task; },
       "sbatch --cpus-per-task; null = the script's", 1},
      {"slurm.time", Kind::SlurmTime, [](Config& c) -> Field { return &c.slurm.time; },
       "sbatch --time as Slurm writes it (\"20:00:00\", \"1-00:00:00\"); \"\" = the script's"},
      {"slurm.signal", Kind::Choice, [](Config& c) -> Field { return &c.slurm.signal; },
       "pre-timeout signal sent to the batch shell (--signal=B:SIG@LEAD)", 0,
       {"USR1", "USR2", "TERM", "INT", "HUP", "URG"}},
      {"slurm.signal_lead", Kind::DurationOrAuto, [](Config& c) -> Field { return &c.slurm.signal_lead; },
       "how long before the time limit the signal comes; auto: a save and a step as measured (p95), with a margin "
       "(5m until a save was measured)"},
      {"slurm.array", Kind::ArraySpec, [](Config& c) -> Field { return &c.slurm.array; },
       "sbatch --array, e.g. \"1-10%1\" to chain ten jobs; \"\" = one job per attempt"},
      {"slurm.chain_start_wait", Kind::Duration, [](Config& c) -> Field { return &c.slurm.chain_start_wait; },
       "how long a chain task waits at its start for the values mlsup prepares for its attempt"},
      {"slurm.spare_nodes", Kind::Int, [](Config& c) -> Field { return &c.slurm.spare_nodes; },
       "nodes the job holds beyond the training's (sbatch --nodes=N+K --no-kill): a failed or hung node's "
       "training restarts inside the job on a spare, without a new submission", 0},
      {"slurm.extra_args", Kind::StringList, [](Config& c) -> Field { return &c.slurm.extra_args; },
       "more sbatch options, each one argument, e.g. [\"--account=ml\", \"--qos=high\"]"},
      {"slurm.backend", Kind::Choice, [](Config& c) -> Field { return &c.slurm.backend; },
       "how mlsup talks to Slurm: libslurm, or Slurm's commands (cli) where the library does not fit", 0,
       {"auto", "libslurm", "cli"}},
      {"checkpoint.dir", Kind::Path, [](Config& c) -> Field { return &c.checkpoint.dir; },
       "where the training writes checkpoints; \"\" = <state_dir>/checkpoints"},
      {"checkpoint.layout", Kind::Choice, [](Config& c) -> Field { return &c.checkpoint.layout; },
       "how checkpoints are laid out", 0, {"megatron", "deepspeed", "hf", "glob"}},
      {"checkpoint.glob", Kind::String, [](Config& c) -> Field { return &c.checkpoint.glob; },
       "glob layout: entries of checkpoint.dir that are checkpoints"},
      {"checkpoint.step_regex", Kind::String, [](Config& c) -> Field { return &c.checkpoint.step_regex; },
       "glob layout: regex whose first group is the step number in an entry's name"},
      {"checkpoint.complete_marker", Kind::String, [](Config& c) -> Field { return &c.checkpoint.complete_marker; },
       "a file inside a checkpoint that marks it complete; \"\" = the layout's own rule"},
      {"checkpoint.keep", Kind::Int, [](Config& c) -> Field { return &c.checkpoint.keep; },
       "complete checkpoints to keep (never the newest or the one resumed from); 0 = keep all", 0},
      {"checkpoint.fallback_after", Kind::Int, [](Config& c) -> Field { return &c.checkpoint.fallback_after; },
       "attempts in a row that resume from the newest complete checkpoint and fail before any step (a crash or a "
       "hang, no node blamed) before it is quarantined (moved into .quarantine/, never deleted) and the next "
       "resumes from the one before it; 0 = never", 0},
      {"checkpoint.max_quarantined", Kind::Int, [](Config& c) -> Field { return &c.checkpoint.max_quarantined; },
       "checkpoints quarantined in a row (no progress between) before the campaign stops instead", 1},
      {"heartbeat.enabled", Kind::Bool, [](Config& c) -> Field { return &c.heartbeat.enabled; },
       "judge liveness (a hang is found by it)"},
      {"heartbeat.source", Kind::Choice, [](Config& c) -> Field { return &c.heartbeat.source; },
       "what liveness is judged from: auto (the job's output growing until the training writes its heartbeat "
       "file, then the file), file (MLSUP_HEARTBEAT_FILE only) or output (the job's output only)",
       0, {"auto", "file", "output"}},
      {"heartbeat.dir", Kind::Path, [](Config& c) -> Field { return &c.heartbeat.dir; },
       "where each attempt's heartbeat file is made; \"\" = <state_dir>/heartbeats"},
      {"heartbeat.startup_timeout", Kind::Duration, [](Config& c) -> Field { return &c.heartbeat.startup_timeout; },
       "from the job starting to its first heartbeat"},
      {"heartbeat.steady_timeout", Kind::Duration, [](Config& c) -> Field { return &c.heartbeat.steady_timeout; },
       "longest silence between heartbeats once training runs"},
      {"heartbeat.save_timeout", Kind::Duration, [](Config& c) -> Field { return &c.heartbeat.save_timeout; },
       "longest silence while the heartbeat names a phase after the step (\"saving\", \"eval\": any lowercase word)"},
      {"heartbeat.probe_timeout", Kind::Duration, [](Config& c) -> Field { return &c.heartbeat.probe_timeout; },
       "before a hung job is cancelled, each of its nodes must answer a probe step within this, or be excluded"},
      {"heartbeat.hang_command", Kind::String, [](Config& c) -> Field { return &c.heartbeat.hang_command; },
       "run through /bin/sh before a hung job is cancelled (e.g. a stack dump through srun --overlap --jobid "
       "\"$MLSUP_JOB_ID\"); its output goes to <state_dir>/attempts/<N>/hang-evidence.txt; \"\" = none"},
      {"heartbeat.hang_command_timeout", Kind::Duration,
       [](Config& c) -> Field { return &c.heartbeat.hang_command_timeout; }, "how long the hang command may take"},
      {"heartbeat.node_dump", Kind::Choice, [](Config& c) -> Field { return &c.heartbeat.node_dump; },
       "auto: at a hang where no rank made a stacks file (a training without the Python helper), one step over the "
       "nodes that answer the probe writes what each of the job's processes does (state, wait channel, stacks by "
       "py-spy or gdb where installed, nvidia-smi -q where present) to <state_dir>/attempts/<N>/hang/node-<node>.txt; off",
       0, {"auto", "off"}},
      {"heartbeat.node_dump_timeout", Kind::Duration, [](Config& c) -> Field { return &c.heartbeat.node_dump_timeout; },
       "how long the node dump's step may take; what it printed by then is kept"},
      {"heartbeat.stacks_signal", Kind::Choice, [](Config& c) -> Field { return &c.heartbeat.stacks_signal; },
       "at a hang, before the cancel, sent to the job's steps (not the batch shell) when the ranks' helper registered "
       "for it (MLSUP_STACKS_SIGNAL): each rank's Python stacks land in <state_dir>/attempts/<N>/hang/; USR1 by default "
       "when slurm.signal is USR2; \"\" = none",
       0, {"", "USR1", "USR2", "URG", "WINCH"}},
      {"heartbeat.stacks_wait", Kind::Duration, [](Config& c) -> Field { return &c.heartbeat.stacks_wait; },
       "how long the ranks have to dump their stacks before the hang is judged without the ones missing"},
      {"heartbeat.calibrate", Kind::Bool, [](Config& c) -> Field { return &c.heartbeat.calibrate; },
       "shorten steady_timeout to calibrate_factor times the longest step seen in this campaign (20 steps at least)"},
      {"heartbeat.calibrate_factor", Kind::Int, [](Config& c) -> Field { return &c.heartbeat.calibrate_factor; },
       "calibrated steady timeout = this x the longest interval between steps seen", 2},
      {"heartbeat.calibrate_min", Kind::Duration, [](Config& c) -> Field { return &c.heartbeat.calibrate_min; },
       "the calibrated steady timeout is never shorter than this (nor than three poll intervals)"},
      {"switches.kill", Kind::Path, [](Config& c) -> Field { return &c.switches.kill; },
       "kill switch file (MLSUP_KILL_SWITCH); \"\" = <state_dir>/kill-switch"},
      {"switches.save", Kind::Path, [](Config& c) -> Field { return &c.switches.save; },
       "save switch file (MLSUP_SAVE_SWITCH); \"\" = <state_dir>/save-switch"},
      {"policy.budgets.failed", Kind::Budget, budget_field<0>, "restarts after a non-zero exit or a fatal signal"},
      {"policy.budgets.node_fail", Kind::Budget, budget_field<1>, "restarts after a node failure"},
      {"policy.budgets.out_of_memory", Kind::Budget, budget_field<2>, "restarts after OUT_OF_MEMORY"},
      {"policy.budgets.hang", Kind::Budget, budget_field<3>, "restarts after a hang (stale heartbeat)"},
      {"policy.budgets.boot_fail", Kind::Budget, budget_field<4>, "restarts after BOOT_FAIL"},
      {"policy.budgets.timeout", Kind::Budget, budget_field<5>, "restarts after the time limit"},
      {"policy.budgets.preempted", Kind::Budget, budget_field<6>, "restarts after preemption"},
      {"policy.budgets.planned_exit", Kind::Budget, budget_field<7>,
       "restarts after a clean exit short of target.steps"},
      {"policy.budgets.forgotten", Kind::Budget, budget_field<8>,
       "restarts after Slurm's controller forgot a job that never started or whose processes are gone"},
      {"policy.crash_loop_restarts", Kind::Int, [](Config& c) -> Field { return &c.policy.crash_loop_restarts; },
       "restarts in a row without step progress that stop the campaign", 1},
      {"policy.backoff_initial", Kind::Duration, [](Config& c) -> Field { return &c.policy.backoff_initial; },
       "wait before the first resubmission after a failure, or before retrying a failed sbatch; doubles each time"},
      {"policy.backoff_max", Kind::Duration, [](Config& c) -> Field { return &c.policy.backoff_max; },
       "longest wait between failures and resubmission"},
      {"policy.submit_retry_for", Kind::Duration, [](Config& c) -> Field { return &c.policy.submit_retry_for; },
       "how long sbatch is retried after an error that may pass (an accounting/QOS limit, an unknown error) before the campaign stops"},
      {"policy.submit_unknown_grace", Kind::Duration, [](Config& c) -> Field { return &c.policy.submit_unknown_grace; },
       "after an sbatch that may have created the job (timed out, no answer), how long the job's tag must stay "
       "absent from Slurm's queue (and looked for at least 3 times) before the attempt is submitted again"},
      {"policy.stop_grace", Kind::Duration, [](Config& c) -> Field { return &c.policy.stop_grace; },
       "how long a training asked through the kill switch to save and exit (`mlsup cancel`, a window's end) has "
       "before its job is cancelled; longer when its saves were measured to take longer (twice the p95 save), "
       "and never while its heartbeat says `saving`, up to heartbeat.save_timeout"},
      {"policy.exclusion_ttl", Kind::Duration, [](Config& c) -> Field { return &c.policy.exclusion_ttl; },
       "how long a node blamed for a failure stays excluded"},
      {"policy.exclusion_unexplained", Kind::Choice, [](Config& c) -> Field { return &c.policy.exclusion_unexplained; },
       "a failure of a job of several nodes that nothing explains (no evidence rule, no machine fault's signal, no "
       "silent node): first = the node of its first failing task is excluded at once (the first-evidence rule); "
       "second = only when that node was named so by another failure within the failed budget's window", 0,
       {"first", "second"}},
      {"policy.exclusion_unexplained_ttl", Kind::Duration,
       [](Config& c) -> Field { return &c.policy.exclusion_unexplained_ttl; },
       "how long an exclusion of the first-evidence rule lasts; policy.exclusion_ttl when not set"},
      {"policy.exclusion_cap", Kind::Int, [](Config& c) -> Field { return &c.policy.exclusion_cap; },
       "most nodes excluded at once; 0 = as many as keep the job schedulable", 0},
      {"policy.exclusion_relax_after", Kind::Duration,
       [](Config& c) -> Field { return &c.policy.exclusion_relax_after; },
       "a job pending this long because excluded nodes are missing (ReqNodeNotAvail) gets its oldest exclusion dropped"},
      {"policy.no_retry_exit_code", Kind::Int, [](Config& c) -> Field { return &c.policy.no_retry_exit_code; },
       "exit code by which the training says \"do not retry\"", 1},
      {"policy.pending_alert_after", Kind::Duration, [](Config& c) -> Field { return &c.policy.pending_alert_after; },
       "alert when a job stays pending this long for a reason only a person ends (a hold, a partition down); "
       "a request that can never start as asked is told at once"},
      {"target.steps", Kind::Long, [](Config& c) -> Field { return &c.target_steps; },
       "step the training must reach; 0 = a COMPLETED job ends the campaign", 0},
      {"stragglers.slower_by", Kind::Int, [](Config& c) -> Field { return &c.stragglers.slower_by; },
       "percent: a rank whose own compute per step (its heartbeat's compute=, which the helper writes with "
       "job.computing()) exceeds the median of the other ranks' by this much is slower",
       1},
      {"stragglers.for", Kind::Duration, [](Config& c) -> Field { return &c.stragglers.for_time; },
       "a rank slower for this long without a break is a straggler: an event and an alert (kind straggler), once "
       "until it recovers"},
      {"preflight.command", Kind::String, [](Config& c) -> Field { return &c.preflight.command; },
       "run by the shipped templates through bash as one task per node before the training, with the job's nodes in "
       "order in MLSUP_PREFLIGHT_NODES (MLSUP_PREFLIGHT); a failure ends the job with its exit code. `python3 -m "
       "mlsup_train.preflight` runs one all-reduce over every node and names a node whose task did not join; \"\" = none"},
      {"preflight.deadline", Kind::Duration, [](Config& c) -> Field { return &c.preflight.deadline; },
       "how long the preflight waits for every node's task to join (MLSUP_PREFLIGHT_DEADLINE, in seconds)"},
      {"disk.runway_alert", Kind::Duration, [](Config& c) -> Field { return &c.disk.runway_alert; },
       "alert when the checkpoint file system would be full sooner than this at the campaign's pace (the newest "
       "checkpoint's size, the save cadence, checkpoint.keep, the bytes and inodes free)"},
      {"evidence.rules", Kind::EvidenceRules, [](Config& c) -> Field { return &c.evidence.rules; },
       "your rules over an attempt's output and logs, tried before the shipped ones: each a name, an ECMAScript "
       "pattern, a class, a blame (none, node_in_line, rank_in_line, node_of_log) and an action (retry, "
       "retry_no_blame, stop, stop_alert); try one with `mlsup explain --rules FILE --log FILE`"},
      {"debug_on_retry.enabled", Kind::Bool, [](Config& c) -> Field { return &c.debug_on_retry.enabled; },
       "after a failure or hang no evidence rule explains, the next attempt runs with debug_on_retry.env, until one "
       "makes progress"},
      {"debug_on_retry.env", Kind::StringMap, [](Config& c) -> Field { return &c.debug_on_retry.env; },
       "the environment such an attempt gets (NCCL and torch.distributed debugging, the NCCL flight recorder); "
       "{{attempt_dir}} in a value is the attempt's folder"},
      {"poll_interval", Kind::Interval, [](Config& c) -> Field { return &c.poll_interval; },
       "how often Slurm, heartbeats and switches are looked at"},
      {"pending_poll_interval", Kind::Interval, [](Config& c) -> Field { return &c.pending_poll_interval; },
       "how often they are looked at while the campaign's job only waits in the queue (never more often than "
       "poll_interval): a stop, a pause or the job's start is seen this much later at most"},
      {"running_poll_interval", Kind::Interval, [](Config& c) -> Field { return &c.running_poll_interval; },
       "how often Slurm is asked about a running job while nothing cheaper moved (its end record not landed, its "
       "heartbeat progressing, its time limit not near); the heartbeat and switches are still looked at every "
       "poll_interval; an ending that tells none of them is seen this much later at most"},
      {"lease_ttl", Kind::Duration, [](Config& c) -> Field { return &c.lease_ttl; },
       "how long a supervisor's claim on the campaign lasts unrenewed: one on another host may take over a campaign "
       "whose supervisor died after this long (on the same host, at once); renewed when half is gone; at least five polls"},
      {"memory_save_interval", Kind::Duration, [](Config& c) -> Field { return &c.memory_save_interval; },
       "how often at most what the passes observe without deciding (the heartbeat's step, the pace, the time the "
       "job was last seen running) is saved to memory.json, unsynced; whatever a decision changes is saved at once, "
       "and a tick or a supervisor's stop saves the rest"},
      {"notify.command", Kind::String, [](Config& c) -> Field { return &c.notify.command; },
       "shell command run for each alert, with MLSUP_EVENT_* set; \"\" = none"},
      {"notify.webhook", Kind::String, [](Config& c) -> Field { return &c.notify.webhook; },
       "http:// or https:// URL that receives each alert as a POST (the body: notify.format); \"\" = none"},
      {"notify.cooldown", Kind::Duration, [](Config& c) -> Field { return &c.notify.cooldown; },
       "least time between two alerts of the same kind"},
      {"notify.on", Kind::ChoiceList, [](Config& c) -> Field { return &c.notify.on; },
       "the kinds of alert told (see the reference config); [] = none", 0, alert_kind_names()},
      {"notify.format", Kind::Choice, [](Config& c) -> Field { return &c.notify.format; },
       "the webhook's body: json (the event, with alert_kind and summary) or slack ({\"text\": one line})", 0,
       {"json", "slack"}},
      {"notify.ca_file", Kind::Path, [](Config& c) -> Field { return &c.notify.ca_file; },
       "https webhook: PEM file of the CAs that may sign the server's certificate; \"\" = the system's store"},
      {"notify.unreachable_after", Kind::Duration, [](Config& c) -> Field { return &c.notify.unreachable_after; },
       "Slurm's controller unanswered this long is a trouble alert"},
      {"notify.include_output", Kind::Bool, [](Config& c) -> Field { return &c.notify.include_output; },
       "the webhook's json body carries the last lines of the job's output (which may hold tokens or data)"},
      {"notify.budget_warn_at", Kind::Int, [](Config& c) -> Field { return &c.notify.budget_warn_at; },
       "a budget alert when this percent of a restart budget is used within its window (1-100)", 1},
      {"window.hours", Kind::String, [](Config& c) -> Field { return &c.window.hours; },
       "when the campaign's jobs may run: local \"HH:MM-HH:MM\" (\"20:00-07:00\" runs past midnight); \"\" = always"},
      {"window.days", Kind::StringList, [](Config& c) -> Field { return &c.window.days; },
       "the days the window opens on (mon..sun, mon-fri, weekdays, weekends); [] = every day"},
      {"window.zone", Kind::String, [](Config& c) -> Field { return &c.window.zone; },
       "the time zone of hours and days, a tz database name (Europe/Berlin); \"\" = the machine's own"},
      {"window.at_end", Kind::Choice, [](Config& c) -> Field { return &c.window.at_end; },
       "at the window's end: pause (the training saves and exits; the next window carries it on) or finish (the "
       "running job goes on to its end; nothing new starts)", 0, {"pause", "finish"}},
  };
  return keys;
}

}  // namespace

std::span<const KeySpec> schema() { return table(); }

const KeySpec* find_key(std::string_view path) {
  for (const auto& spec : table())
    if (spec.path == path) return &spec;
  return nullptr;
}

bool is_group(std::string_view path) {
  if (path.empty()) return true;
  return std::any_of(table().begin(), table().end(), [&](const KeySpec& spec) {
    return spec.path.size() > path.size() && spec.path.substr(0, path.size()) == path && spec.path[path.size()] == '.';
  });
}

std::vector<std::string> names_under(std::string_view group) {
  std::vector<std::string> names;
  const std::size_t skip = group.empty() ? 0 : group.size() + 1;
  for (const auto& spec : table()) {
    if (!group.empty() && !is_group(group)) break;
    if (!group.empty() && (spec.path.size() <= skip || spec.path.substr(0, skip) != std::string(group) + ".")) continue;
    const std::string_view rest = spec.path.substr(skip);
    std::string name(rest.substr(0, rest.find('.')));
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(std::move(name));
  }
  return names;
}

Config defaults() {
  Config c;
  const Budget unlimited{.count = -1, .window = Seconds(0)};
  c.policy.budgets = {
      {"failed", {5, Seconds(6 * 3600)}},   {"node_fail", {10, Seconds(6 * 3600)}},
      {"out_of_memory", {2, Seconds(6 * 3600)}}, {"hang", {5, Seconds(6 * 3600)}},
      {"boot_fail", {5, Seconds(6 * 3600)}}, {"timeout", unlimited},
      {"preempted", unlimited},              {"planned_exit", unlimited},
      {"forgotten", {10, Seconds(6 * 3600)}},
  };
  return c;
}

std::span<const std::string_view> budget_classes() { return kBudgetClasses; }

}  // namespace mlsup::config
