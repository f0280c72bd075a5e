// Campaign sets: overrides merged, matrices crossed and named, the set expanded and every problem told.
#include <doctest/doctest.h>

#include <algorithm>

#include "config/campaign_set.h"
#include "support.h"

using namespace mlsup;

namespace {

constexpr const char* kBase = "name: base\ntemplate: job.sbatch\nvars: {lr: \"1e-3\", data: /d}\nslurm: {nodes: 2, partition: gpu}\n";

// The set text expanded against /sets, whose train.yaml is kBase (and others as given).
std::expected<config::CampaignSet, config::Errors> expand(const std::string& text,
                                                          std::map<std::string, std::string> configs = {}) {
  configs.emplace("/sets/train.yaml", kBase);
  return config::expand_set(YAML::Load(text), "/sets/night.yaml", "/sets", configs, {.template_file = false});
}

// Every error as "file:line:column: subject: message", the file's folder left out.
std::vector<std::string> errors_of(const std::string& text, std::map<std::string, std::string> configs = {}) {
  const auto r = expand(text, std::move(configs));
  REQUIRE_FALSE(r.has_value());
  std::vector<std::string> out;
  for (auto e : r.error()) {
    e.file = e.file.substr(e.file.rfind('/') + 1);
    out.push_back(e.str());
  }
  return out;
}

// The one error of text; it must contain every part given.
void check_one(const std::string& text, const std::vector<std::string>& parts, std::map<std::string, std::string> configs = {}) {
  CAPTURE(text);
  const auto errors = errors_of(text, std::move(configs));
  std::string all;
  for (const auto& e : errors) all += e + "\n";
  CAPTURE(all);
  REQUIRE(errors.size() == 1);
  for (const auto& p : parts) CHECK(errors.front().find(p) != std::string::npos);
}

std::string emit(const YAML::Node& n) {
  YAML::Emitter e;
  e << YAML::Flow << n;
  return e.c_str();
}

}  // namespace

TEST_CASE("merge: mappings merge key by key, scalars and lists replace, null removes") {
  const auto base = YAML::Load("a: 1\nm: {x: 1, y: [1, 2], z: {deep: 1, keep: 2}}\nl: [1, 2, 3]\ngone: 5\n");
  const auto over = YAML::Load("m: {y: [9], z: {deep: 7}, new: 3}\nl: [4]\ngone: null\nadded: 8\n");
  CHECK(emit(config::merge_nodes(base, over)) ==
        "{a: 1, m: {x: 1, y: [9], z: {deep: 7, keep: 2}, new: 3}, l: [4], added: 8}");
  CHECK(emit(config::merge_nodes(base, YAML::Load("a: {now: map}"))) == "{a: {now: map}, m: {x: 1, y: [1, 2], z: {deep: 1, keep: 2}}, l: [1, 2, 3], gone: 5}");
  CHECK(emit(config::merge_nodes(base, YAML::Node())) == emit(base));  // nothing laid on: the base
}

TEST_CASE("merge: the nodes keep where they were written") {
  const auto base = YAML::Load("a: 1\nb: 2\n");
  const auto over = YAML::Load("\n\nb: 3\n");
  const auto merged = config::merge_nodes(base, over);
  CHECK(merged["a"].Mark().line == 0);
  CHECK(merged["b"].Mark().line == 2);  // the override's line, in its own text
}

TEST_CASE("matrix: values crossed in order, the first key slowest, each named by its key and value") {
  const auto cells = config::matrix_cells(YAML::Load("{vars.lr: [1e-4, 3e-4], slurm.nodes: [1, 2]}"));
  std::vector<std::string> names;
  for (const auto& c : cells) names.push_back(c.suffix);
  CHECK(names == std::vector<std::string>{"lr_1e-4.nodes_1", "lr_1e-4.nodes_2", "lr_3e-4.nodes_1", "lr_3e-4.nodes_2"});
  CHECK(emit(cells[1].overrides) == "{vars: {lr: 1e-4}, slurm: {nodes: 2}}");
}

TEST_CASE("matrix: keys alike at their last part are named in full; characters a name cannot hold become _") {
  const auto cells = config::matrix_cells(YAML::Load("{vars.lr: [0.1], other.lr: [a/b c]}"));
  REQUIRE(cells.size() == 1);
  CHECK(cells[0].suffix == "vars.lr_0.1.other.lr_a_b_c");
}

TEST_CASE("set: a run per config, named after its file unless named, each with its own state and checkpoint folders") {
  const auto s = expand("set: night\nruns:\n  - config: train.yaml\n  - name: second\n    config: train.yaml\n");
  REQUIRE(s.has_value());
  CHECK(s->name == "night");
  REQUIRE(s->runs.size() == 2);
  const auto& a = s->runs[0].config;
  CHECK(s->runs[0].name == "train");
  CHECK(a.name == "train");
  CHECK(a.state_dir == "/sets/.mlsup/night/train");
  CHECK(a.checkpoint.dir == "/sets/.mlsup/night/train/checkpoints");
  CHECK(a.template_path == "/sets/job.sbatch");  // the config's own paths resolve against its folder
  CHECK(a.set_file == "/sets/night.yaml");
  CHECK(a.set_run == "train");
  CHECK(s->runs[1].config.state_dir == "/sets/.mlsup/night/second");
  CHECK(s->max_running == 0);
}

TEST_CASE("set: overrides are laid on the config: maps merged, scalars replaced; other runs keep the config's values") {
  const auto s = expand(
      "runs:\n  - name: big\n    config: train.yaml\n    overrides: {vars: {lr: \"5e-4\"}, slurm: {nodes: 8}}\n"
      "  - name: plain\n    config: train.yaml\n");
  REQUIRE(s.has_value());
  const auto& big = s->find("big")->config;
  CHECK(big.vars.at("lr") == "5e-4");
  CHECK(big.vars.at("data") == "/d");
  CHECK(big.slurm.nodes == 8);
  CHECK(big.slurm.partition == "gpu");
  CHECK(s->find("plain")->config.slurm.nodes == 2);
  CHECK(s->name == "night");  // the set's name defaults to its file's
}

TEST_CASE("set: a matrix gives a run per cell, each with its own folders; `after` an entry waits for each of its runs") {
  const auto s = expand(
      "set: sweep\nmax_running: 2\nmax_nodes: 6\ncheckpoint_root: /scratch/ck\nruns:\n"
      "  - name: lr\n    config: train.yaml\n    matrix: {vars.lr: [1e-4, 3e-4]}\n    priority: 5\n"
      "  - name: eval\n    config: train.yaml\n    after: [lr]\n");
  REQUIRE(s.has_value());
  REQUIRE(s->runs.size() == 3);
  CHECK(s->runs[0].name == "lr.lr_1e-4");
  CHECK(s->runs[0].config.vars.at("lr") == "1e-4");
  CHECK(s->runs[0].config.checkpoint.dir == "/scratch/ck/lr.lr_1e-4");
  CHECK(s->runs[1].config.checkpoint.dir == "/scratch/ck/lr.lr_3e-4");
  CHECK(s->runs[1].config.state_dir == "/sets/.mlsup/sweep/lr.lr_3e-4");
  CHECK(s->runs[1].priority == 5);
  CHECK(s->find("eval")->after == std::vector<std::string>{"lr.lr_1e-4", "lr.lr_3e-4"});
  CHECK(s->max_running == 2);
  CHECK(s->max_nodes == 6);
}

TEST_CASE("set errors: an unknown run in after, with the nearest name") {
  check_one("runs:\n  - name: pretrain\n    config: train.yaml\n  - name: eval\n    config: train.yaml\n    after: [pretrian]\n",
            {"night.yaml:6:13: after: no run \"pretrian\" in this set (did you mean \"pretrain\"?)"});
}

TEST_CASE("set errors: a cycle, told once where it closes") {
  check_one("runs:\n  - name: a\n    config: train.yaml\n    after: [b]\n  - name: b\n    config: train.yaml\n    after: [a]\n",
            {"night.yaml:7:13: after: cycle: a waits for b waits for a"});
  check_one("runs:\n  - name: a\n    config: train.yaml\n    after: [a]\n", {"night.yaml:4:13: after: cycle: a waits for a"});
}

TEST_CASE("set errors: two runs sharing a checkpoint folder or a state folder") {
  std::map<std::string, std::string> shared = {{"/sets/fixed.yaml", std::string(kBase) + "checkpoint: {dir: /ck}\n"}};
  check_one("runs:\n  - name: a\n    config: fixed.yaml\n  - name: b\n    config: fixed.yaml\n",
            {"night.yaml:4:5: checkpoint.dir: run \"b\" shares /ck with run \"a\" (line 2)", "checkpoint_root"}, shared);
  check_one("runs:\n  - name: a\n    config: train.yaml\n  - name: b\n    config: train.yaml\n    overrides: {state_dir: .mlsup/night/a}\n",
            {"night.yaml:4:5: state_dir: run \"b\" shares /sets/.mlsup/night/a with run \"a\""});
  // A matrix over a config with a fixed checkpoint folder: every cell shares it.
  const auto errors = errors_of("runs:\n  - name: m\n    config: fixed.yaml\n    matrix: {vars.lr: [1, 2, 3]}\n", shared);
  CHECK(errors.size() == 2);
}

TEST_CASE("set errors: two runs with one name") {
  check_one("runs:\n  - name: a\n    config: train.yaml\n  - name: a\n    config: train.yaml\n",
            {"night.yaml:4:11: name: run name \"a\" is also the name at line 2"});
}

TEST_CASE("set errors: keys the set or a run does not know, a run without config, a config that cannot be read") {
  check_one("runz: 1\nruns:\n  - config: train.yaml\n", {"night.yaml:1:1: runz: unknown key (did you mean \"runs\"?)"});
  check_one("runs:\n  - config: train.yaml\n    afterr: [x]\n", {"night.yaml:3:5: afterr: unknown key (did you mean \"after\"?)"});
  check_one("runs:\n  - name: a\n", {"night.yaml:2:5: config: is required"});
  check_one("runs:\n  - config: missing.yaml\n", {"night.yaml:2:13: config: cannot read /sets/missing.yaml"});
  check_one("runs: []\n", {"night.yaml:1:7: runs: expected a list of runs"});
}

TEST_CASE("set errors: limits, priority and matrix values of the wrong kind") {
  check_one("max_running: 0\nruns:\n  - config: train.yaml\n", {"night.yaml:1:14: max_running: expected a whole number of at least 1"});
  check_one("max_nodes: lots\nruns:\n  - config: train.yaml\n", {"night.yaml:1:12: max_nodes: expected a whole number"});
  check_one("runs:\n  - config: train.yaml\n    priority: high\n", {"night.yaml:3:15: priority: expected a whole number"});
  check_one("runs:\n  - config: train.yaml\n    matrix: {vars.lr: 3}\n", {"night.yaml:3:23: matrix.vars.lr: expected a list"});
  check_one("runs:\n  - config: train.yaml\n    name: \"a:b\"\n", {"night.yaml:3:11: name: \"a:b\" is not a usable run name"});
}

TEST_CASE("set errors: an override the config loader refuses is told where the set wrote it") {
  check_one("runs:\n  - config: train.yaml\n    overrides:\n      slurm: {nodez: 3}\n",
            {"night.yaml:4:15: slurm.nodez: (run train) unknown key (did you mean \"nodes\"?)"});
  check_one("runs:\n  - config: train.yaml\n    overrides:\n      slurm: {nodes: many}\n", {"night.yaml:4:22: slurm.nodes: (run train)"});
}

TEST_CASE("set errors: a config's own error is told once, against the config, however many runs share it") {
  std::map<std::string, std::string> bad = {{"/sets/bad.yaml", "name: x\ntemplate: job.sbatch\npoll_intervall: 1s\n"}};
  const auto errors = errors_of("runs:\n  - name: a\n    config: bad.yaml\n  - name: b\n    config: bad.yaml\n", bad);
  REQUIRE(errors.size() == 1);
  CHECK(errors.front().find("bad.yaml:3:1: poll_intervall: unknown key") == 0);
}

TEST_CASE("set errors: every problem is reported, not the first alone") {
  const auto errors = errors_of(
      "max_running: -1\nruns:\n  - name: a\n    config: train.yaml\n    after: [zz]\n  - name: a\n    config: nope.yaml\n");
  CHECK(errors.size() == 4);  // max_running, the name twice, no file nope.yaml, the run zz
}

TEST_CASE("set: told apart from a config by runs:, and the configs it names listed once") {
  CHECK(config::is_set(YAML::Load("runs: []")));
  CHECK_FALSE(config::is_set(YAML::Load("name: a\ntemplate: t")));
  const auto paths = config::set_config_paths(YAML::Load("runs:\n  - config: a.yaml\n  - config: /x/b.yaml\n  - config: a.yaml\n"), "/s");
  CHECK(paths == std::vector<std::string>{"/s/a.yaml", "/x/b.yaml"});
}

TEST_CASE("set file: SET:RUN loads one run as a campaign config; the set alone names its runs") {
  test::TempDir dir;
  dir.write("job.sbatch", "#!/bin/bash\nsrun true\n");
  dir.write("train.yaml", kBase);
  const auto set = dir.write("night.yaml", "runs:\n  - config: train.yaml\n  - name: other\n    config: train.yaml\n");
  const auto run = config::load_config_file(set + ":other");
  REQUIRE(run.has_value());
  CHECK(run->name == "other");
  CHECK(run->set_run == "other");
  const auto missing = config::load_config_file(set + ":nope");
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().front().str().find("no such run in the set (its runs: train, other)") != std::string::npos);
  const auto whole = config::load_config_file(set);
  REQUIRE_FALSE(whole.has_value());
  CHECK(whole.error().front().message.find(set + ":train, " + set + ":other") != std::string::npos);
}

TEST_CASE("the shipped example set is valid: four runs, the sweep's two after pretrain, eval after both") {
  const auto set = config::load_set_file(test::source_dir() + "/configs/set.yaml");
  if (!set)
    for (const auto& e : set.error()) CAPTURE(e.str());
  REQUIRE(set.has_value());
  std::vector<std::string> names;
  for (const auto& r : set->runs) names.push_back(r.name);
  CHECK(names == std::vector<std::string>{"pretrain", "sweep.lr_1e-4", "sweep.lr_3e-4", "eval"});
  CHECK(set->find("eval")->after == std::vector<std::string>{"sweep.lr_1e-4", "sweep.lr_3e-4"});
  CHECK(set->find("sweep.lr_3e-4")->config.slurm.nodes == 2);
  CHECK(set->find("sweep.lr_3e-4")->config.vars.at("lr") == "3e-4");
  CHECK(set->max_running == 2);
  CHECK(set->max_nodes == 8);
}

TEST_CASE("set: its window applies to every run; a run's own overrides win, key by key") {
  const auto set = expand("window: {hours: \"20:00-07:00\", zone: UTC}\nruns:\n"
                          "  - {name: a, config: train.yaml}\n"
                          "  - {name: b, config: train.yaml, overrides: {window: {hours: \"22:00-06:00\"}}}\n")
                       .value();
  REQUIRE(set.runs.size() == 2);
  CHECK(set.runs[0].config.window.hours == "20:00-07:00");
  CHECK(set.runs[0].config.window.zone == "UTC");
  CHECK(set.runs[1].config.window.hours == "22:00-06:00");
  CHECK(set.runs[1].config.window.zone == "UTC");
  check_one("window: {hours: \"20:00-7:00\"}\nruns:\n  - {name: a, config: train.yaml}\n",
            {"night.yaml:1:", "window.hours", "(run a)", "HH:MM-HH:MM"});
  check_one("window: 20:00-07:00\nruns:\n  - {name: a, config: train.yaml}\n", {"night.yaml:1:9", "window", "mapping"});
}

TEST_CASE("is_set_file: a set by its top-level runs; a config, a folder, a missing file or bad YAML is none") {
  test::TempDir dir;
  dir.write("night.yaml", "runs:\n  - config: train.yaml\n");
  dir.write("flow.yaml", "{runs: [{config: train.yaml}]}\n");
  dir.write("train.yaml", kBase);
  dir.write("mentions.yaml", std::string(kBase) + "# it runs every night\n");
  dir.write("broken.yaml", "runs: [\n");
  CHECK(config::is_set_file(dir.path() + "/night.yaml"));
  CHECK(config::is_set_file(dir.path() + "/flow.yaml"));
  CHECK_FALSE(config::is_set_file(dir.path() + "/train.yaml"));
  CHECK_FALSE(config::is_set_file(dir.path() + "/mentions.yaml"));  // the word in a comment: parsed, no runs key
  CHECK_FALSE(config::is_set_file(dir.path() + "/broken.yaml"));
  CHECK_FALSE(config::is_set_file(dir.path() + "/missing.yaml"));
  CHECK_FALSE(config::is_set_file(dir.path()));
}
