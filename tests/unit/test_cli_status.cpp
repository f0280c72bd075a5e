// `mlsup status`: the whole campaign from its journal, the history of its attempts and the ledger of
// its exclusions, as JSON for scripts and one line per entry for people.
#include <doctest/doctest.h>

#include <ctime>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/campaign_verbs.h"
#include "cli/exit_codes.h"
#include "campaign/campaign.h"
#include "capture.h"
#include "engine_fixture.h"

using namespace mlsup;
using mlsup::test::capture;
using mlsup::test::EngineFixture;
using nlohmann::json;
using slurm::JobState;

namespace {

// `mlsup status CONFIG --json` of the fixture's campaign, parsed.
json status_json(const EngineFixture& f) {
  const auto printed = capture([&] { return cli::status_verb(f.config.source_file, true); });
  REQUIRE(printed.code == cli::kOk);
  return json::parse(printed.out);
}

// `mlsup status CONFIG` as people read it.
std::string status_text(const EngineFixture& f) {
  const auto printed = capture([&] { return cli::status_verb(f.config.source_file, false); });
  REQUIRE(printed.code == cli::kOk);
  return printed.out;
}

// A 2-node campaign on a 4-node cluster whose clock stands an hour before the real one, so that
// status (on the real clock) sees a relaxed exclusion as over and a fresh one as live.
struct StatusFixture : EngineFixture {
  StatusFixture() : EngineFixture("", "slurm: {nodes: 2}\n") {
    clock = static_cast<double>(std::time(nullptr)) - 3600;
    fake.node_table = {{"n1", "MIXED"}, {"n2", "MIXED"}, {"n3", "IDLE"}, {"n4", "IDLE"}};
  }

  // The current job runs on n1 and n2 until its heartbeat goes stale; n2 does not answer the probe.
  void hang(engine::Campaign& c, int attempt, const std::string& step) {
    fake.set_state(last_job(), JobState::Running, 0, "n[1-2]");
    heartbeat(step + "\n", attempt);
    silent = {"n2"};
    pass(c);
    clock += 11;
    pass(c);  // hung: probe, blame, cancel
    pass(c);  // ended
    clock += 6;
    pass(c);  // the next attempt submitted
  }
};

// Chain mode: task `task` of the array runs as job id on n1 and n2 and has claimed attempt `task`
// (as its preamble does); the array's remainder waits in the queue.
void claim_task(EngineFixture& f, slurm::JobId array, slurm::JobId id, int task) {
  auto& rest = f.fake.table[array];
  rest.array_job_id = array;
  rest.array_task_pending = std::to_string(task + 1) + "-4%1";
  rest.state = JobState::Pending;
  auto& j = f.fake.table[id];
  j.job_id = id;
  j.array_job_id = array;
  j.array_task_id = static_cast<std::uint32_t>(task);
  j.state = JobState::Running;
  j.nodes = "n[1-2]";
  f.dir.write(".mlsup/t/chain/claims/" + std::to_string(task) + "/task",
              std::to_string(id) + " " + std::to_string(task) + " prepared \n");
}

}  // namespace

TEST_CASE("status --json: the history of every attempt and the exclusion ledger, from the journal") {
  StatusFixture f;
  auto c = f.open();
  f.fake.failing["submit"].push_back({slurm::ErrorKind::Busy, 0, "sbatch: error: Resource temporarily unavailable"});
  f.pass(*c);  // sbatch fails once
  f.clock += 6;
  f.pass(*c);  // attempt 1 submitted
  const auto job1 = f.last_job();
  f.dir.write(".mlsup/t/checkpoints/step-50/model.bin", "weights");
  f.hang(*c, 1, "60");
  const auto job2 = f.last_job();
  f.fake.table[job2].excluded_nodes = "n2";
  f.fake.table[job2].reason = "ReqNodeNotAvail";
  f.pass(*c);
  f.clock += 61;
  f.pass(*c);  // the exclusion left the job too few nodes: dropped in place
  f.hang(*c, 2, "70");
  const auto job3 = f.last_job();

  const auto s = status_json(f);
  CHECK(s["attempts"] == 3);  // the keys of the current attempt stay as they were
  CHECK(s["attempt"] == 3);
  CHECK(s["job_id"] == job3);
  CHECK(s["state"] == "running");
  const auto& h = s["history"];
  REQUIRE(h.size() == 3);
  CHECK(h[0]["number"] == 1);
  CHECK(h[0]["tag"].get<std::string>().ends_with(":1"));
  CHECK(h[0]["job_id"] == job1);
  CHECK(h[0]["task_job_id"].is_null());
  CHECK(h[0]["chain"] == false);
  CHECK(h[0]["resume_from"] == "");
  CHECK(h[0]["resume_step"] == 0);
  CHECK(h[0]["submit_failures"] == 1);
  CHECK(h[0]["submissions"] == 1);
  CHECK(h[0]["cancel_class"] == "hang");
  CHECK(h[0]["ended"] == true);
  CHECK(h[0]["class"] == "hang");
  CHECK(h[0]["end_step"] == 60);
  CHECK(h[1]["job_id"] == job2);
  CHECK(h[1]["resume_from"] == f.config.checkpoint.dir + "/step-50");
  CHECK(h[1]["resume_step"] == 50);
  CHECK(h[1]["exclude"] == json::array());  // n2, relaxed while it was pending
  CHECK(h[1]["relaxed"] == 1);
  CHECK(h[1]["submit_failures"] == 0);
  CHECK(h[1]["class"] == "hang");
  CHECK(h[2]["exclude"] == json::array({"n2"}));
  CHECK(h[2]["ended"] == false);
  CHECK(h[2]["class"].is_null());
  CHECK(h[2]["end_step"].is_null());
  CHECK(h[2]["cancel_class"].is_null());

  const auto& x = s["exclusions"];
  REQUIRE(x.size() == 2);
  CHECK(x[0]["node"] == "n2");
  CHECK(x[0]["attempt"] == 1);
  CHECK(x[0]["reason"].get<std::string>().find("did not respond") != std::string::npos);
  CHECK(x[0]["live"] == false);  // relaxed: over
  CHECK(x[0]["until"].get<double>() < x[1]["since"].get<double>());
  CHECK(x[1]["attempt"] == 2);
  CHECK(x[1]["live"] == true);
  CHECK(x[1]["until"].get<double>() > static_cast<double>(std::time(nullptr)));

  const auto text = status_text(f);
  CHECK(text.starts_with("campaign: t (id "));
  CHECK(text.find("\nattempt: 3, job " + std::to_string(job3)) != std::string::npos);
  CHECK(text.find("\nhistory:\n  #1 job " + std::to_string(job1) + ", fresh start, sbatch failed 1x, cancelled by mlsup "
                  "(hang): ended hang at step 60\n  #2 job " + std::to_string(job2) + ", from step 50, 1 exclusion(s) "
                  "relaxed, with debug_on_retry.env, cancelled by mlsup (hang): ended hang at step 70\n  #3 job " +
                  std::to_string(job3) + ", from step 50, excluding n2, with debug_on_retry.env: not ended\n") != std::string::npos);
  CHECK(text.find("\nexclusions:\n  n2 after attempt 1, until ") != std::string::npos);
  CHECK(text.find(" (live): did not respond") != std::string::npos);
}

TEST_CASE("status --json in chain mode: one array for every attempt, each attempt with the task that claimed it") {
  EngineFixture f("", "slurm: {array: \"1-4%1\", nodes: 2}\n");
  f.fake.node_table = {{"n1", "MIXED"}, {"n2", "MIXED"}, {"n3", "IDLE"}, {"n4", "IDLE"}};
  auto c = f.open();
  f.pass(*c);
  const auto array = f.last_job();
  claim_task(f, array, 200, 1);
  f.pass(*c);  // attempt 1 claimed by task 1
  f.fake.set_state(200, JobState::Failed, 1);
  f.pass(*c);  // ended; attempt 2 handed to the queued task
  auto before = status_json(f)["history"];
  REQUIRE(before.size() == 2);
  CHECK(before[1]["task_job_id"].is_null());  // not claimed yet
  claim_task(f, array, 201, 2);
  f.pass(*c);

  const auto h = status_json(f)["history"];
  REQUIRE(h.size() == 2);
  for (const auto& a : h) {
    CHECK(a["chain"] == true);
    CHECK(a["job_id"] == array);
  }
  CHECK(h[0]["task_job_id"] == 200);
  CHECK(h[0]["submissions"] == 1);
  CHECK(h[0]["class"] == "failed");
  CHECK(h[1]["task_job_id"] == 201);
  CHECK(h[1]["submissions"] == 0);  // no sbatch: the array's next task runs it
  CHECK(status_text(f).find("  #2 array " + std::to_string(array) + " task 201, fresh start, with debug_on_retry.env: not ended\n") != std::string::npos);
}

TEST_CASE("status and events of several campaigns: a line each, every view complete in --json, a broken config said") {
  EngineFixture a, b;
  auto ca = a.open();
  a.pass(*ca);
  auto cb = b.open();
  b.pass(*cb);
  b.fake.set_state(b.last_job(), JobState::Completed);
  b.pass(*cb);
  mlsup::test::TempDir broken;
  const std::string bad = broken.write("bad.yaml", "name: x\npoll_intervall: 1s\n");
  const std::vector<std::string> sources = {a.config.source_file, b.config.source_file, bad};
  const auto text = capture([&] { return cli::status_verb(sources, false); });
  CHECK(text.code == cli::kBadInput);
  CHECK(text.out.find("t  running  attempt 1  job ") != std::string::npos);
  CHECK(text.out.find("t  completed  attempt 1  job ") != std::string::npos);
  CHECK(text.out.find(bad + "  the config has errors") != std::string::npos);
  const auto as_json = capture([&] { return cli::status_verb(sources, true); });
  const json all = json::parse(as_json.out);
  REQUIRE(all.size() == 3);
  CHECK(all[0]["config"] == a.config.source_file);
  CHECK(all[1]["state"] == "completed");
  CHECK(all[1]["history"].size() == 1);  // the full view of each
  CHECK(all[2]["config"] == bad);
  const auto events = capture([&] { return cli::events_verb(std::vector<std::string>{a.config.source_file, b.config.source_file}, false); });
  CHECK(events.code == cli::kOk);
  CHECK(events.out.find("[t] ") == 0);
  CHECK(events.out.find("attempt-ended") != std::string::npos);
}

TEST_CASE("stop and save of several campaigns: each campaign's switch, a line each; a broken config said, the others set") {
  EngineFixture a, b;
  mlsup::test::TempDir broken;
  const std::string bad = broken.write("bad.yaml", "name: x\npoll_intervall: 1s\n");
  const auto stop = capture([&] { return cli::switch_verb(std::vector<std::string>{a.config.source_file, bad, b.config.source_file}, true); });
  CHECK(stop.code == cli::kBadInput);
  CHECK(stop.out.find(bad + "  the config has errors") != std::string::npos);
  for (const auto* f : {&a, &b}) {
    CHECK(std::filesystem::exists(f->config.switches.kill));
    CHECK(!std::filesystem::exists(f->config.switches.save));
    CHECK(stop.out.find("t  kill switch set: " + f->config.switches.kill + "\n") != std::string::npos);
  }
  const auto save = capture([&] { return cli::switch_verb(std::vector<std::string>{a.config.source_file, b.config.source_file}, false); });
  CHECK(save.code == cli::kOk);
  for (const auto* f : {&a, &b}) {
    CHECK(std::filesystem::exists(f->config.switches.save));
    CHECK(save.out.find("t  save switch set: " + f->config.switches.save + "\n") != std::string::npos);
    const auto events = capture([&] { return cli::events_verb(f->config.source_file, true); });
    CHECK(events.out.find("\"stop-requested\"") != std::string::npos);
    CHECK(events.out.find("\"save-requested\"") != std::string::npos);
  }
}
