// Hang stacks through the engine: at a hang, the ranks the helper registered are asked for their stacks
// through the job's steps, the engine waits for them, tells where each stopped, and blames the node of
// the rank the others wait on.
#include <doctest/doctest.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>

#include "campaign/campaign.h"
#include "decide/hang_stacks.h"
#include "engine_fixture.h"
#include "slurm/fake_client.h"

using namespace mlsup;
using mlsup::test::EngineFixture;
using slurm::JobState;

namespace {

const char* kWaiting =
    "Current thread 0x01 (most recent call first):\n"
    "  File \"/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py\", line 2050 in all_reduce\n"
    "  File \"/w/train.py\", line 30 in <module>\n";
const char* kStalled =
    "Current thread 0x01 (most recent call first):\n"
    "  File \"/w/train.py\", line 12 in load_batch\n"
    "  File \"/w/train.py\", line 30 in <module>\n";

std::string rank_file(const EngineFixture& f, int rank) {
  return f.config.state_dir + "/attempts/1/hang/rank-" + std::to_string(rank) + ".txt";
}

// The helper's files of a 2-rank job, one rank on each of n1 and n2.
void helper_files(const EngineFixture& f) {
  std::filesystem::create_directories(f.config.state_dir + "/attempts/1/hang");
  for (int r = 0; r < 2; ++r) std::ofstream(rank_file(f, r)) << "mlsup stacks: rank=" << r << " node=n" << r + 1 << " pid=9\n";
}

// A running 2-node job whose heartbeat goes silent until it is hung and cancelled, then resubmitted;
// output: what the job wrote ("" = no file).
void hang(EngineFixture& f, engine::Campaign& c, const std::string& output = "") {
  f.fake.node_table = {{"n1", "MIXED"}, {"n2", "MIXED"}, {"n3", "IDLE"}, {"n4", "IDLE"}};
  for (auto& n : f.fake.node_table) n.address = "10.0.0." + n.name.substr(1);
  f.hang_two_nodes(c, output);
}

// A 2-rank training whose rank 0 (n1) dumps its stacks in a collective while rank 1 (n2) leaves none
// within stacks_wait (2 s).
void rank_1_silent(EngineFixture& f) {
  f.config.heartbeat.stacks_wait = config::Seconds(2);
  helper_files(f);
  f.on_sleep = [&f] {
    if (f.sleeps == 1) std::ofstream(rank_file(f, 0), std::ios::app) << kWaiting;
  };
}

bool excludes(const slurm::SubmitRequest& r, const std::string& nodes) {
  return std::find(r.options.begin(), r.options.end(), "--exclude=" + nodes) != r.options.end();
}

std::size_t position(const std::vector<std::string>& calls, const std::string& call) {
  return static_cast<std::size_t>(std::find(calls.begin(), calls.end(), call) - calls.begin());
}

}  // namespace

TEST_CASE("a hang: every rank's stacks asked through the steps before the cancel; the rank the others wait on names its node") {
  EngineFixture f("", "slurm: {nodes: 2}\n");
  helper_files(f);
  f.on_sleep = [&] {  // the ranks answer while the engine waits
    std::ofstream(rank_file(f, 0), std::ios::app) << kWaiting;
    std::ofstream(rank_file(f, 1), std::ios::app) << kStalled;
  };
  auto c = f.open();
  hang(f, *c);
  const std::string asked = "signal_steps " + std::to_string(SIGUSR2) + " 100";
  REQUIRE(position(f.fake.calls, asked) < f.fake.calls.size());
  CHECK(position(f.fake.calls, asked) < position(f.fake.calls, "kill_steps 100"));
  CHECK(f.sleeps == 1);  // both dumped at the first look after the wait
  const auto told = f.events_of(events::HangStacks::kKind);
  REQUIRE(told.size() == 1);
  CHECK(told[0]["ranks"] == 2);
  CHECK(told[0]["dumped"] == 2);
  CHECK(told[0]["waited_on"] == nlohmann::json::array({"1"}));
  CHECK(told[0]["nodes"] == nlohmann::json::array({"n2"}));
  CHECK(told[0]["places"][1] == "rank 1: w/train.py:12 in load_batch");
  CHECK(told[0]["folder"] == f.config.state_dir + "/attempts/1/hang");
  // each file was marked before the signal: the dump follows the mark
  const auto text = test::slurp(rank_file(f, 1));
  CHECK(text.find(decide::kStacksAsked) < text.find("load_batch"));
  REQUIRE(f.submits() == 2);
  CHECK(excludes(f.fake.submitted[1], "n2"));
  CHECK(f.told("excluded", "reason", "the hang's stacks: rank 0 waits in a collective while rank 1 stopped outside one"));
}

TEST_CASE("a hang: a rank that leaves no stack within stacks_wait (its node frozen) is the one waited on") {
  EngineFixture f("", "slurm: {nodes: 2}\n");
  rank_1_silent(f);
  auto c = f.open();
  hang(f, *c);
  CHECK(f.sleeps == 10);  // 2 s in looks 0.2 s apart, then judged without rank 1
  const auto told = f.events_of(events::HangStacks::kKind);
  REQUIRE(told.size() == 1);
  CHECK(told[0]["dumped"] == 1);
  CHECK(told[0]["nodes"] == nlohmann::json::array({"n2"}));
  CHECK(util::json_text(told[0]["why"]).find("rank 1 left no stack") == 0);
  REQUIRE(f.submits() == 2);
  CHECK(excludes(f.fake.submitted[1], "n2"));
}

TEST_CASE("a hang of a training without the helper's files: no signal is sent (it could end a rank), nothing told") {
  EngineFixture f("", "slurm: {nodes: 2}\n");
  auto c = f.open();
  hang(f, *c);
  CHECK(std::none_of(f.fake.calls.begin(), f.fake.calls.end(), [](const std::string& s) { return s.rfind("signal_steps", 0) == 0; }));
  CHECK_FALSE(f.told("hang-stacks"));
  CHECK(f.sleeps == 0);
}

TEST_CASE("a hang with heartbeat.stacks_signal \"\": the files are there, nothing is asked") {
  EngineFixture f("", "slurm: {nodes: 2}\n");
  f.config.heartbeat.stacks_signal = "";
  helper_files(f);
  auto c = f.open();
  hang(f, *c);
  CHECK_FALSE(f.told("hang-stacks"));
  CHECK(f.calls("signal_steps") == 0);
}

TEST_CASE("a hang whose output names the node a rank could not reach: that node excluded alone, not the dead rank's") {
  EngineFixture f("", "slurm: {nodes: 2}\n");
  rank_1_silent(f);
  auto c = f.open();
  hang(f, *c, "step 7\n[default0]:RuntimeError: [./gloo/transport/tcp/pair.cc:799] connect [10.0.0.1]:43435: No route to host\n");
  const auto stacks = f.events_of(events::HangStacks::kKind);
  REQUIRE(stacks.size() == 1);
  CHECK(stacks[0]["nodes"] == nlohmann::json::array({"n2"}));  // what the stacks alone would blame
  const auto told = f.events_of(events::HangExplained::kKind);
  REQUIRE(told.size() == 1);
  CHECK(told[0]["rule"] == "gloo_connect");
  CHECK(told[0]["node"] == "n1");
  CHECK(told[0]["line"] == 2);
  REQUIRE(f.submits() == 2);
  CHECK(excludes(f.fake.submitted[1], "n1"));
  CHECK(f.told("excluded", "node", "n1"));
  CHECK_FALSE(f.told("excluded", "node", "n2"));
  const auto ended = f.events_of("attempt-ended");
  REQUIRE(ended.size() == 1);
  CHECK(ended[0]["class"] == "hang");
  CHECK(ended[0]["evidence_rule"] == "gloo_connect");
}

TEST_CASE("a hang whose output shows a rank out of GPU memory: no node excluded, the campaign stops at the ending") {
  EngineFixture f("", "slurm: {nodes: 2}\n");
  rank_1_silent(f);
  auto c = f.open();
  hang(f, *c, "step 7\n[default1]:torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n");
  const auto told = f.events_of(events::HangExplained::kKind);
  REQUIRE(told.size() == 1);
  CHECK(told[0]["rule"] == "cuda_oom");
  CHECK(told[0]["node"] == "");
  CHECK(util::json_text(told[0]["decision"]).find("the campaign stops at the ending") != std::string::npos);
  CHECK_FALSE(f.told("excluded"));
  f.fake.set_state(f.fake.table.begin()->first, JobState::Cancelled, 0, "n[1-2]");
  for (int i = 0; i < 3 && f.events_of("stopped").empty(); ++i) {
    f.pass(*c);
    f.clock += 6;
  }
  CHECK(f.submits() == 1);
  const auto stopped = f.events_of("stopped");
  REQUIRE(stopped.size() == 1);
  CHECK(stopped[0]["exit_code"] == 13);
  CHECK(util::json_text(stopped[0]["reason"]).find("evidence rule cuda_oom") != std::string::npos);
}
