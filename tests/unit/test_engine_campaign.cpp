#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "config/load.h"
#include "campaign/campaign.h"
#include "slurm/fake_client.h"
#include "engine_fixture.h"
#include "store/read_campaign.h"

using namespace mlsup;
using mlsup::test::EngineFixture;
using mlsup::test::slurp;
using slurm::ErrorKind;
using slurm::JobState;


TEST_CASE("the first pass submits attempt 1 with its tag, once; later passes watch it") {
  EngineFixture f;
  auto c = f.open();
  CHECK_FALSE(f.pass(*c).has_value());
  REQUIRE(f.submits() == 1);
  const auto& opts = f.fake.submitted[0].options;
  CHECK(std::any_of(opts.begin(), opts.end(), [](const std::string& o) { return o.rfind("--comment=mlsup:t:", 0) == 0 && o.back() == '1'; }));
  f.pass(*c);
  f.pass(*c);
  CHECK(f.submits() == 1);
}

TEST_CASE("a supervisor that died between the intent and the journal's record adopts the job instead of submitting") {
  EngineFixture f;
  {
    auto c = f.open();
    f.fake.next_errors.push_back({ErrorKind::Timeout, 0, "sbatch did not finish in time"});
    f.pass(*c);  // intent recorded; sbatch "timed out" (the fake submitted nothing)
    CHECK(f.submits() == 0);
  }
  // The job was in fact created (a timed-out submission that went through): Slurm knows the tag.
  const auto tag = [&] {
    std::ifstream in(f.config.state_dir + "/journal.jsonl");
    std::string line, found;
    while (std::getline(in, line))
      if (line.find("submit-intent") != std::string::npos) found = line.substr(line.find("mlsup:t:"), 19);
    return found.substr(0, found.find('"'));
  }();
  f.fake.table[555] = slurm::Job{.job_id = 555, .comment = tag, .state = JobState::Running};
  auto c = f.open();
  f.pass(*c);
  CHECK(f.submits() == 0);
  CHECK(f.fake.calls.back().rfind("find_by_tag mlsup:t:", 0) == 0);
  const auto before = f.fake.calls.size();
  f.pass(*c);
  CHECK(f.fake.calls[before] == "jobs 555");
}

TEST_CASE("a Slurm outage is never a job state: nothing is decided while queries fail") {
  EngineFixture f;
  auto c = f.open();
  f.pass(*c);
  const auto id = f.fake.table.begin()->first;
  f.fake.set_state(id, JobState::Running);
  for (int i = 0; i < 5; ++i) {
    f.fake.next_errors.push_back({ErrorKind::Unreachable, 0, "Unable to contact slurm controller"});
    f.clock += 1;
    CHECK_FALSE(f.pass(*c).has_value());
  }
  CHECK(f.submits() == 1);
  f.fake.set_state(id, JobState::Completed);
  const auto done = f.pass(*c);
  REQUIRE(done.has_value());
  CHECK(done->exit_code == 0);
}

TEST_CASE("a failed job is resubmitted after the backoff; a permanent refusal stops the campaign") {
  EngineFixture f;
  auto c = f.open();
  f.pass(*c);
  f.fake.set_state(f.fake.table.begin()->first, JobState::Failed, 1);
  f.pass(*c);  // ended, resubmission decided with a 5 s backoff
  f.pass(*c);
  CHECK(f.submits() == 1);
  f.clock += 6;
  f.fake.next_errors.push_back({ErrorKind::Rejected, 0, "Invalid partition name specified"});
  const auto stopped = f.pass(*c);
  REQUIRE(stopped.has_value());
  CHECK(stopped->exit_code == 14);
  CHECK(stopped->reason.find("Invalid partition name") != std::string::npos);
}

TEST_CASE("a job Slurm failed without starting it (BadConstraints, no batch host) is refused: resubmitted, no budget spent") {
  EngineFixture f;
  f.config.policy.budgets["failed"].count = 0;  // a training failure would stop the campaign at once
  auto c = f.open();
  f.pass(*c);
  const auto id = f.fake.table.begin()->first;
  f.fake.set_state(id, JobState::Failed, 1);
  f.fake.table[id].reason = "BadConstraints";
  f.pass(*c);
  CHECK(f.told("attempt-ended", "class", "refused"));
  CHECK(f.told("attempt-ended", "reason", "no restart budget is spent"));
  f.clock += 6;
  CHECK_FALSE(f.pass(*c).has_value());
  f.pass(*c);
  CHECK(f.submits() == 2);
}

TEST_CASE("a silent job is a hang: fenced, cancelled with the reason journaled, then classed as a hang") {
  EngineFixture f;
  auto c = f.open();
  f.pass(*c);
  const auto id = f.fake.table.begin()->first;
  f.fake.set_state(id, JobState::Running);
  std::filesystem::create_directories(f.config.heartbeat.dir);
  std::ofstream(f.config.heartbeat.dir + "/attempt-1") << "7\n";
  f.pass(*c);
  f.clock += 11;
  f.pass(*c);
  CHECK(std::filesystem::exists(f.config.state_dir + "/fenced/1"));
  CHECK(f.fake.calls.back() == "cancel " + std::to_string(id));
  CHECK(f.fake.calls[f.fake.calls.size() - 2] == "kill_steps " + std::to_string(id));  // no grace for hung tasks
  f.pass(*c);  // the fake shows it CANCELLED: mlsup's own cancel, classed as a hang, resubmitted
  f.clock += 6;
  f.pass(*c);
  CHECK(f.submits() == 2);
}

TEST_CASE("a person's cancel stops the campaign") {
  EngineFixture f;
  auto c = f.open();
  f.pass(*c);
  f.fake.set_state(f.fake.table.begin()->first, JobState::Cancelled);
  const auto out = f.pass(*c);
  REQUIRE(out.has_value());
  CHECK(out->exit_code == 12);
}

TEST_CASE("a job stuck pending for a reason waiting cannot end is alerted once, after the wait") {
  EngineFixture f(", pending_alert_after: 30s", "notify: {command: \"echo $MLSUP_EVENT >> notified\"}\n");
  auto c = f.open();
  f.pass(*c);
  auto& job = f.fake.table.begin()->second;
  job.reason = "JobHeldAdmin";  // a person may release it
  f.pass(*c);
  CHECK_FALSE(std::filesystem::exists(f.config.base_dir + "/notified"));
  f.clock += 31;
  f.pass(*c);
  f.clock += 1;
  f.pass(*c);
  const std::string all = slurp(f.config.base_dir + "/notified");
  CHECK(all == "pending-stuck\n");
}

TEST_CASE("a job that can never start as asked (more nodes than the partition has) is alerted at the first look") {
  EngineFixture f(", pending_alert_after: 1h", "notify: {command: \"echo $MLSUP_EVENT >> notified\"}\n");
  auto c = f.open();
  f.pass(*c);
  f.fake.table.begin()->second.reason = "PartitionNodeLimit";
  f.pass(*c);
  f.pass(*c);
  CHECK(slurp(f.config.base_dir + "/notified") == "pending-stuck\n");
}

TEST_CASE("a second campaign pointed at a claimed checkpoint directory refuses to start") {
  EngineFixture f;
  auto c = f.open();
  EngineFixture other;
  other.config.checkpoint.dir = f.config.checkpoint.dir;
  auto refused = engine::Campaign::open(other.config, {&other.fake, [] { return 0.0; }, nullptr});
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().message.find("belongs to campaign \"t\"") != std::string::npos);
  CHECK(refused.error().kind == util::ErrorKind::Config);  // exit 3 for run and tick, as validate's
  CHECK(refused.error().subject == "checkpoint.dir");
}

TEST_CASE("an ending that needs no backoff is followed by the resubmission in the same pass") {
  EngineFixture f;
  auto c = f.open();
  f.pass(*c);
  f.fake.set_state(f.fake.table.begin()->first, JobState::Timeout);
  f.pass(*c);
  CHECK(f.submits() == 2);
}

TEST_CASE("a job Slurm forgot after it ran, with no source of its end: waited for until its heartbeat shows it gone, then resubmitted") {
  EngineFixture f;
  auto c = f.open();
  f.pass(*c);
  f.fake.set_state(f.fake.table.begin()->first, JobState::Running);
  f.pass(*c);
  f.fake.table.clear();  // aged out (MinJobAge), or lost in a controller crash, while nobody looked
  CHECK_FALSE(f.pass(*c).has_value());
  f.clock += 30;
  CHECK_FALSE(f.pass(*c).has_value());
  CHECK(f.submits() == 1);  // it ran: its processes may live on until the startup timeout (60 s) shows them gone
  f.clock += 31;
  CHECK_FALSE(f.pass(*c).has_value());
  CHECK(f.submits() == 2);
  const std::string all = slurp(f.config.state_dir + "/journal.jsonl");
  CHECK(all.find("\"class\":\"forgotten\"") != std::string::npos);
  CHECK(f.told("forgotten-waiting"));
}

TEST_CASE("a job Slurm forgot before anything shows it started is submitted again at once") {
  EngineFixture f;
  auto c = f.open();
  f.pass(*c);  // submitted; the controller crashes and comes back without it before it starts
  f.fake.table.clear();
  CHECK_FALSE(f.pass(*c).has_value());
  CHECK(f.submits() == 2);
  const std::string all = slurp(f.config.state_dir + "/journal.jsonl");
  CHECK(all.find("\"class\":\"forgotten\"") != std::string::npos);
  CHECK(all.find("nothing shows that it ever started") != std::string::npos);
}

TEST_CASE("a job Slurm forgot after it ran, without heartbeats to show it gone, holds the campaign for a person") {
  EngineFixture f;
  f.config.heartbeat.enabled = false;
  auto c = f.open();
  f.pass(*c);
  f.fake.set_state(f.fake.table.begin()->first, JobState::Running);
  f.pass(*c);
  f.fake.table.clear();
  const auto out = f.pass(*c);
  CHECK(f.submits() == 1);
  REQUIRE(out.has_value());
  CHECK(out->exit_code == 15);
  CHECK(slurp(f.config.state_dir + "/journal.jsonl").find("\"class\":\"end_unknown\"") != std::string::npos);
}

TEST_CASE("a forgotten job whose training reached its target completes the campaign") {
  EngineFixture f("", "target: {steps: 100}\n");
  auto c = f.open();
  f.pass(*c);
  f.fake.set_state(f.fake.table.begin()->first, JobState::Running);
  std::filesystem::create_directories(f.config.heartbeat.dir);
  std::ofstream(f.config.heartbeat.dir + "/attempt-1") << "100\n";
  f.pass(*c);
  f.fake.table.clear();
  const auto out = f.pass(*c);
  REQUIRE(out.has_value());
  CHECK(out->exit_code == 0);
}

namespace {

bool excludes(const slurm::SubmitRequest& r, const std::string& nodes) {
  return std::find(r.options.begin(), r.options.end(), "--exclude=" + nodes) != r.options.end();
}

bool has_exclude(const slurm::SubmitRequest& r) {
  return std::any_of(r.options.begin(), r.options.end(), [](const std::string& o) { return o.rfind("--exclude=", 0) == 0; });
}

// A running 2-node job whose heartbeat goes silent until it counts as hung and is cancelled.
void hang_job(EngineFixture& f, engine::Campaign& c,
              std::vector<slurm::Node> cluster = {{"n1", "MIXED"}, {"n2", "MIXED"}, {"n3", "IDLE"}, {"n4", "IDLE"}}) {
  f.fake.node_table = std::move(cluster);
  f.pass(c);
  f.fake.set_state(f.fake.table.begin()->first, JobState::Running, 0, "n[1-2]");
  std::filesystem::create_directories(f.config.heartbeat.dir);
  std::ofstream(f.config.heartbeat.dir + "/attempt-1") << "7\n";
  f.pass(c);
  f.clock += 11;
  f.pass(c);  // hung: probe, blame, fence, cancel
  f.pass(c);  // CANCELLED by mlsup: a hang, resubmitted after the backoff
  f.clock += 6;
  f.pass(c);
}

}  // namespace

namespace {

// Starts the campaign's first job as a plain script that prints a line every 10 s for passes passes
// (one pass after each line) and never writes a heartbeat; returns its job id.
slurm::JobId printing_job(EngineFixture& f, engine::Campaign& c, int passes) {
  f.pass(c);
  const auto id = f.fake.table.begin()->first;
  const std::string out = f.dir.write("plain.out", "");
  f.fake.set_state(id, JobState::Running, 0, "n1");
  f.fake.table[id].std_out = out;
  for (int i = 0; i < passes; ++i) {
    std::ofstream(out, std::ios::app) << "step " << i << "\n";
    f.pass(c);
    f.clock += 10;
  }
  return id;
}

}  // namespace

TEST_CASE("a plain script that prints and never writes a heartbeat is alive while its output grows (source auto)") {
  EngineFixture f;
  auto c = f.open();
  const auto id = printing_job(f, *c, 10);  // 100 s of printing: past the 60 s start-up and 10 s steady timeouts
  CHECK(f.fake.table[id].state == JobState::Running);
  CHECK(f.submits() == 1);
  f.clock += 1;
  f.pass(*c);  // it stopped printing 11 s ago: hung
  CHECK(f.told("hang-detected", "reason", "the job's output has not grown for"));
  CHECK(f.fake.table[id].state != JobState::Running);
}

TEST_CASE("mlsup's own preamble lines in the output are not the training's life: the start-up timeout still holds") {
  EngineFixture f;
  auto c = f.open();
  f.pass(*c);
  const auto id = f.fake.table.begin()->first;
  const std::string out = f.dir.write("wide.out", "");
  f.fake.set_state(id, JobState::Running, 0, "n1");
  f.fake.table[id].std_out = out;
  f.pass(*c);
  std::ofstream(out, std::ios::app) << "mlsup: attempt 1 runs on n1,n2\n";  // the spare preamble, then silence
  for (int i = 0; i < 5; ++i) {  // 50 s: past the 10 s steady timeout, within the 60 s start-up
    f.clock += 10;
    f.pass(*c);
  }
  CHECK(f.events_of("hang-detected").empty());
  CHECK(f.fake.table[id].state == JobState::Running);
}

TEST_CASE("with heartbeat.source file, a printing script without a heartbeat is hung after the start-up timeout") {
  EngineFixture f;
  f.config.heartbeat.source = "file";
  auto c = f.open();
  printing_job(f, *c, 7);
  CHECK(f.told("hang-detected", "reason", "no heartbeat 1m"));
}

TEST_CASE("a hang with a node that does not answer its probe: that node, and only it, is kept out") {
  EngineFixture f;
  f.silent = {"n2"};
  auto c = f.open();
  hang_job(f, *c);
  REQUIRE(f.submits() == 2);
  CHECK(excludes(f.fake.submitted[1], "n2"));
}

TEST_CASE("a hang on nodes that all answer excludes nothing") {
  EngineFixture f;
  auto c = f.open();
  hang_job(f, *c);
  REQUIRE(f.submits() == 2);
  CHECK_FALSE(has_exclude(f.fake.submitted[1]));
}

TEST_CASE("a failure on a node Slurm marks not responding keeps it out; one Slurm shows DOWN needs no entry") {
  EngineFixture f;
  auto c = f.open();
  f.pass(*c);
  f.fake.node_table = {{"n1", "MIXED"}, {"n2", "MIXED", false, true}, {"n3", "DOWN"}, {"n4", "IDLE"}};
  f.fake.set_state(f.fake.table.begin()->first, JobState::NodeFail, 0, "n[1-3]");
  f.pass(*c);
  f.clock += 6;
  f.pass(*c);
  REQUIRE(f.submits() == 2);
  CHECK(excludes(f.fake.submitted[1], "n2"));
}

TEST_CASE("exclusions that would leave too few nodes for the job are relaxed") {
  EngineFixture f("", "slurm: {nodes: 2}\n");
  f.silent = {"n2"};
  auto c = f.open();
  hang_job(f, *c, {{"n1", "MIXED"}, {"n2", "MIXED"}});  // a 2-node cluster for a 2-node job
  REQUIRE(f.submits() == 2);
  CHECK_FALSE(has_exclude(f.fake.submitted[1]));
  CHECK(f.told("excluded"));
  CHECK(f.told("exclusions-relaxed"));
}

namespace {

// Ends the current job as FAILED on nodes, with srun's words in its output, and resubmits.
void fail_with_output(EngineFixture& f, engine::Campaign& c, const std::string& nodes, const std::string& output) {
  const auto id = f.fake.next_id - 1;
  const std::string out = f.dir.write("job-" + std::to_string(id) + ".out", output);
  f.fake.set_state(id, JobState::Failed, 1, nodes);
  f.fake.table[id].std_out = out;
  f.pass(c);
  f.clock += 6;
  f.pass(c);
}

}  // namespace

TEST_CASE("the node srun names first is kept out after its first failure, and resubmitted at once; the ones killed after it are not") {
  EngineFixture f("", "slurm: {nodes: 2}\n");
  f.fake.node_table = {{"n1", "MIXED"}, {"n2", "MIXED"}, {"n3", "IDLE"}, {"n4", "IDLE"}};
  auto c = f.open();
  f.pass(*c);
  const auto id = f.fake.next_id - 1;
  f.fake.table[id].std_out =
      f.dir.write("job.out", "srun: error: n1: task 0: Exited with exit code 1\nsrun: error: n2: task 1: Terminated\n");
  f.fake.set_state(id, JobState::Failed, 1, "n[1-2]");
  f.pass(*c);  // no backoff: a node was excluded for it
  REQUIRE(f.submits() == 2);
  CHECK(excludes(f.fake.submitted[1], "n1"));
  const std::string journal = slurp(f.config.state_dir + "/journal.jsonl");
  CHECK(journal.find("\"rule\":\"first_evidence\"") != std::string::npos);
  CHECK(journal.find("\"new_exclusion\":true") != std::string::npos);
  CHECK(journal.find("\"delay\":0") != std::string::npos);
}

namespace {

// Fails the current job (attempt) on nodes with rank's task on first named first by srun, its
// heartbeat at step, then passes until the next attempt is submitted (after a backoff, if any).
void fail_rank(EngineFixture& f, engine::Campaign& c, int attempt, const std::string& nodes, const std::string& first,
               int rank, int step) {
  f.heartbeat(std::to_string(step) + "\n", attempt);
  f.pass(c);  // the heartbeat is seen
  const auto id = f.fake.next_id - 1;
  const std::string out = f.dir.write("job-" + std::to_string(id) + ".out",
                                      "srun: error: " + first + ": task " + std::to_string(rank) +
                                          ": Exited with exit code 1\n");
  f.fake.table[id].std_out = out;
  f.fake.set_state(id, JobState::Failed, 1, nodes);
  const auto before = f.submits();
  f.pass(c);
  for (int i = 0; i < 200 && f.submits() == before; ++i) {
    f.clock += 5;
    f.pass(c);
  }
}

}  // namespace

TEST_CASE("a failure that follows the training to another node: the rule's exclusion is lifted, and it excludes no node again") {
  EngineFixture f(", crash_loop_restarts: 9", "slurm: {nodes: 2}\n");
  f.fake.node_table = {{"n1", "MIXED"}, {"n2", "MIXED"}, {"n3", "IDLE"}, {"n4", "IDLE"}};
  auto c = f.open();
  f.pass(*c);
  fail_rank(f, *c, 1, "n[1-2]", "n2", 1, 30);
  REQUIRE(f.submits() == 2);
  CHECK(excludes(f.fake.submitted[1], "n2"));
  fail_rank(f, *c, 2, "n[1,3]", "n3", 1, 30);  // rank 1 fails at the same step on another node
  REQUIRE(f.submits() == 3);
  CHECK_FALSE(has_exclude(f.fake.submitted[2]));  // n2's exclusion lifted, n3 not excluded
  const std::string journal = slurp(f.config.state_dir + "/journal.jsonl");
  CHECK(journal.find("\"type\":\"exclusion-lifted\"") != std::string::npos);
  CHECK(journal.find("\"lifted\":[\"n2\"]") != std::string::npos);
  CHECK(f.told("exclusion-lifted"));
  fail_rank(f, *c, 3, "n[1-2]", "n2", 1, 30);  // and again on n2: it follows the training, no node is named
  fail_rank(f, *c, 4, "n[2,4]", "n2", 1, 30);  // n2 named a third time: still no exclusion
  REQUIRE(f.submits() == 5);
  CHECK_FALSE(has_exclude(f.fake.submitted[3]));
  CHECK_FALSE(has_exclude(f.fake.submitted[4]));
  fail_rank(f, *c, 5, "n[1-2]", "n1", 0, 70);  // another rank far from that step: the rule applies again
  REQUIRE(f.submits() == 6);
  CHECK(excludes(f.fake.submitted[5], "n1"));
}

TEST_CASE("srun's victims are not suspects: the node whose task was killed first is the suspect, not the one failing after it") {
  EngineFixture f("", "slurm: {nodes: 2}\n");
  f.fake.node_table = {{"n1", "MIXED"}, {"n2", "MIXED"}, {"n3", "IDLE"}, {"n4", "IDLE"}};
  auto c = f.open();
  f.pass(*c);
  // A rank on n2 is killed; its peer on n1 then fails because its collective lost a peer.
  fail_with_output(f, *c, "n[1-2]",
                   "srun: error: n2: task 1: Killed\n"
                   "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.\n"
                   "srun: error: n1: task 0: Exited with exit code 1\n");
  REQUIRE(f.submits() == 2);
  const std::string first = slurp(f.config.state_dir + "/events.jsonl");
  CHECK(first.find("\"suspects\":[\"n2\"]") != std::string::npos);
  CHECK(first.find("\"victims\":[\"n1\"]") != std::string::npos);
  // A SIGKILL from outside (a person's kill -9) names no node for exclusion, not even under the first-evidence
  // rule: neither n2 nor its victim n1 is excluded (n2 stays the suspect the repeated-failure rule counts).
  CHECK_FALSE(excludes(f.fake.submitted[1], "n2"));
  CHECK_FALSE(excludes(f.fake.submitted[1], "n1"));
}

TEST_CASE("a job pending on ReqNodeNotAvail because of mlsup's exclusions gets the oldest dropped, in place") {
  EngineFixture f("", "slurm: {nodes: 2}\n");
  f.silent = {"n2"};
  auto c = f.open();
  hang_job(f, *c);
  REQUIRE(f.submits() == 2);
  REQUIRE(excludes(f.fake.submitted[1], "n2"));
  const auto id = f.fake.next_id - 1;
  f.fake.table[id].excluded_nodes = "n[2,4]";  // n4: the script's own exclusion
  f.fake.table[id].reason = "ReqNodeNotAvail";
  f.pass(*c);
  CHECK(f.fake.table[id].excluded_nodes == "n[2,4]");  // not before policy.exclusion_relax_after
  f.clock += 61;
  f.pass(*c);
  CHECK(f.fake.table[id].excluded_nodes == "n4");
  f.fake.table[id].reason = "ReqNodeNotAvail";
  f.clock += 61;
  f.pass(*c);  // nothing of mlsup's is left to drop
  CHECK(f.fake.table[id].excluded_nodes == "n4");
  const std::string all = slurp(f.config.state_dir + "/journal.jsonl");
  CHECK(all.find("\"type\":\"relaxed\"") != std::string::npos);
}

namespace {

// Chain mode: the array's pending remainder and one split-off task, as Slurm shows them.
struct ChainFixture : EngineFixture {
  ChainFixture() : EngineFixture("", "slurm: {array: \"1-4%1\", nodes: 2}\n") {
    fake.node_table = {{"n1", "MIXED"}, {"n2", "MIXED"}, {"n3", "IDLE"}, {"n4", "IDLE"}};
  }
  slurm::JobId array = 0;

  void queue(const std::string& pending) {
    auto& rest = fake.table[array];
    rest.array_job_id = array;
    rest.array_task_pending = pending;
    rest.state = pending.empty() ? JobState::Completed : JobState::Pending;
  }
  // Task `task` of the array runs as job id on nodes, and claimed attempt (as its preamble does).
  void start_task(slurm::JobId id, std::uint32_t task, int attempt, const std::string& nodes) {
    auto& j = fake.table[id];
    j.job_id = id;
    j.array_job_id = array;
    j.array_task_id = task;
    j.state = JobState::Running;
    j.nodes = nodes;
    dir.write(".mlsup/t/chain/claims/" + std::to_string(attempt) + "/task",
              std::to_string(id) + " " + std::to_string(task) + " prepared \n");
  }
};

}  // namespace

TEST_CASE("chain mode: each attempt is the task that claims it; the next one goes to the queued task, at once") {
  ChainFixture f;
  auto c = f.open();
  f.pass(*c);
  REQUIRE(f.submits() == 1);
  f.array = f.fake.next_id - 1;
  const std::string next = f.config.state_dir + "/chain/next.env";
  CHECK(slurp(next).find("export MLSUP_ATTEMPT=1\n") != std::string::npos);
  f.queue("2-4%1");
  f.pass(*c);  // nothing claimed yet: the task is waiting in the queue
  f.start_task(200, 1, 1, "n[1-2]");
  f.pass(*c);  // claimed
  f.pass(*c);  // watched: running
  CHECK(f.fake.calls.back() == "jobs " + std::to_string(f.array));
  f.dir.write(".mlsup/t/checkpoints/step-50/model.bin", "weights");
  f.clock += 11;
  f.pass(*c);  // now and then the newest checkpoint goes into next.env, for a task starting while mlsup is away
  CHECK(slurp(next).find("export MLSUP_ATTEMPT=1\n") != std::string::npos);
  CHECK(slurp(next).find("export MLSUP_RESUME_FROM=" + f.config.checkpoint.dir + "/step-50\n") != std::string::npos);
  const std::string out = f.dir.write("task1.out",
                                      "srun: error: n2: task 1: Exited with exit code 1\nsrun: error: n1: task 0: Terminated\n");
  f.fake.table[200].std_out = out;
  f.fake.set_state(200, JobState::Failed, 1);
  f.pass(*c);  // ended; attempt 2 handed to the queued task in the same pass, without the backoff
  CHECK(f.submits() == 1);
  CHECK(slurp(next).find("export MLSUP_ATTEMPT=2\n") != std::string::npos);
  f.start_task(201, 2, 2, "n[1-2]");
  f.pass(*c);
  f.pass(*c);
  f.fake.table[201].std_out = out;
  f.fake.set_state(201, JobState::Failed, 1);
  f.pass(*c);  // n2 failed twice: kept off the queued tasks, in place
  CHECK(f.submits() == 1);
  CHECK(f.fake.table[f.array].excluded_nodes == "n2");
  CHECK(slurp(next).find("export MLSUP_EXCLUDE=n2\n") != std::string::npos);
  f.fake.table[f.array].excluded_nodes = "";  // as if the supervisor had died before patching
  f.pass(*c);
  CHECK(f.fake.table[f.array].excluded_nodes == "n2");  // the waiting attempt patches it again
  f.start_task(202, 3, 3, "n[1,3]");
  f.pass(*c);
  f.pass(*c);
  f.fake.set_state(202, JobState::Completed, 0);
  f.queue("4");
  const auto done = f.pass(*c);
  REQUIRE(done.has_value());
  CHECK(done->exit_code == 0);
  CHECK(f.fake.calls.back() == "cancel " + std::to_string(f.array));  // the rest of the chain is not needed
}

TEST_CASE("chain mode: a hang cancels its task only; a chain that runs out is topped up with a new one") {
  ChainFixture f;
  auto c = f.open();
  f.pass(*c);
  f.array = f.fake.next_id - 1;
  f.queue("2%1");
  f.start_task(300, 1, 1, "n[1-2]");
  f.pass(*c);
  f.pass(*c);
  std::ofstream(f.config.heartbeat.dir + "/attempt-1") << "5\n";
  f.pass(*c);
  f.clock += 11;
  f.pass(*c);  // hung: the task is cancelled, not the array
  CHECK(f.fake.calls.back() == "cancel 300");
  f.fake.set_state(300, JobState::Cancelled);
  f.queue("");  // the last task left the queue and exited at once (say, on an excluded node)
  f.pass(*c);   // ended; attempt 2 has no queued task: a new chain after the backoff
  f.clock += 6;
  f.pass(*c);
  CHECK(f.submits() == 2);
}

namespace {

// Writes the SPANK plugin's record file of one node of job id into the campaign's state dir.
void node_records(const EngineFixture& f, slurm::JobId id, const std::string& node, const std::string& lines) {
  const std::string dir = f.config.state_dir + "/nodes/" + std::to_string(id);
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/" + node + ".jsonl") << lines;
}

std::string task_exit(slurm::JobId id, int step, const std::string& node, int rank, int code, int sig, double time) {
  return R"({"v":1,"kind":"task-exit","job":)" + std::to_string(id) + R"(,"step":)" + std::to_string(step) +
         R"(,"node":")" + node + R"(","rank":)" + std::to_string(rank) + R"(,"local_rank":0,"exit_code":)" +
         std::to_string(code) + R"(,"signal":)" + std::to_string(sig) + R"(,"time":)" + std::to_string(time) + "}\n";
}

}  // namespace

TEST_CASE("with the plugin's records, the node whose task failed first by a machine fault is kept out after one failure") {
  EngineFixture f("", "slurm: {nodes: 2}\n");
  f.fake.node_table = {{"n1", "MIXED"}, {"n2", "MIXED"}, {"n3", "IDLE"}, {"n4", "IDLE"}};
  auto c = f.open();
  f.pass(*c);
  const auto id = f.fake.next_id - 1;
  // n2's rank 1 dies of SIGBUS; --kill-on-bad-exit then kills rank 0 on n1; the batch script (step -1) fails after.
  node_records(f, id, "n1", task_exit(id, 0, "n1", 0, 0, 9, 1000.4) + task_exit(id, -1, "n1", 0, 1, 0, 1000.2));
  node_records(f, id, "n2", task_exit(id, 0, "n2", 1, 0, 7, 1000.3) + "{\"v\":1,\"kind\":\"task-ex");  // a torn line
  fail_with_output(f, *c, "n[1-2]", "");
  REQUIRE(f.submits() == 2);
  CHECK(excludes(f.fake.submitted[1], "n2"));
  CHECK(f.told("attempt-ended", "first_failure", R"({"exit_code":0,"node":"n2","rank":1,"signal":7,"step":0})"));
  CHECK(f.told("node-records-problems"));
}

TEST_CASE("with the plugin's records, a first failure by an exit code names the one suspect, excluded at once by the first-evidence rule") {
  EngineFixture f("", "slurm: {nodes: 2}\n");
  f.fake.node_table = {{"n1", "MIXED"}, {"n2", "MIXED"}, {"n3", "IDLE"}, {"n4", "IDLE"}};
  auto c = f.open();
  f.pass(*c);
  const auto id = f.fake.next_id - 1;
  // n2's rank 1 exits 3; n1's rank 0 exits 1 seconds later (its collective lost a peer).
  node_records(f, id, "n1", task_exit(id, 0, "n1", 0, 1, 0, 1004.0));
  node_records(f, id, "n2", task_exit(id, 0, "n2", 1, 3, 0, 1000.3));
  fail_with_output(f, *c, "n[1-2]", "");
  REQUIRE(f.submits() == 2);
  CHECK(excludes(f.fake.submitted[1], "n2"));
  CHECK_FALSE(excludes(f.fake.submitted[1], "n1"));
  CHECK(f.told("excluded", "reason", "(the plugin's records)"));
  CHECK(f.told("attempt-ended", "suspects", R"(["n2"])"));
}

TEST_CASE("with the plugin's records, a node whose health check failed is kept out") {
  EngineFixture f("", "slurm: {nodes: 2}\n");
  f.fake.node_table = {{"n1", "MIXED"}, {"n2", "MIXED"}, {"n3", "IDLE"}, {"n4", "IDLE"}};
  auto c = f.open();
  f.pass(*c);
  const auto id = f.fake.next_id - 1;
  node_records(f, id, "n1", R"({"v":1,"kind":"health","job":)" + std::to_string(id) +
                                R"(,"step":0,"node":"n1","ok":false,"exit_code":1,"detail":"Xid 79","time":999.0})" "\n" +
                                task_exit(id, 0, "n1", 0, 79, 0, 999.1));
  node_records(f, id, "n2", R"({"v":1,"kind":"health","job":)" + std::to_string(id) +
                                R"(,"step":0,"node":"n2","ok":true,"exit_code":0,"detail":"ok","time":999.0})" "\n" +
                                task_exit(id, 0, "n2", 1, 0, 9, 999.2));
  fail_with_output(f, *c, "n[1-2]", "");
  REQUIRE(f.submits() == 2);
  CHECK(excludes(f.fake.submitted[1], "n1"));
  CHECK(f.told("attempt-ended", "health_failed", R"(["n1"])"));
}

namespace {

// The plugin's "node" record of one node: its addresses and GPUs ({uuid, bus}).
std::string node_facts(slurm::JobId id, const std::string& node, const std::vector<std::pair<std::string, std::string>>& gpus,
                       const std::string& addresses = "") {
  std::string list;
  for (const auto& [uuid, bus] : gpus)
    list += std::string(list.empty() ? "" : ",") + R"({"uuid":")" + uuid + R"(","bus":")" + bus + R"(","model":"NVIDIA H100 80GB HBM3"})";
  return R"({"v":1,"kind":"node","job":)" + std::to_string(id) + R"(,"step":0,"node":")" + node + R"(","addresses":[)" +
         addresses + R"(],"gpus":[)" + list + R"(],"time":998.0})" "\n";
}

constexpr const char* kGpuA = "GPU-0a1b2c3d-0000-4000-8000-00000000000a";
constexpr const char* kGpuA2 = "GPU-0a1b2c3d-0000-4000-8000-0000000000a2";
constexpr const char* kGpuB = "GPU-0a1b2c3d-0000-4000-8000-00000000000b";

// Attempt 1 of a 2-node job on n[1-2] fails by n1's health check (detail: its line); n1 has GPUs A
// (0000:07:00.0) and A2 (0000:0a:00.0), n2 has B. Returns the campaign, attempt 2 submitted.
EngineFixture::Opened gpu_check_fails(EngineFixture& f, const std::string& detail) {
  f.fake.node_table = {{"n1", "MIXED"}, {"n2", "MIXED"}, {"n3", "IDLE"}, {"n4", "IDLE"}};
  auto c = f.open();
  f.pass(*c);
  const auto id = f.fake.next_id - 1;
  node_records(f, id, "n1", node_facts(id, "n1", {{kGpuA, "0000:07:00.0"}, {kGpuA2, "0000:0a:00.0"}}) +
                                R"({"v":1,"kind":"health","job":)" + std::to_string(id) +
                                R"(,"step":0,"node":"n1","ok":false,"exit_code":1,"detail":")" + detail + R"(","time":999.0})"
                                "\n" + task_exit(id, 0, "n1", 0, 79, 0, 999.1));
  node_records(f, id, "n2", node_facts(id, "n2", {{kGpuB, "0000:07:00.0"}}) + task_exit(id, 0, "n2", 1, 0, 9, 999.2));
  fail_with_output(f, *c, "n[1-2]", "");
  return c;
}

}  // namespace

TEST_CASE("GPU identity: an exclusion carries the GPU its evidence names, and follows it to the node it turns up in") {
  EngineFixture f("", "slurm: {nodes: 2}\n");
  // n1's health check names its GPU at 0000:07:00.0 as the kernel's Xid line does; n1 has a second GPU.
  auto c = gpu_check_fails(f, "NVRM: Xid (PCI:0000:07:00): 79, GPU has fallen off the bus");
  REQUIRE(f.submits() == 2);
  CHECK(excludes(f.fake.submitted[1], "n1"));
  CHECK(f.told("excluded", "gpus", std::string("[\"") + kGpuA + "\"]"));  // the one the line names, not n1's other GPU
  // The board turns up in n3 (moved there); attempt 2 fails for nothing of its nodes.
  const auto id = f.fake.next_id - 1;
  node_records(f, id, "n2", node_facts(id, "n2", {{kGpuB, "0000:07:00.0"}}));
  node_records(f, id, "n3", node_facts(id, "n3", {{kGpuA, "0000:3b:00.0"}}));
  fail_with_output(f, *c, "n[2-3]", "");
  REQUIRE(f.submits() == 3);
  CHECK(f.told("exclusion-moved", "to", "n3"));
  CHECK(f.told("exclusion-moved", "reason", "is now in n3"));
  CHECK(excludes(f.fake.submitted[2], "n3"));  // n1 is free again: its bad GPU left it
  const auto s = store::read_journal(f.config).state;
  REQUIRE(s.ledger.size() == 2);
  CHECK(s.ledger[0].node == "n1");
  CHECK(s.ledger[0].until <= f.clock);
  CHECK(s.ledger[0].ended_by.find("found in n3") != std::string::npos);
  CHECK(s.ledger[1].node == "n3");
  CHECK(s.ledger[1].gpus == std::vector<std::string>{kGpuA});
}

TEST_CASE("GPU identity: an exclusion does not follow part of its GPUs, nor stays where its GPUs are no longer seen") {
  EngineFixture f("", "slurm: {nodes: 2}\n");
  auto c = gpu_check_fails(f, "uncorrectable ECC errors on n1: 3");  // names no GPU: the exclusion carries both of n1's
  REQUIRE(f.submits() == 2);
  CHECK(f.told("excluded", "gpus", std::string("[\"") + kGpuA + "\",\"" + kGpuA2 + "\"]"));
  const auto id = f.fake.next_id - 1;
  node_records(f, id, "n3", node_facts(id, "n3", {{kGpuA, "0000:3b:00.0"}}));  // one of the two only
  fail_with_output(f, *c, "n[2-3]", "");
  REQUIRE(f.submits() == 3);
  CHECK_FALSE(f.told("exclusion-moved"));
  CHECK(excludes(f.fake.submitted[2], "n1"));
}

TEST_CASE("without the plugin's records a single failure of a multi-node job excludes nothing") {
  EngineFixture f("", "slurm: {nodes: 2}\n");
  f.fake.node_table = {{"n1", "MIXED"}, {"n2", "MIXED"}, {"n3", "IDLE"}, {"n4", "IDLE"}};
  auto c = f.open();
  f.pass(*c);
  fail_with_output(f, *c, "n[1-2]", "");
  REQUIRE(f.submits() == 2);
  CHECK_FALSE(has_exclude(f.fake.submitted[1]));
}

namespace {

// Submits the campaign's 2-node job and shows it running on n[1-2]; returns a writer of its
// per-task heartbeat files (name, content).
std::function<void(const std::string&, const std::string&)> two_node_job(EngineFixture& f, engine::Campaign& c) {
  f.fake.node_table = {{"n1", "MIXED"}, {"n2", "MIXED"}, {"n3", "IDLE"}, {"n4", "IDLE"}};
  f.pass(c);
  f.fake.set_state(f.fake.table.begin()->first, JobState::Running, 0, "n[1-2]");
  const std::string dir = f.config.heartbeat.dir + "/attempt-1.d";
  std::filesystem::create_directories(dir);
  return [dir](const std::string& name, const std::string& text) { std::ofstream(dir + "/" + name) << text << "\n"; };
}

}  // namespace

TEST_CASE("per-task heartbeats: a rank slower in its own compute for stragglers.for is told once, across separate ticks") {
  EngineFixture f("", "slurm: {nodes: 2}\nstragglers: {slower_by: 20, for: 20s}\n");
  const auto beat = two_node_job(f, *f.open());
  const auto id = f.fake.table.begin()->first;
  for (int step = 1; step <= 12; ++step) {  // a step every 3 s: n2's rank computes 0.5 s, n1's 0.2 s
    beat("n1.0", std::to_string(step) + " compute=0.2000");
    beat("n2.1", std::to_string(step) + " compute=0.5000");
    f.pass(*f.open());  // each pass a process of its own, like `mlsup tick`
    CHECK_MESSAGE(f.events_of("straggler").size() == (step >= 8 ? 1u : 0u), "step ", step);  // slower from step 1, 21 s at step 8
    f.clock += 3;
  }
  const auto told = f.events_of("straggler");
  REQUIRE(told.size() == 1);
  CHECK(told[0]["node"] == "n2");
  CHECK(told[0]["rank"] == "n2.1");
  CHECK(told[0]["job_id"] == id);
  CHECK(told[0]["compute"].get<double>() == doctest::Approx(0.5));
  CHECK(told[0]["others"].get<double>() == doctest::Approx(0.2));
  CHECK(told[0]["reason"] == "rank n2.1 on n2 computes 0.500 s per step, the other ranks 0.200 s (their median): slower by "
                            "more than stragglers.slower_by (20%) for 21s");
  CHECK(f.calls("cancel") == 0);  // told, not acted on
  CHECK(f.submits() == 1);
}

TEST_CASE("per-task heartbeats: a hang names the node whose heartbeat stopped first, across separate ticks") {
  EngineFixture f("", "slurm: {nodes: 2}\n");
  const auto beat = two_node_job(f, *f.open());
  const auto id = f.fake.table.begin()->first;
  beat("n1.0", "5");
  beat("n2.1", "5");
  beat(".n1.0.host.123.tmp", "garbage");  // a writer's temporary file is no heartbeat
  f.pass(*f.open());  // each pass a process of its own, like `mlsup tick`
  f.clock += 3;
  beat("n1.0", "6");
  f.pass(*f.open());
  f.clock += 3;
  beat("n1.0", "6 waiting 1");  // n1's rank is alive, blocked on n2's
  f.pass(*f.open());
  f.clock += 3;
  beat("n1.0", "6 waiting 2");
  f.pass(*f.open());
  CHECK(f.calls("cancel") == 0);  // alive but no progress for 6 s: not yet hung
  CHECK(f.calls("jobs " + std::to_string(id)) >= 4);
  f.clock += 5;
  f.pass(*f.open());  // 11 s without progress: hung, n2 stopped 9 s before n1
  CHECK(std::filesystem::exists(f.config.state_dir + "/fenced/1"));
  CHECK(f.told("heartbeat-stale-first", "nodes", "n2"));
  CHECK(f.told("excluded", "reason", "its heartbeat stopped 9 s before the other nodes'"));
  auto c = f.open();
  f.pass(*c);
  f.clock += 6;
  f.pass(*c);
  REQUIRE(f.submits() == 2);
  CHECK(excludes(f.fake.submitted[1], "n2"));
}

TEST_CASE("per-task heartbeats: a waited-on node that does not answer while the control node does not either proves nothing") {
  EngineFixture f("", "slurm: {nodes: 2}\n");
  f.silent = {"n1", "n2"};  // a frozen controller: no step starts, on any node
  auto c = f.open();
  const auto beat = two_node_job(f, *c);
  beat("n1.0", "5");
  beat("n2.1", "5 saving");
  f.pass(*c);
  f.clock += 3;
  beat("n1.0", "5 saving waiting 1");
  f.pass(*c);
  CHECK_FALSE(std::filesystem::exists(f.config.state_dir + "/fenced/1"));
  CHECK(f.told("probe-doubted", "reason", "the control node n1"));
  CHECK(f.submits() == 1);
}

TEST_CASE("per-task heartbeats: the node the other ranks wait on is probed before the timeout; proven silent, it is a hang at once") {
  EngineFixture f("", "slurm: {nodes: 2}\n");
  f.silent = {"n2"};
  auto c = f.open();
  const auto beat = two_node_job(f, *c);
  beat("n1.0", "5");
  beat("n2.1", "5 saving");  // frozen in a save: the save timeout (100 s here) would be its limit
  f.pass(*c);
  f.clock += 2;
  beat("n1.0", "5 saving waiting 1");  // n1's rank is done and waits on n2's
  f.pass(*c);
  CHECK_FALSE(std::filesystem::exists(f.config.state_dir + "/fenced/1"));  // 2 s: within the margin (2.5 s)
  f.clock += 1;
  beat("n1.0", "5 saving waiting 2");
  f.pass(*c);  // n2 silent 3 s before n1's last change, n1 waiting: probed, silent, a hang 3 s after the freeze
  CHECK(std::filesystem::exists(f.config.state_dir + "/fenced/1"));
  CHECK(f.told("hang-detected", "reason", "the other ranks wait on n2"));
  CHECK(f.told("hang-detected", "reason", "n2 did not answer a probe in 5s"));
  f.pass(*c);
  f.clock += 6;
  f.pass(*c);
  REQUIRE(f.submits() == 2);
  CHECK(excludes(f.fake.submitted[1], "n2"));
}

TEST_CASE("per-task heartbeats: a node the other ranks wait on that answers its probe is left to the timeout, probed again after 30 s") {
  EngineFixture f("", "slurm: {nodes: 2}\n");
  f.config.heartbeat.steady_timeout = std::chrono::seconds(60);
  auto c = f.open();
  const auto beat = two_node_job(f, *c);
  const auto id = f.fake.table.begin()->first;
  beat("n1.0", "5");
  beat("n2.1", "5");  // a slow rank (a long data load), its node alive
  f.pass(*c);
  auto answered = [&] { return f.events_of("probe-answered").size(); };
  for (int i = 1; i <= 50; ++i) {  // 50 s of n1 waiting on n2
    f.clock += 1;
    beat("n1.0", "5 waiting " + std::to_string(i));
    f.pass(*c);
  }
  CHECK(answered() == 2);  // at 15 s (the margin) and 30 s later
  CHECK_FALSE(std::filesystem::exists(f.config.state_dir + "/fenced/1"));
  CHECK(f.fake.table[id].state == JobState::Running);
}

TEST_CASE("heartbeat.json of an older mlsup (one file, no per-file entries) still counts") {
  EngineFixture f;
  f.pass(*f.open());
  const auto id = f.fake.table.begin()->first;
  f.fake.set_state(id, JobState::Running);
  std::filesystem::create_directories(f.config.heartbeat.dir);
  std::ofstream(f.config.heartbeat.dir + "/attempt-1") << "7\n";
  std::filesystem::remove(f.config.state_dir + "/memory.json");  // an older mlsup wrote only heartbeat.json
  std::ofstream(f.config.state_dir + "/heartbeat.json")
      << R"({"attempt":1,"content":"7\n","changed_at":990.0,"running_since":985.0})" << "\n";
  f.pass(*f.open());  // 10 s after the change the old file recorded: hung
  CHECK(std::filesystem::exists(f.config.state_dir + "/fenced/1"));
}

TEST_CASE("a hang runs heartbeat.hang_command in the job's context before the cancel, and keeps its output") {
  EngineFixture f("", "slurm: {nodes: 2}\n");
  f.config.heartbeat.hang_command = "echo \"job $MLSUP_JOB_ID nodes $MLSUP_NODES attempt $MLSUP_ATTEMPT\"; echo oops >&2";
  auto c = f.open();
  hang_job(f, *c);
  const std::string evidence = slurp(f.config.state_dir + "/attempts/1/hang-evidence.txt");
  CHECK(evidence == "job 100 nodes n1,n2 attempt 1\n\n--- stderr ---\noops\n");
  CHECK(f.told("hang-evidence"));
}

TEST_CASE("a running job whose heartbeat steps may go on Slurm's last answer until the heartbeat pauses or says saving") {
  EngineFixture f("", "running_poll_interval: 5s\n");
  auto c = f.open();
  f.pass(*c);
  CHECK_FALSE(c->quiet_for());  // a job just submitted: Slurm is asked at every pass
  f.fake.set_state(f.fake.table.begin()->first, JobState::Running, 0, "n1");
  f.pass(*c);
  CHECK_FALSE(c->quiet_for());  // running, but no heartbeat yet
  for (int step = 1; step <= 4; ++step) {  // a step a second, a pass a second
    f.clock += 1;
    f.heartbeat(std::to_string(step) + "\n");
    f.pass(*c);
  }
  REQUIRE(c->quiet_for());
  CHECK(*c->quiet_for() == doctest::Approx(3));  // three steps of silence would be a move
  f.clock += 1;
  f.pass(*c);  // one second without a step: still quiet
  REQUIRE(c->quiet_for());
  CHECK(*c->quiet_for() == doctest::Approx(2));
  f.clock += 2.5;
  f.pass(*c);
  CHECK_FALSE(c->quiet_for());  // silent for 3.5 s: Slurm at every pass
  f.clock += 1;
  f.heartbeat("5 saving\n");
  f.pass(*c);
  CHECK_FALSE(c->quiet_for());  // a phase is a move
  f.clock += 1;
  f.heartbeat("6\n");
  f.pass(*c);
  CHECK(c->quiet_for());
  f.fake.set_state(f.fake.table.begin()->first, JobState::Completed, 0, "n1");
  f.clock += 1;
  f.pass(*c);
  CHECK_FALSE(c->quiet_for());  // the ending decided something
}

TEST_CASE("running_poll_interval no longer than poll_interval: a running job is asked about at every pass") {
  EngineFixture f("", "running_poll_interval: 1s\n");
  auto c = f.open();
  f.pass(*c);
  f.fake.set_state(f.fake.table.begin()->first, JobState::Running, 0, "n1");
  for (int step = 1; step <= 4; ++step) {
    f.clock += 1;
    f.heartbeat(std::to_string(step) + "\n");
    f.pass(*c);
    CHECK_FALSE(c->quiet_for());
  }
}
