#include <doctest/doctest.h>

#include <algorithm>

#include "config/load.h"
#include "support.h"

using namespace mlsup;
using mlsup::test::TempDir;

namespace {

constexpr const char* kMinimal = "name: demo\ntemplate: job.sbatch\n";

struct Loaded {
  TempDir dir;
  std::expected<config::Config, config::Errors> result;
};

// Loads yaml from a temporary folder that also holds job.sbatch.
std::expected<config::Config, config::Errors> load(const TempDir& dir, const std::string& yaml) {
  dir.write("job.sbatch", "#!/bin/bash\nsrun true\n");
  const auto path = dir.write("c.yaml", yaml);
  return config::load_config_file(path);
}

// The one error a bad config gives, as "line:column: subject: message" without the file.
std::string only_error(const std::string& yaml) {
  TempDir dir;
  const auto r = load(dir, yaml);
  REQUIRE_FALSE(r.has_value());
  REQUIRE(r.error().size() == 1);
  auto e = r.error().front();
  CHECK(e.file.find("c.yaml") != std::string::npos);
  e.file.clear();
  return std::to_string(e.line) + ":" + std::to_string(e.column) + ": " + e.subject + ": " + e.message;
}

void check_error(const std::string& yaml, const std::string& where, const std::string& what) {
  CAPTURE(yaml);
  const auto e = only_error(yaml);
  CAPTURE(e);
  CHECK(e.substr(0, where.size()) == where);
  CHECK(e.find(what) != std::string::npos);
}

}  // namespace

TEST_CASE("a minimal config gets every default, with paths beside the config") {
  TempDir dir;
  const auto c = load(dir, kMinimal).value();
  CHECK(c.name == "demo");
  CHECK(c.template_path == dir.path() + "/job.sbatch");
  CHECK(c.state_dir == dir.path() + "/.mlsup/demo");
  CHECK(c.checkpoint.dir == c.state_dir + "/checkpoints");
  CHECK(c.heartbeat.dir == c.state_dir + "/heartbeats");
  CHECK(c.switches.kill == c.state_dir + "/kill-switch");
  CHECK(c.switches.save == c.state_dir + "/save-switch");
  CHECK(c.poll_interval == config::Millis(500));
  CHECK(c.slurm.signal == "USR1");
  CHECK(c.policy.budgets.at("failed").count == 5);
  CHECK(c.policy.budgets.at("timeout").count == -1);
  CHECK(c.is_set("name"));
  CHECK_FALSE(c.is_set("slurm.signal"));
  CHECK(c.heartbeat.stacks_signal == "USR2");
  CHECK(c.policy.exclusion_unexplained == "first");
  CHECK(c.policy.exclusion_unexplained_ttl == c.policy.exclusion_ttl);
  CHECK(c.preflight.command.empty());
  CHECK(c.preflight.deadline == config::Seconds(120));
}

TEST_CASE("values of every kind are read, and relative paths resolve against the config's folder") {
  TempDir dir;
  const auto c = load(dir, R"(name: llama-7b
template: job.sbatch
state_dir: state
vars: {lr: 3e-4, layers: 32, flag: true, empty: }
slurm:
  partition: gpu
  nodes: 4
  ntasks_per_node: 8
  gpus_per_node: null
  time: "1-00:00:00"
  signal: USR2
  signal_lead: 10m
  array: "1-10%1"
  extra_args: ["--qos=high", "--account=ml"]
checkpoint: {dir: /ckpt/llama, layout: megatron, keep: 3}
heartbeat: {enabled: yes, startup_timeout: 20m, steady_timeout: 2m, save_timeout: 1h}
policy:
  budgets: {failed: 3/1h, timeout: unlimited}
  exclusion_cap: 2
target: {steps: 100000}
poll_interval: 2s
notify: {webhook: "http://hooks.example/x", cooldown: 1h}
)").value();
  CHECK(c.state_dir == dir.path() + "/state");
  CHECK(c.vars.at("lr") == "3e-4");
  CHECK(c.vars.at("flag") == "true");
  CHECK(c.vars.at("empty") == "");
  CHECK(c.slurm.nodes == 4);
  CHECK_FALSE(c.slurm.gpus_per_node.has_value());
  CHECK(c.slurm.time_limit == config::Seconds(86400));
  CHECK(c.slurm.array_spec->task_ids.size() == 10);
  CHECK(c.slurm.extra_args.size() == 2);
  CHECK(c.checkpoint.dir == "/ckpt/llama");
  CHECK(c.checkpoint.layout == "megatron");
  CHECK(c.heartbeat.save_timeout == config::Seconds(3600));
  CHECK(c.heartbeat.stacks_signal == "USR1");  // not the pre-timeout signal (slurm.signal USR2) by default
  CHECK(c.policy.budgets.at("failed").count == 3);
  CHECK(c.policy.budgets.at("failed").window == config::Seconds(3600));
  CHECK(c.policy.budgets.at("node_fail").count == 10);
  CHECK(c.target_steps == 100000);
  CHECK(c.written.at("slurm.nodes").line == 7);
  CHECK(c.written.at("slurm.nodes").column == 3);
}

TEST_CASE("a home-relative path expands") {
  TempDir dir;
  ::setenv("HOME", dir.path().c_str(), 1);
  const auto c = load(dir, std::string(kMinimal) + "state_dir: ~/runs/x\n").value();
  CHECK(c.state_dir == dir.path() + "/runs/x");
}

TEST_CASE("YAML structure errors") {
  check_error(std::string(kMinimal) + "polll_interval: 5s\n", "3:1: polll_interval: ", "unknown key (did you mean \"poll_interval\"?)");
  check_error(std::string(kMinimal) + "zzz: 1\n", "3:1: zzz: ", "unknown key (known here: name, template");
  check_error(std::string(kMinimal) + "slurm:\n  partiton: gpu\n", "4:3: slurm.partiton: ", "did you mean \"partition\"?");
  check_error(std::string(kMinimal) + "policy:\n  budgets:\n    nod_fail: 1/1h\n", "5:5: policy.budgets.nod_fail: ",
              "did you mean \"node_fail\"?");
  check_error(std::string(kMinimal) + "name: again\n", "3:1: name: ", "is given twice");
  check_error(std::string(kMinimal) + "slurm: 5\n", "3:8: slurm: ", "expected a mapping");
  check_error("- a\n- b\n", "1:1: config: ", "expected a mapping");
  check_error("name: [unclosed\n", "2:1: : ", "not valid YAML");
  check_error("", "0:0: : ", "the config is empty");
}

TEST_CASE("wrong values of each kind") {
  const std::string m = kMinimal;
  check_error(m + "notify:\n  command: [a]\n", "4:12: notify.command: ", "expected a single value, got a list");
  check_error(m + "slurm:\n  nodes: two\n", "4:10: slurm.nodes: ", "\"two\" is not an integer");
  check_error(m + "slurm:\n  nodes: 0\n", "4:10: slurm.nodes: ", "too small (the least is 1)");
  check_error(m + "checkpoint:\n  keep: 99999999999\n", "4:9: checkpoint.keep: ", "too large");
  check_error(m + "target:\n  steps: -1\n", "4:10: target.steps: ", "too small");
  check_error(m + "heartbeat:\n  enabled: maybe\n", "4:12: heartbeat.enabled: ", "is not true or false");
  check_error(m + "poll_interval: 5 minutes\n", "3:16: poll_interval: ", "\"5 minutes\" is not a duration (try \"90s\"");
  check_error(m + "poll_interval: {a: 1}\n", "3:16: poll_interval: ", "expected a duration");
  check_error(m + "slurm:\n  time: 10 hours\n", "4:9: slurm.time: ", "is not a Slurm time");
  check_error(m + "slurm:\n  array: 1-x\n", "4:10: slurm.array: ", "array spec \"1-x\"");
  check_error(m + "checkpoint:\n  layout: megatorn\n", "4:11: checkpoint.layout: ", "(did you mean \"megatron\"?)");
  check_error(m + "slurm:\n  signal: KILL\n", "4:11: slurm.signal: ", "is not one of: USR1, USR2");
  check_error(m + "slurm:\n  signal: USR2\nheartbeat:\n  stacks_signal: USR2\n", "6:3: heartbeat.stacks_signal: ",
              "is slurm.signal too");
  check_error(m + "heartbeat:\n  startup_timeout: 1m\npreflight:\n  command: true\n  deadline: 1m\n",
              "7:3: preflight.deadline: ", "is not shorter than heartbeat.startup_timeout");
  check_error(m + "slurm:\n  extra_args: --qos=high\n", "4:15: slurm.extra_args: ", "expected a list");
  check_error(m + "slurm:\n  extra_args: [{a: b}]\n", "4:15: slurm.extra_args: ", "expected a single value in the list");
  check_error(m + "vars: [1, 2]\n", "3:7: vars: ", "expected a mapping of names to values");
  check_error(m + "vars:\n  1x: 2\n", "4:3: vars: ", "\"1x\" is not a variable name");
  check_error(m + "vars:\n  a: [1]\n", "4:3: vars: ", "expected a single value for \"a\"");
  check_error(m + "policy:\n  budgets:\n    failed: 3\n", "5:13: policy.budgets.failed: ", "is not a budget");
  check_error(m + "policy:\n  budgets:\n    failed: x/1h\n", "5:13: policy.budgets.failed: ", "is not a budget");
  check_error(m + "policy:\n  budgets:\n    failed: 3/abc\n", "5:13: policy.budgets.failed: ", "is not a budget");
  check_error(m + "policy:\n  budgets:\n    failed: 3/0s\n", "5:13: policy.budgets.failed: ", "has a zero window");
}

TEST_CASE("missing requirements and impossible combinations") {
  const std::string m = kMinimal;
  check_error("template: job.sbatch\n", "0:0: name: ", "is required");
  check_error("name: a b\ntemplate: job.sbatch\n", "1:1: name: ", "is not a usable name");
  check_error("name: demo\n", "0:0: template: ", "is required");
  check_error("name: demo\ntemplate: nope.sbatch\n", "2:1: template: ", "does not exist");
  check_error("name: demo\ntemplate: .\n", "2:1: template: ", "is not a regular file");
  check_error(m + "poll_interval: 0s\n", "3:1: poll_interval: ", "must be at least \"100ms\"");
  check_error(m + "lease_ttl: 5s\n", "3:1: lease_ttl: ", "must be at least \"10s\"");
  check_error(m + "heartbeat:\n  steady_timeout: 1500ms\n", "4:19: heartbeat.steady_timeout: ", "is not a whole number of seconds");
  check_error(m + "poll_interval: 1m\nheartbeat:\n  startup_timeout: 30s\n", "5:3: heartbeat.startup_timeout: ",
              "\"30s\" is shorter than poll_interval \"1m\"");
  check_error(m + "poll_interval: 1m\nheartbeat:\n  startup_timeout: 1h\n  steady_timeout: 30s\n",
              "6:3: heartbeat.steady_timeout: ", "shorter than poll_interval");
  check_error(m + "heartbeat:\n  steady_timeout: 1h\n  save_timeout: 10m\n", "5:3: heartbeat.save_timeout: ",
              "shorter than heartbeat.steady_timeout");
  check_error(m + "slurm:\n  time: \"00:05:00\"\n  signal_lead: 5m\n", "5:3: slurm.signal_lead: ",
              "is not shorter than the time limit");
  check_error(m + "slurm:\n  signal_lead: sometimes\n", "4:16: slurm.signal_lead: ", "or \"auto\"");
  check_error(m + "policy:\n  backoff_initial: 1h\n  backoff_max: 1m\n", "5:3: policy.backoff_max: ",
              "shorter than policy.backoff_initial");
  check_error(m + "checkpoint:\n  step_regex: \"(\"\n", "4:3: checkpoint.step_regex: ", "not a valid regular expression");
  check_error(m + "checkpoint:\n  step_regex: \"\\\\d+\"\n", "4:3: checkpoint.step_regex: ", "has no group");
  check_error(m + "checkpoint:\n  glob: \"\"\n", "4:3: checkpoint.glob: ", "must not be empty");
  check_error(m + "checkpoint:\n  keep: 2\n", "4:3: checkpoint.keep: ", "needs checkpoint.complete_marker with the glob layout");
  check_error(m + "notify:\n  webhook: ftp://x\n", "4:3: notify.webhook: ", "is not an http:// or https:// URL");
  check_error(m + "notify:\n  budget_warn_at: 120\n", "4:3: notify.budget_warn_at: ", "is more than 100");
  check_error(m + "state_dir: s\ncheckpoint:\n  dir: s\n", "3:1: state_dir: ", "same folder as checkpoint.dir");
}

TEST_CASE("slurm.extra_args may not take over an option mlsup controls, in any spelling") {
  const std::string m = std::string(kMinimal) + "slurm:\n  extra_args: ";
  const auto refused = [&](const std::string& list, const std::string& what) {
    check_error(m + list + "\n", "4:3: slurm.extra_args: ", what);
  };
  refused("[\"--comment=note\"]", "\"--comment=note\" would replace mlsup's job tag");
  refused("[--comment, note]", "\"--comment\" would replace mlsup's job tag");
  refused("[--comm=x]", "\"--comm=x\" would replace mlsup's job tag");  // sbatch takes a unique prefix
  refused("[--requeue]", "policy.budgets");
  refused("[\"--signal=B:USR2@60\"]", "slurm.signal and slurm.signal_lead");
  refused("[--exclude=n1]", "#SBATCH --exclude");
  refused("[-x, n1]", "\"-x\" would replace the nodes mlsup excludes");
  refused("[-xn1]", "#SBATCH --exclude");
  refused("[-Hx, n1]", "#SBATCH --exclude");  // a flag, then -x
  refused("[-o, out.log]", "#SBATCH --output");
  refused("[--output=out.log]", "#SBATCH --output");
  refused("[--export=NONE]", "#SBATCH --export");
  refused("[--array=1-3%1]", "slurm.array");
  refused("[-a, 1-3]", "slurm.array");
  refused("[-N2]", "slurm.nodes");
  refused("[--nodes, \"2\"]", "slurm.nodes");
  refused("[-t, \"1:00:00\"]", "slurm.time");
  refused("[--time=60]", "slurm.time");
  refused("[--wait]", "sbatch would wait");
  refused("[-W]", "sbatch would wait");
  refused("[\"--wrap=python3 t.py\"]", "the template");
  refused("[--test-only]", "submits nothing");
  refused("[-M, other]", "another cluster");
  // every collision in one message
  refused("[--qos=high, --requeue, -x, n1]", "\"--requeue\" would turn Slurm's requeue back on");
  refused("[--qos=high, --requeue, -x, n1]", "; \"-x\" would replace");
}

TEST_CASE("slurm.extra_args may set what mlsup leaves alone") {
  TempDir dir;
  const auto r = load(dir, std::string(kMinimal) +
                               "slurm:\n  extra_args: [--qos=high, --account=ml, --job-name=x, -J, x, --dependency=singleton,"
                               " -d, singleton, --error=e.log, -e, e.log, --no-requeue, --exclusive, --time-min=10,"
                               " --nodelist=n1, --export-file=f, --parsable, -p, gpu, -H, --wait-all-nodes=1, -k]\n");
  CHECK(r.has_value());
}

TEST_CASE("a step_regex too long to compile safely is refused, not compiled") {
  const std::string m = kMinimal;
  const std::string deep = std::string(30000, '(') + "a" + std::string(30000, ')');  // overflowed the stack
  check_error(m + "checkpoint:\n  step_regex: \"" + deep + "\"\n", "4:3: checkpoint.step_regex: ", "is too long");
  const std::string long_ok = "(\\\\d+)" + std::string(995, 'x');  // 1000 characters once read: (\d+)xxx...
  const auto c = load(TempDir(), m + "checkpoint:\n  step_regex: \"" + long_ok + "\"\n");
  CHECK(c.has_value());
}

TEST_CASE("heartbeat timeouts are not checked when heartbeats are off") {
  TempDir dir;
  CHECK(load(dir, std::string(kMinimal) + "poll_interval: 1m\nheartbeat:\n  enabled: false\n  startup_timeout: 30s\n").has_value());
}

TEST_CASE("every problem is reported, not only the first") {
  TempDir dir;
  const auto r = load(dir, "name: demo\ntemplate: job.sbatch\nslurm: {nodes: x, time: y}\nzz: 1\n");
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().size() == 3);
}

TEST_CASE("a config file that cannot be read") {
  const auto r = config::load_config_file("/nonexistent/c.yaml");
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().front().str() == "/nonexistent/c.yaml: cannot read the config file: No such file or directory");
}

TEST_CASE("a checkpoint.dir another campaign claimed is a config error at its key, not a failure at run time") {
  TempDir dir;
  dir.write("ck/.mlsup-campaign", "{\"campaign_id\":\"x1\",\"name\":\"other\",\"state_dir\":\"/elsewhere/.mlsup/other\"}\n");
  const auto r = load(dir, std::string(kMinimal) + "checkpoint:\n  dir: ck\n");
  REQUIRE_FALSE(r.has_value());
  REQUIRE(r.error().size() == 1);
  CHECK(r.error()[0].line == 4);
  CHECK(r.error()[0].subject == "checkpoint.dir");
  CHECK(r.error()[0].message.find("belongs to campaign \"other\" (state in /elsewhere/.mlsup/other)") != std::string::npos);
  // Its own claim is no error.
  const auto own = load(dir, std::string(kMinimal) + "checkpoint:\n  dir: ck2\n");
  REQUIRE(own.has_value());
  dir.write("ck2/.mlsup-campaign", "{\"campaign_id\":\"x2\",\"name\":\"demo\",\"state_dir\":\"" + own->state_dir + "\"}\n");
  CHECK(load(dir, std::string(kMinimal) + "checkpoint:\n  dir: ck2\n").has_value());
}

TEST_CASE("window: hours, days, zone and at_end are read; a problem names its key at file:line:column") {
  TempDir dir;
  const auto c = load(dir, std::string(kMinimal) +
                               "window:\n  hours: \"20:00-07:00\"\n  days: [mon-fri]\n  zone: Europe/Berlin\n  at_end: finish\n")
                     .value();
  CHECK(c.window.hours == "20:00-07:00");
  CHECK(c.window.days == std::vector<std::string>{"mon-fri"});
  CHECK(c.window.zone == "Europe/Berlin");
  CHECK(c.window.at_end == "finish");
  CHECK(load(dir, kMinimal).value().window.hours.empty());
  CHECK(load(dir, kMinimal).value().window.at_end == "pause");
  check_error(std::string(kMinimal) + "window:\n  hours: \"20:00-7:00\"\n", "4:3: window.hours:",
              "write local opening and closing times as HH:MM-HH:MM");
  check_error(std::string(kMinimal) + "window:\n  hours: \"20:00-07:00\"\n  days: [mon, fryday]\n", "5:3: window.days:",
              "\"fryday\" is not a day");
  check_error(std::string(kMinimal) + "window:\n  days: [mon]\n", "4:3: window.days:", "window.hours is not");
  check_error(std::string(kMinimal) + "window:\n  hours: \"20:00-07:00\"\n  zone: Europe/Berln\n", "5:3: window.zone:",
              "not found");
  check_error(std::string(kMinimal) + "window:\n  hours: \"20:00-07:00\"\n  zone: ../etc/passwd\n", "5:3: window.zone:",
              "not a tz database name");
  check_error(std::string(kMinimal) + "window:\n  hours: \"20:00-07:00\"\n  at_end: stop\n", "5:11: window.at_end",
              "pause");
}

TEST_CASE("debug_on_retry: its env replaces the shipped list; a name that is not a variable or is mlsup's own is refused at line:column") {
  TempDir dir;
  const auto c = load(dir, "name: t\ntemplate: job.sbatch\ndebug_on_retry:\n  env: {NCCL_DEBUG: WARN}\n").value();
  CHECK(c.debug_on_retry.enabled);
  CHECK(c.debug_on_retry.env == std::map<std::string, std::string>{{"NCCL_DEBUG", "WARN"}});
  const auto shipped = load(dir, "name: t\ntemplate: job.sbatch\n").value();
  CHECK(shipped.debug_on_retry.env.at("NCCL_DEBUG") == "INFO");
  CHECK(shipped.debug_on_retry.env.at("TORCH_NCCL_DEBUG_INFO_TEMP_FILE") == "{{attempt_dir}}/nccl_trace_rank_");
  check_error("name: t\ntemplate: job.sbatch\ndebug_on_retry:\n  env: {MLSUP_ATTEMPT: 1}\n", "4:3: debug_on_retry.env",
              "\"MLSUP_ATTEMPT\" is mlsup's own");
  check_error("name: t\ntemplate: job.sbatch\ndebug_on_retry:\n  env: {NCCL-DEBUG: INFO}\n", "4:", "is not a variable name");
  check_error("name: t\ntemplate: job.sbatch\ndebug_on_retry:\n  enabled: sometimes\n", "4:", "debug_on_retry.enabled");
}
