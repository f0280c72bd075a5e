#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <regex>

#include "config/load.h"
#include "render/chain.h"
#include "render/contract.h"
#include "render/end_record.h"
#include "render/submission.h"
#include "support.h"

using namespace mlsup;

namespace {

struct Campaign {
  mlsup::test::TempDir dir;
  config::Config config;
  std::string script;

  Campaign(const std::string& yaml, std::string text) : script(std::move(text)) {
    dir.write("job.sbatch", script);
    auto loaded = config::load_config_file(dir.write("c.yaml", "name: demo\ntemplate: job.sbatch\n" + yaml));
    if (!loaded) FAIL(loaded.error().front().str());
    config = *loaded;
  }

  util::Result<render::Submission> plan(const render::Attempt& attempt = {}) const {
    return render::plan_submission(config, script, attempt);
  }
};

bool has(const std::vector<std::string>& options, const std::string& option) {
  return std::find(options.begin(), options.end(), option) != options.end();
}

std::size_t count_prefix(const std::vector<std::string>& options, const std::string& prefix) {
  return std::count_if(options.begin(), options.end(), [&](const auto& o) { return o.rfind(prefix, 0) == 0; });
}

}  // namespace

TEST_CASE("a plain sbatch script with no placeholders is submitted as it is, with mlsup's controls added") {
  const std::string byo = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --time=02:00:00\nsrun python train.py\n";
  Campaign c("", byo);
  const auto s = c.plan().value();
  CHECK(s.script == render::insert_after_header(byo, render::end_record_lines(c.config)));  // and the end record
  CHECK(s.nodes == 2);
  CHECK(s.time_limit == config::Seconds(7200));
  CHECK_FALSE(s.array.has_value());
  CHECK(s.options.front() == "--parsable");
  CHECK(has(s.options, "--job-name=demo"));
  CHECK(has(s.options, "--comment=mlsup:demo:new:1"));
  CHECK(has(s.options, "--signal=B:USR1@300"));
  CHECK(has(s.options, "--no-requeue"));
  CHECK(has(s.options, "--output=" + c.config.state_dir + "/logs/%x-%j.out"));
  CHECK(s.output == c.config.state_dir + "/logs/%x-%j.out");
  CHECK(count_prefix(s.options, "--nodes") == 0);  // the script's own line stands
  CHECK(count_prefix(s.options, "--time") == 0);
  CHECK(count_prefix(s.options, "--exclude") == 0);
  CHECK(count_prefix(s.options, "--export") == 0);
}

TEST_CASE("settings given in the config go on the command line and win over the script") {
  Campaign c("slurm: {partition: gpu, nodes: 4, ntasks_per_node: 8, gpus_per_node: 8, cpus_per_task: 6, time: \"1-00:00:00\","
             " extra_args: [--qos=high]}\n",
             "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --time=02:00:00\nsrun true\n");
  const auto s = c.plan().value();
  for (const char* o : {"--partition=gpu", "--nodes=4", "--ntasks-per-node=8", "--gpus-per-node=8", "--cpus-per-task=6",
                        "--time=1-00:00:00"}) {
    CAPTURE(o);
    CHECK(has(s.options, o));
  }
  CHECK(s.options.back() == "--qos=high");
  CHECK(s.nodes == 4);
  CHECK(s.time_limit == config::Seconds(86400));
}

TEST_CASE("the script's own name, output and signal are kept unless the config sets the signal") {
  const std::string script =
      "#!/bin/bash\n#SBATCH -J mine\n#SBATCH -o /logs/%x-%j.log\n#SBATCH --signal=B:USR2@120\nsrun true\n";
  const auto kept = Campaign("", script).plan().value();
  CHECK(count_prefix(kept.options, "--job-name") == 0);
  CHECK(count_prefix(kept.options, "--output") == 0);
  CHECK(count_prefix(kept.options, "--signal") == 0);
  CHECK(kept.output == "/logs/%x-%j.log");
  const auto overridden = Campaign("slurm: {signal_lead: 90s}\n", script).plan().value();
  CHECK(has(overridden.options, "--signal=B:USR1@90"));
}

TEST_CASE("signal_lead auto: the lead sized for the attempt goes in --signal and MLSUP_SIGNAL_LEAD; the config's until one is") {
  const std::string script = "#!/bin/bash\nsrun true\n";
  const Campaign c("slurm: {signal: USR2, signal_lead: auto}\n", script);
  const auto first = c.plan().value();
  CHECK(has(first.options, "--signal=B:USR2@300"));  // nothing measured yet: the default
  const auto sized = c.plan({.number = 2, .signal_lead = 211}).value();
  CHECK(has(sized.options, "--signal=B:USR2@211"));
  const std::map<std::string, std::string> env(sized.environment.begin(), sized.environment.end());
  CHECK(env.at("MLSUP_SIGNAL") == "USR2");
  CHECK(env.at("MLSUP_SIGNAL_LEAD") == "211");
}

TEST_CASE("exclusions are added to the script's own") {
  const auto plain = Campaign("", "#!/bin/bash\nsrun true\n").plan({.number = 2, .exclude = {"n3", "n4"}}).value();
  CHECK(has(plain.options, "--exclude=n3,n4"));
  CHECK(has(plain.options, "--comment=mlsup:demo:new:2"));
  const auto merged = Campaign("", "#!/bin/bash\n#SBATCH -x bad1\nsrun true\n").plan({.exclude = {"n3"}}).value();
  CHECK(has(merged.options, "--exclude=bad1,n3"));
}

TEST_CASE("job arrays: from the config or from the script, with per-task output names") {
  const auto from_config = Campaign("slurm: {array: \"1-10%1\"}\n", "#!/bin/bash\nsrun true\n").plan().value();
  CHECK(has(from_config.options, "--array=1-10%1"));
  REQUIRE(from_config.array.has_value());
  CHECK(from_config.array->task_ids.size() == 10);
  CHECK(from_config.output.find("%x-%A_%a.out") != std::string::npos);
  const auto from_script = Campaign("", "#!/bin/bash\n#SBATCH --array=0-3%1\nsrun true\n").plan().value();
  CHECK(count_prefix(from_script.options, "--array") == 0);
  CHECK(from_script.array->task_ids.size() == 4);
}

TEST_CASE("the MLSUP_ environment reaches the job even when the script narrows --export") {
  const auto none = Campaign("", "#!/bin/bash\n#SBATCH --export=NONE\nsrun true\n").plan().value();
  REQUIRE(count_prefix(none.options, "--export=") == 1);
  CHECK(has(none.options,
            "--export=MLSUP_RUN,MLSUP_CAMPAIGN_ID,MLSUP_ATTEMPT,MLSUP_STATE_DIR,MLSUP_CHECKPOINT_DIR,MLSUP_RESUME_FROM,MLSUP_KILL_SWITCH,"
            "MLSUP_SAVE_SWITCH,MLSUP_HEARTBEAT_FILE,MLSUP_EXCLUDE,MLSUP_NO_RETRY_EXIT_CODE,MLSUP_SIGNAL,MLSUP_SIGNAL_LEAD,"
            "MLSUP_STACKS_SIGNAL,MLSUP_HANG_DIR,MLSUP_PREFLIGHT,MLSUP_PREFLIGHT_DEADLINE,MLSUP_DEBUG_ENV"));
  const auto debugging = Campaign("", "#!/bin/bash\n#SBATCH --export=NONE\nsrun true\n").plan({.number = 2, .debug = true}).value();
  const auto exported = std::find_if(debugging.options.begin(), debugging.options.end(), [](auto& o) { return o.rfind("--export=", 0) == 0; });
  CHECK(exported->find(",MLSUP_DEBUG_ENV,NCCL_DEBUG,TORCH_DISTRIBUTED_DEBUG,") != std::string::npos);
  const auto some = Campaign("", "#!/bin/bash\n#SBATCH --export=PATH,HOME\nsrun true\n").plan().value();
  const auto it = std::find_if(some.options.begin(), some.options.end(), [](auto& o) { return o.rfind("--export=", 0) == 0; });
  CHECK(it->rfind("--export=PATH,HOME,MLSUP_RUN,", 0) == 0);
}

TEST_CASE("the contract values are template variables and environment alike") {
  Campaign c("vars: {script: train.py}\nslurm: {nodes: 2}\n",
             "#!/bin/bash\n#SBATCH --job-name={{run}}\necho {{attempt}} {{resume_from}} {{exclude}} {{heartbeat_file}}"
             " {{kill_switch}} {{save_switch}} {{checkpoint_dir}} {{state_dir}} {{no_retry_exit_code}} {{vars.script}}"
             " {{slurm.nodes}}:{{slurm.partition}}:{{slurm.signal}}:{{slurm.signal_lead}}:{{slurm.array}}:{{slurm.time}}"
             ":{{slurm.ntasks_per_node}}:{{slurm.gpus_per_node}}:{{slurm.cpus_per_task}}\n");
  const auto s = c.plan({.number = 3, .resume_from = "/ck/a b", .exclude = {"n1"}}).value();
  const auto& st = c.config.state_dir;
  CHECK(s.script == "#!/bin/bash\n#SBATCH --job-name=demo\n" + render::end_record_lines(c.config) + "echo 3 '/ck/a b' n1 " + st + "/heartbeats/attempt-3 " + st +
                        "/kill-switch " + st + "/save-switch " + st + "/checkpoints " + st +
                        " 78 train.py 2:'':USR1:300:'':'':'':'':''\n");
  std::map<std::string, std::string> env(s.environment.begin(), s.environment.end());
  CHECK(env.at("MLSUP_ATTEMPT") == "3");
  CHECK(env.at("MLSUP_RESUME_FROM") == "/ck/a b");
  CHECK(env.at("MLSUP_HEARTBEAT_FILE") == st + "/heartbeats/attempt-3");
  CHECK(env.at("MLSUP_EXCLUDE") == "n1");
  CHECK(count_prefix(s.options, "--job-name") == 0);
}

TEST_CASE("what mlsup reads from the script must make sense") {
  CHECK(Campaign("", "#!/bin/bash\n#SBATCH --nodes=lots\n").plan().error().str().find(":2:1: --nodes: \"lots\" is not a node count") !=
        std::string::npos);
  CHECK(Campaign("", "#!/bin/bash\n#SBATCH --time=forever\n").plan().error().str().find(":2:1: --time: ") != std::string::npos);
  CHECK(Campaign("", "#!/bin/bash\n#SBATCH --array=9-1\n").plan().error().str().find(":2:1: --array: ") != std::string::npos);
  CHECK(Campaign("", "#!/bin/bash\n#SBATCH --time=4\n").plan().error().str().find("is not longer than slurm.signal_lead") !=
        std::string::npos);
  CHECK(Campaign("", "#!/bin/bash\n#SBATCH --nodes=2-4\n").plan().value().nodes == 2);
  CHECK(Campaign("", "#!/bin/bash\necho {{nope}}\n").plan().error().str().find("nope: undefined variable") != std::string::npos);
}

TEST_CASE("a campaign's own tag replaces the default one") {
  const auto s = Campaign("", "#!/bin/bash\n").plan({.number = 4, .tag = "mlsup:demo:ab12cd34:4"}).value();
  CHECK(s.tag == "mlsup:demo:ab12cd34:4");
  CHECK(has(s.options, "--comment=mlsup:demo:ab12cd34:4"));
  CHECK(count_prefix(s.options, "--comment=") == 1);
}

TEST_CASE("sbatch_argv puts the script last") {
  const auto s = Campaign("", "#!/bin/bash\n").plan().value();
  const auto argv = render::sbatch_argv(s, "/x/job.sbatch");
  CHECK(argv.front() == "sbatch");
  CHECK(argv.back() == "/x/job.sbatch");
  CHECK(argv.size() == s.options.size() + 2);
}

TEST_CASE("the campaign id is a contract value: MLSUP_CAMPAIGN_ID and {{campaign_id}}, the same for every attempt") {
  Campaign c("", "#!/bin/bash\necho {{campaign_id}} {{attempt}}\n");
  const auto first = c.plan({.number = 1, .tag = "mlsup:demo:5e1f0a2c:1", .campaign_id = "5e1f0a2c"}).value();
  const auto later = c.plan({.number = 7, .resume_from = "/ck/7", .tag = "mlsup:demo:5e1f0a2c:7", .campaign_id = "5e1f0a2c"}).value();
  for (const auto* s : {&first, &later}) {
    std::map<std::string, std::string> env(s->environment.begin(), s->environment.end());
    CHECK(env.at("MLSUP_CAMPAIGN_ID") == "5e1f0a2c");
  }
  CHECK(first.script.ends_with("echo 5e1f0a2c 1\n"));
  CHECK(later.script.ends_with("echo 5e1f0a2c 7\n"));
  // Another campaign of the same name has its own id; one that has not started renders the tag's placeholder.
  const auto other = c.plan({.number = 1, .campaign_id = "99aa00bb"}).value();
  CHECK(std::map<std::string, std::string>(other.environment.begin(), other.environment.end()).at("MLSUP_CAMPAIGN_ID") ==
        "99aa00bb");
  const auto unstarted = c.plan().value();
  CHECK(std::map<std::string, std::string>(unstarted.environment.begin(), unstarted.environment.end()).at("MLSUP_CAMPAIGN_ID") ==
        render::kUnstarted);
}

TEST_CASE("README's contract table has a row for every contract value, in the table's order") {
  std::ifstream in(test::source_dir() + "/README.md");
  static const std::regex row(R"(^\| `(MLSUP_[A-Z_]+)` \| `([a-z_]+)` \| .*\|$)");
  std::vector<std::pair<std::string, std::string>> readme;
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_match(line, m, row)) readme.emplace_back(m[2].str(), m[1].str());
  }
  CHECK(readme == render::contract_variables());
}
