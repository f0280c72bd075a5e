// The evidence rules applied to live endings: a failure whose output a rule explains stops, clears
// its nodes or names the one node to keep out; one no rule explains is judged as before.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "engine_fixture.h"
#include "state/records.h"
#include "state/state.h"
#include "store/read_campaign.h"

using namespace mlsup;
using mlsup::test::EngineFixture;
using mlsup::test::slurp;
using slurm::JobState;

namespace {

bool excludes(const slurm::SubmitRequest& r, const std::string& nodes) {
  return std::find(r.options.begin(), r.options.end(), "--exclude=" + nodes) != r.options.end();
}

bool has_exclude(const slurm::SubmitRequest& r) {
  return std::any_of(r.options.begin(), r.options.end(), [](const std::string& o) { return o.rfind("--exclude=", 0) == 0; });
}

// srun's reports of a 2-node job whose task on n1 ended first (the first-evidence rule names n1).
constexpr const char* kSrunN1First = "srun: error: n1: task 0: Exited with exit code 1\nsrun: error: n2: task 1: Terminated\n";
// ... and one whose task on n2 ended first.
constexpr const char* kSrunN2First = "srun: error: n2: task 1: Exited with exit code 1\nsrun: error: n1: task 0: Terminated\n";

// Ends the current job as FAILED on nodes with output, then passes until it is resubmitted or the
// campaign ends (at most a few backoffs).
void fail_with(EngineFixture& f, engine::Campaign& c, const std::string& nodes, const std::string& output) {
  const auto id = f.last_job();
  f.fake.table[id].std_out = f.dir.write("job-" + std::to_string(id) + ".out", output);
  f.fake.set_state(id, JobState::Failed, 1, nodes);
  const auto before = f.submits();
  for (int i = 0; i < 5 && f.submits() == before && f.events_of("stopped").empty(); ++i) {
    f.pass(c);
    f.clock += 6;
  }
}

// A 2-node campaign on a 4-node cluster (policy: more policy keys), its first job submitted.
struct TwoNodes {
  EngineFixture f;
  EngineFixture::Opened c;
  explicit TwoNodes(const std::string& policy = "") : f(policy, "slurm: {nodes: 2}\n") {
    f.fake.node_table = {{"n1", "MIXED"}, {"n2", "MIXED"}, {"n3", "IDLE"}, {"n4", "IDLE"}};
    c = f.open();
    f.pass(*c);
  }
};

// The journal's `ended` records, oldest first.
std::vector<nlohmann::json> ended_records(const EngineFixture& f) {
  std::vector<nlohmann::json> out;
  std::istringstream lines(slurp(f.config.state_dir + "/journal.jsonl"));
  for (std::string line; std::getline(lines, line);) {
    auto r = nlohmann::json::parse(line, nullptr, false);
    if (r.is_object() && r.value("type", "") == "ended") out.push_back(std::move(r));
  }
  return out;
}

}  // namespace

TEST_CASE("evidence at an ending: CUDA out of memory stops the campaign after one attempt, its rule and line told, no node excluded") {
  EngineFixture f;
  auto c = f.open();
  f.pass(*c);
  fail_with(f, *c, "n1",
            "step 10\nTraceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n"
            "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
            "srun: error: n1: task 0: Exited with exit code 1\n");
  CHECK(f.submits() == 1);
  const auto stopped = f.events_of("stopped");
  REQUIRE(stopped.size() == 1);
  CHECK(stopped[0]["exit_code"] == 13);
  CHECK(util::json_text(stopped[0]["reason"]).find("evidence rule cuda_oom") != std::string::npos);
  const auto ended = f.events_of("attempt-ended");
  REQUIRE(ended.size() == 1);
  CHECK(ended[0]["evidence_rule"] == "cuda_oom");
  CHECK(ended[0]["evidence_class"] == "cuda_oom");
  CHECK(ended[0]["evidence_action"] == "stop_alert");
  CHECK(ended[0]["evidence_line"] == 4);
  CHECK(util::json_text(ended[0]["evidence_quote"]).starts_with("torch.cuda.OutOfMemoryError: CUDA out of memory."));
  CHECK(ended[0]["action"] == "stop");
  CHECK(f.events_of("excluded").empty());
}

TEST_CASE("evidence at an ending: a Python traceback alone is resubmitted and blames no node, not even by the first-evidence rule") {
  TwoNodes t;
  auto& f = t.f;
  fail_with(f, *t.c, "n[1-2]",
            std::string("Traceback (most recent call last):\n  File \"train.py\", line 9, in <module>\n"
                        "ValueError: the batch has no labels\n") + kSrunN1First);
  REQUIRE(f.submits() == 2);
  CHECK_FALSE(has_exclude(f.fake.submitted[1]));
  CHECK(f.events_of("excluded").empty());
  const auto ended = ended_records(f);
  REQUIRE(ended.size() == 1);
  CHECK(ended[0]["evidence_class"] == "software");
  CHECK(ended[0]["no_node_blamed"] == true);
  CHECK(ended[0]["suspects"] == nlohmann::json::array());
  CHECK(util::json_text(ended[0]["reason"]).find("no node is held responsible") != std::string::npos);
}

TEST_CASE("evidence at an ending: NCCL's refused connection to a peer excludes that peer's node, not the one srun named first") {
  TwoNodes t;
  auto& f = t.f;
  fail_with(f, *t.c, "n[1-2]",
            std::string("n1:4121:4190 [0] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to n2<45678> failed : "
                        "Connection refused\n") + kSrunN1First);
  REQUIRE(f.submits() == 2);
  CHECK(excludes(f.fake.submitted[1], "n2"));
  const auto excluded = f.events_of("excluded");
  REQUIRE(excluded.size() == 1);
  CHECK(excluded[0]["node"] == "n2");
  CHECK(excluded[0]["rule"] == "evidence:nccl_connect");
  const auto ended = ended_records(f);
  REQUIRE(ended.size() == 1);
  CHECK(ended[0]["evidence_rule"] == "nccl_connect");
  CHECK(ended[0]["suspects"] == nlohmann::json::array({"n2"}));
}

TEST_CASE("evidence at an ending: output no rule explains is judged as before (the first-evidence rule names srun's first node)") {
  TwoNodes t;
  auto& f = t.f;
  fail_with(f, *t.c, "n[1-2]", std::string("step 41 loss 2.1\n") + kSrunN1First);
  REQUIRE(f.submits() == 2);
  CHECK(excludes(f.fake.submitted[1], "n1"));
  const std::string journal = slurp(f.config.state_dir + "/journal.jsonl");
  CHECK(journal.find("\"rule\":\"first_evidence\"") != std::string::npos);
  CHECK(journal.find("evidence_rule") == std::string::npos);
  CHECK(journal.find("no_node_blamed") == std::string::npos);
}

TEST_CASE("evidence at an ending: a rank killed with SIGKILL first (a person's kill -9) names no node, not even its own") {
  TwoNodes t;
  auto& f = t.f;
  fail_with(f, *t.c, "n[1-2]", "step 41 loss 2.1\nsrun: error: n2: task 1: Killed\nsrun: error: n1: task 0: Terminated\n");
  REQUIRE(f.submits() == 2);
  CHECK_FALSE(has_exclude(f.fake.submitted[1]));
  CHECK(f.events_of("excluded").empty());
  const auto ended = ended_records(f);
  REQUIRE(ended.size() == 1);
  CHECK(ended[0]["first_reported"]["signal"] == "Killed");
  CHECK(ended[0]["first_reported"]["node"] == "n2");
}

TEST_CASE("evidence at an ending: a time limit's output is not read for evidence") {
  EngineFixture f;
  auto c = f.open();
  f.pass(*c);
  const auto id = f.last_job();
  f.fake.table[id].std_out = f.dir.write("t.out", "torch.cuda.OutOfMemoryError: CUDA out of memory.\n");
  f.fake.set_state(id, JobState::Timeout, 0, "n1");
  for (int i = 0; i < 4 && f.submits() == 1; ++i) {
    f.pass(*c);
    f.clock += 6;
  }
  CHECK(f.submits() == 2);
  CHECK(f.events_of("stopped").empty());
}

TEST_CASE("evidence at an ending: the ended record's evidence fields are written when set and replay") {
  namespace rec = engine::records;
  rec::Ended e{.attempt = 1, .job_id = 40, .cls = decide::EndClass::Failed, .nodes = "n1", .step = 3,
               .action = decide::Action::Resubmit, .reason = "x"};
  CHECK_FALSE(nlohmann::json(e).contains("evidence_rule"));
  CHECK_FALSE(nlohmann::json(e).contains("no_node_blamed"));
  e.evidence_rule = "python_traceback";
  e.evidence_class = "software";
  e.evidence_action = "retry_no_blame";
  e.evidence_line = 7;
  e.evidence_quote = "Traceback (most recent call last):";
  e.no_node_blamed = true;
  const nlohmann::json j = e;
  const auto back = nlohmann::json::parse(j.dump()).get<rec::Ended>();
  CHECK(back.evidence_rule == "python_traceback");
  CHECK(back.evidence_class == "software");
  CHECK(back.evidence_action == "retry_no_blame");
  CHECK(back.evidence_line == 7);
  CHECK(back.evidence_quote == "Traceback (most recent call last):");
  CHECK(back.no_node_blamed);
  CHECK(nlohmann::json(back) == j);
  CHECK(nlohmann::json({{"attempt", 1}, {"evidence_line", "seven"}}).get<rec::Ended>().evidence_line == 0);  // read leniently
}

TEST_CASE("evidence at an ending: a campaign reopened replays the finding; a failure that blamed no node counts for no node") {
  TwoNodes t;
  auto& f = t.f;
  fail_with(f, *t.c, "n[1-2]", std::string("Traceback (most recent call last):\n") + kSrunN1First);
  REQUIRE(f.submits() == 2);
  t.c.reset();
  const auto state = store::read_journal(f.config).state;
  REQUIRE(state.attempts.size() >= 1);
  CHECK(state.attempts[0].ended);
  CHECK(state.failures.empty());
}

TEST_CASE("policy.exclusion_unexplained: second -> the first unexplained failure excludes nothing, the second naming the node does") {
  TwoNodes t(", exclusion_unexplained: second");
  auto& f = t.f;
  fail_with(f, *t.c, "n[1-2]", std::string("step 41 loss 2.1\n") + kSrunN1First);
  REQUIRE(f.submits() == 2);
  CHECK_FALSE(has_exclude(f.fake.submitted[1]));
  CHECK(f.events_of("excluded").empty());
  fail_with(f, *t.c, "n[1-2]", std::string("step 43 loss 2.0\n") + kSrunN1First);
  REQUIRE(f.submits() == 3);
  CHECK(excludes(f.fake.submitted[2], "n1"));
  CHECK(f.told("excluded", "reason", "suspect in 2 failed attempts within the window"));
  CHECK(slurp(f.config.state_dir + "/journal.jsonl").find("\"rule\":\"first_evidence\"") == std::string::npos);
}

TEST_CASE("policy.exclusion_unexplained_ttl: the first-evidence rule's exclusion lasts that long; other blame keeps exclusion_ttl") {
  TwoNodes t(", exclusion_unexplained_ttl: 30m");
  auto& f = t.f;
  const double failed_at = f.clock;
  fail_with(f, *t.c, "n[1-2]", std::string("step 41 loss 2.1\n") + kSrunN1First);
  REQUIRE(f.submits() == 2);
  CHECK(excludes(f.fake.submitted[1], "n1"));
  const auto told = f.events_of("excluded");
  REQUIRE(told.size() == 1);
  CHECK(told[0]["for"] == "30m");
  const auto until = told[0]["until"].get<double>();
  CHECK(until >= failed_at + 1800);
  CHECK(until <= failed_at + 1800 + 60);
  CHECK(f.config.policy.exclusion_ttl == config::Seconds(6 * 3600));
}

// A 2-node campaign whose config has the rule "rank N died" (network, rank_in_line), its first job submitted.
struct RankRule {
  EngineFixture f{"", "slurm: {nodes: 2}\n"};
  EngineFixture::Opened c;
  RankRule() {
    f.fake.node_table = {{"n1", "MIXED"}, {"n2", "MIXED"}, {"n3", "IDLE"}, {"n4", "IDLE"}};
    f.config.evidence.rules = {{"rank_died", R"(rank (\d+) died)", "network", "rank_in_line", "retry", 1}};
    c = f.open();
    f.pass(*c);
  }
};

TEST_CASE("evidence at an ending: a rule that names a rank blames the node the helper's files place it on") {
  RankRule t;
  const auto folder = t.f.config.state_dir + "/attempts/1/hang";
  std::filesystem::create_directories(folder);
  // torchrun's rendezvous placed rank 0 on n2 and rank 1 on n1: not srun's block order
  std::ofstream(folder + "/rank-0.txt") << "mlsup stacks: rank=0 node=n2 pid=9\n";
  std::ofstream(folder + "/rank-1.txt") << "mlsup stacks: rank=1 node=n1 pid=9\n--- mlsup: stacks asked at 5 ---\n";
  fail_with(t.f, *t.c, "n[1-2]", "step 5\nrank 1 died: its NIC reset\n" + std::string(kSrunN2First));
  REQUIRE(t.f.submits() == 2);
  CHECK(excludes(t.f.fake.submitted[1], "n1"));
  const auto ended = ended_records(t.f);
  REQUIRE(ended.size() == 1);
  CHECK(ended[0]["evidence_rule"] == "rank_died");
  CHECK(ended[0]["suspects"] == nlohmann::json::array({"n1"}));
}

TEST_CASE("evidence at an ending: a rank no file places names no node (as without the rule)") {
  RankRule t;
  fail_with(t.f, *t.c, "n[1-2]", "step 5\nrank 1 died\n" + std::string(kSrunN2First));
  const auto ended = ended_records(t.f);
  REQUIRE(ended.size() == 1);
  CHECK(ended[0]["evidence_rule"] == "rank_died");
  CHECK(ended[0]["suspects"] == nlohmann::json::array({"n2"}));  // srun's first report, the first-evidence rule's
}
