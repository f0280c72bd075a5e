// Defects of the reconcile pass, each reproduced with the fake Slurm: torn heartbeat reads, cancels
// that fail, clock steps and suspended jobs, and engine memory that a cron tick must not lose.
#include <doctest/doctest.h>

#include "engine_fixture.h"
#include "util/strings.h"

using namespace mlsup;
using mlsup::test::EngineFixture;
using mlsup::test::slurp;
using slurm::ErrorKind;
using slurm::JobState;

namespace {

// Submits attempt 1 and lets it run with a heartbeat at step 5.
slurm::JobId running(EngineFixture& f, engine::Campaign& c, const std::string& nodes = "n1") {
  f.pass(c);
  const auto id = f.last_job();
  f.fake.set_state(id, JobState::Running, 0, nodes);
  f.heartbeat("5\n");
  f.pass(c);
  return id;
}

}  // namespace

TEST_CASE("an empty read of a heartbeat that had content is no observation: the job lives") {
  EngineFixture f;  // startup_timeout 60s, steady_timeout 10s
  auto c = f.open();
  running(f, *c);
  for (int step = 6; step <= 18; ++step) {  // a step every 5 s: 65 s, past the start-up timeout
    f.clock += 5;
    f.heartbeat(std::to_string(step) + "\n");
    f.pass(*c);
  }
  // The writer truncates, then is slow to write (a shared file system): three polls see it empty.
  f.clock += 1;
  f.heartbeat("");
  f.pass(*c);
  f.clock += 2;
  f.pass(*c);
  f.clock += 2;
  f.pass(*c);
  f.heartbeat("19\n");
  f.clock += 1;
  f.pass(*c);
  CHECK(f.calls("cancel") == 0);
  CHECK(f.calls("kill_steps") == 0);
  CHECK(f.told("heartbeat-empty-read"));
  // The empty reads were no progress either: 10 s of silence after the last real content is a hang.
  f.clock += 11;
  f.pass(*c);
  CHECK(f.calls("cancel") == 1);
}

TEST_CASE("an empty file from the start is still no heartbeat once the start-up timeout passes") {
  EngineFixture f;
  auto c = f.open();
  f.pass(*c);
  f.fake.set_state(f.last_job(), JobState::Running, 0, "n1");
  f.heartbeat("");
  f.pass(*c);
  f.clock += 61;
  f.pass(*c);
  CHECK(f.calls("cancel") == 1);
}

TEST_CASE("a cancel that fails is sent again while the job lives, spaced out, with an alert after a few") {
  EngineFixture f("", "notify: {command: \"echo $MLSUP_EVENT >> notified\"}\n");
  auto c = f.open();
  const auto id = running(f, *c);
  for (int i = 0; i < 4; ++i) f.fake.failing["cancel"].push_back({ErrorKind::Timeout, 0, "Socket timed out"});
  f.clock += 11;
  f.pass(*c);  // hang: fenced, cancel fails
  CHECK(f.calls("cancel") == 1);
  f.pass(*c);  // too soon to try again
  CHECK(f.calls("cancel") == 1);
  for (int i = 0; i < 40 && f.fake.table[id].state == JobState::Running; ++i) {
    f.clock += 1;
    f.pass(*c);
  }
  CHECK(f.calls("cancel") == 5);
  CHECK(f.fake.table[id].state == JobState::Cancelled);
  CHECK(slurp(f.config.base_dir + "/notified").find("cancel-failed") != std::string::npos);
  f.pass(*c);
  f.clock += 6;
  f.pass(*c);
  CHECK(f.submits() == 2);
  CHECK(slurp(f.config.state_dir + "/journal.jsonl").find("\"class\":\"hang\"") != std::string::npos);
}

TEST_CASE("a cancel intended by a supervisor that died before sending it is sent by the next one") {
  EngineFixture f;
  const slurm::JobId id = [&] {
    auto c = f.open();
    const auto job = running(f, *c);
    f.fake.failing["cancel"].push_back({ErrorKind::Unreachable, 0, "Unable to contact slurm controller"});
    f.clock += 11;
    f.pass(*c);
    return job;
  }();
  REQUIRE(f.fake.table[id].state == JobState::Running);
  auto c = f.open();
  f.clock += 30;
  f.pass(*c);
  CHECK(f.fake.table[id].state == JobState::Cancelled);
}

TEST_CASE("a forward step of the wall clock is not a hang") {
  EngineFixture f;
  auto c = f.open();
  running(f, *c);
  f.wall_step(3600);
  f.pass(*c);
  f.clock += 1;
  f.pass(*c);
  CHECK(f.calls("cancel") == 0);
}

TEST_CASE("a backward step of the wall clock does not hide a hang") {
  EngineFixture f;
  auto c = f.open();
  running(f, *c);
  f.wall_step(-3600);
  f.pass(*c);
  f.clock += 11;
  f.pass(*c);
  CHECK(f.calls("cancel") == 1);
}

TEST_CASE("a job resumed after scontrol suspend is not killed at the first poll; its silence counts from the resume") {
  EngineFixture f;
  auto c = f.open();
  const auto id = running(f, *c);
  f.clock += 4;
  f.pass(*c);
  f.fake.set_state(id, JobState::Suspended);
  for (int i = 0; i < 6; ++i) {
    f.clock += 600;
    f.pass(*c);
  }
  f.fake.set_state(id, JobState::Running);
  f.pass(*c);
  f.clock += 5;
  f.pass(*c);
  CHECK(f.calls("cancel") == 0);
  f.clock += 2;  // 4 + 5 + 2 = 11 s of silence while running
  f.pass(*c);
  CHECK(f.calls("cancel") == 1);
}

TEST_CASE("a backoff runs on the monotonic clock: a wall clock step neither skips nor stretches it") {
  EngineFixture f;  // backoff 5s
  auto c = f.open();
  f.pass(*c);
  f.fake.set_state(f.last_job(), JobState::Failed, 1);
  f.pass(*c);
  f.wall_step(3600);
  f.pass(*c);
  CHECK(f.submits() == 1);
  f.clock += 6;
  f.pass(*c);
  CHECK(f.submits() == 2);
}

TEST_CASE("under cron ticks (a new process each pass) a job waiting on mlsup's exclusions still gets them relaxed") {
  EngineFixture f("", "slurm: {nodes: 2}\n");
  f.silent = {"n2"};
  f.fake.node_table = {{"n1", "MIXED"}, {"n2", "MIXED"}, {"n3", "IDLE"}, {"n4", "IDLE"}};
  const auto tick = [&] {
    auto c = f.open();
    f.pass(*c);
  };
  tick();
  f.fake.set_state(f.last_job(), JobState::Running, 0, "n[1-2]");
  f.heartbeat("7\n");
  tick();
  f.clock += 11;
  tick();  // hung: n2 does not answer its probe and is excluded
  tick();
  f.clock += 6;
  tick();
  REQUIRE(f.submits() == 2);
  const auto id = f.last_job();
  f.fake.table[id].excluded_nodes = "n2";
  f.fake.table[id].reason = "ReqNodeNotAvail";
  for (int i = 0; i < 8; ++i) {
    f.clock += 10;
    tick();
  }
  CHECK(f.fake.table[id].excluded_nodes == "");
  CHECK(slurp(f.config.state_dir + "/journal.jsonl").find("\"type\":\"relaxed\"") != std::string::npos);
}

TEST_CASE("an sbatch retry waits on the monotonic clock: a backward wall step does not stretch the delay") {
  EngineFixture f;  // backoff 5s
  f.fake.always_failing["submit"] = {ErrorKind::Busy, 0, "Resource temporarily unavailable"};
  auto c = f.open();
  f.pass(*c);
  REQUIRE(f.calls("submit") == 1);
  f.clock += 2;
  f.pass(*c);
  CHECK(f.calls("submit") == 1);  // the delay is not over
  f.wall_step(-3600);
  f.clock += 4;
  f.pass(*c);
  CHECK(f.calls("submit") == 2);
}

namespace {

// Every file under dir with its last write time.
std::map<std::string, std::filesystem::file_time_type> written(const std::string& dir) {
  std::map<std::string, std::filesystem::file_time_type> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
    if (e.is_regular_file()) out[e.path().string()] = e.last_write_time();
  return out;
}

}  // namespace

TEST_CASE("an idle pass writes nothing: a job pending, or running with its heartbeat as it was") {
  EngineFixture f;
  auto c = f.open();
  f.pass(*c);
  const auto id = f.last_job();
  f.fake.set_state(id, JobState::Pending);
  f.fake.table[id].reason = "Priority";
  f.clock += 1;
  f.pass(*c);
  auto before = written(f.config.state_dir);
  for (int i = 0; i < 5; ++i) {
    f.clock += 1;
    f.pass(*c);
  }
  CHECK(written(f.config.state_dir) == before);
  f.fake.set_state(id, JobState::Running, 0, "n1");
  f.heartbeat("5\n");
  f.clock += 1;
  f.pass(*c);
  f.clock += 1;
  f.pass(*c);
  before = written(f.config.state_dir);
  for (int i = 0; i < 5; ++i) {  // 5 s of a heartbeat that says the same (the steady timeout is 10 s)
    f.clock += 1;
    f.pass(*c);
  }
  CHECK(written(f.config.state_dir) == before);
  CHECK(f.calls("cancel") == 0);
}

TEST_CASE("memory.json: a decision's change is written at once; observations alone after memory_save_interval, and when let go") {
  EngineFixture f;  // memory_save_interval: 30 s (the default)
  auto c = f.open();
  f.pass(*c);
  const auto id = f.last_job();
  f.fake.set_state(id, JobState::Pending);
  f.fake.table[id].reason = "Priority";
  for (int i = 0; i < 3; ++i) {
    f.clock += 1;
    f.pass(*c);
  }
  const std::string path = f.config.state_dir + "/memory.json";
  const auto memory = [&] { return nlohmann::json::parse(slurp(path)); };
  CHECK(memory()["slurm_error"] == "");
  f.fake.next_errors.push_back({ErrorKind::Unreachable, 0, "Unable to contact slurm controller"});
  f.clock += 1;
  f.pass(*c);
  CHECK(memory()["slurm_error"].get<std::string>().find("Unable to contact") != std::string::npos);
  f.clock += 1;
  f.pass(*c);
  CHECK(memory()["slurm_error"] == "");
  f.fake.set_state(id, JobState::Running, 0, "n1");
  f.heartbeat("5\n");
  f.clock += 1;
  f.pass(*c);  // the job seen running (its nodes kept): at once, with the heartbeat as seen
  CHECK(memory()["heartbeat"]["files"][""]["content"] == "5\n");
  int step = 5;
  const auto beat = [&] {
    f.heartbeat(std::to_string(++step) + "\n");
    f.clock += 1;
    f.pass(*c);
  };
  while (step < 30) beat();  // the first rate and the calibration's 20 steps: written as they come
  const auto saved_at = [&] { return memory()["clock"]["mono"].get<double>(); };  // each save's own time
  auto written = saved_at();
  for (int i = 0; i < 40 && saved_at() == written; ++i) beat();
  REQUIRE(saved_at() != written);  // a step a second: saved within 30 s
  CHECK(memory()["heartbeat"]["files"][""]["content"] == std::to_string(step) + "\n");
  written = saved_at();
  const int saved = step;
  for (int i = 0; i < 29; ++i) beat();  // nothing decided: 29 s without a write
  CHECK(saved_at() == written);
  CHECK(memory()["heartbeat"]["files"][""]["content"] == std::to_string(saved) + "\n");
  beat();  // 30 s since the write
  CHECK(memory()["heartbeat"]["files"][""]["content"] == std::to_string(step) + "\n");
  beat();
  CHECK(memory()["heartbeat"]["files"][""]["content"] == std::to_string(step - 1) + "\n");
  c.reset();  // let go (a tick's end, a supervisor's stop): what it saw is saved
  CHECK(memory()["heartbeat"]["files"][""]["content"] == std::to_string(step) + "\n");
}

TEST_CASE("memory.json: with memory_save_interval 0s every observation is written at the pass that made it") {
  EngineFixture f("", "memory_save_interval: 0s\n");
  auto c = f.open();
  const auto id = running(f, *c);
  (void)id;
  const std::string path = f.config.state_dir + "/memory.json";
  for (const char* beat : {"6\n", "7\n"}) {
    f.heartbeat(beat);
    f.clock += 1;
    f.pass(*c);
    CHECK(nlohmann::json::parse(slurp(path))["heartbeat"]["files"][""]["content"] == beat);
  }
}

TEST_CASE("memory.json: a campaign let go without a change since its last save writes nothing") {
  EngineFixture f;
  auto c = f.open();
  running(f, *c);
  const std::string path = f.config.state_dir + "/memory.json";
  c.reset();
  const std::string text = slurp(path);
  f.clock += 1;  // a tick that sees the same heartbeat and the job running as before but for its time
  f.pass(*f.open());
  CHECK(slurp(path) != text);  // when the job was last seen running moved: saved by the tick
  const std::string after = slurp(path);
  f.clock += 1;
  {
    auto again = f.open();  // opened and let go without a pass: nothing to save (the save times would show one)
  }
  CHECK(slurp(path) == after);
}

TEST_CASE("status.json: a change of what it says of the job is written at once, with the step; a new step alone when let go") {
  EngineFixture f;
  auto c = f.open();
  f.pass(*c);
  const auto id = f.last_job();
  f.fake.set_state(id, JobState::Pending);
  f.fake.table[id].reason = "Priority";
  f.clock += 1;
  f.pass(*c);
  const std::string path = f.config.state_dir + "/status.json";
  const auto status = [&] { return nlohmann::json::parse(slurp(path)); };
  CHECK(status()["job_state"] == "PENDING");
  CHECK(status()["reason"] == "Priority");
  const auto first = status()["updated"];
  const auto stamp = std::filesystem::last_write_time(path);
  for (int i = 0; i < 3; ++i) {
    f.clock += 1;
    f.pass(*c);
  }
  CHECK(std::filesystem::last_write_time(path) == stamp);
  CHECK(status()["updated"] == first);
  f.fake.table[id].reason = "Resources";
  f.clock += 1;
  f.pass(*c);
  CHECK(status()["reason"] == "Resources");
  f.fake.set_state(id, JobState::Running, 0, "n1");
  f.heartbeat("5\n");
  f.clock += 1;
  f.pass(*c);
  CHECK(status()["job_state"] == "RUNNING");
  CHECK(status()["nodes"] == "n1");
  CHECK(status()["step"] == 5);
  for (int step = 6; step < 35; ++step) {
    f.heartbeat(std::to_string(step) + "\n");
    f.clock += 1;
    f.pass(*c);
  }
  CHECK(status()["step"] == 5);  // steps alone: not written
  f.heartbeat("35\n");
  f.clock += 1;
  f.pass(*c);
  f.heartbeat("36\n");
  f.clock += 1;
  f.pass(*c);
  CHECK(status()["step"] == 5);
  f.fake.set_state(id, JobState::Suspended, 0, "n1");
  f.clock += 1;
  f.pass(*c);
  CHECK(status()["job_state"] == "SUSPENDED");  // a change of state: at once, with the newest step
  CHECK(status()["step"] == 36);
  f.fake.set_state(id, JobState::Running, 0, "n1");
  f.clock += 1;
  f.pass(*c);
  f.heartbeat("37\n");
  f.clock += 1;
  f.pass(*c);
  c.reset();  // let go: the step it saw is written
  CHECK(status()["step"] == 37);
  CHECK(status()["campaign"] == "t");
  CHECK(status()["version"] == 1);
}

TEST_CASE("signal_lead auto: the attempt after a save was measured is submitted with the lead sized from it, journaled") {
  mlsup::test::EngineFixture f("", "slurm: {signal_lead: auto}\n");
  auto c = f.open();
  f.pass(*c);
  CHECK(f.fake.submitted.at(0).options.end() !=
        std::find(f.fake.submitted[0].options.begin(), f.fake.submitted[0].options.end(), "--signal=B:USR1@300"));
  f.fake.set_state(f.last_job(), slurm::JobState::Running, 0, "n1");
  for (const char* beat : {"1\n", "2\n", "3\n", "3 saving\n", "3 saving\n", "4\n", "5\n"}) {
    f.heartbeat(beat, 1);
    f.pass(*c);
    f.clock += 10;  // a save seen for 20 s; steps 10 s apart
  }
  f.fake.set_state(f.last_job(), slurm::JobState::Failed, 1, "n1");
  f.pass(*c);
  f.clock += 30;
  f.pass(*c);
  REQUIRE(f.submits() == 2);
  const auto& opts = f.fake.submitted.at(1).options;
  // needed: a 20 s save and a 10 s step; 1.5 x 30 + 60
  CHECK(std::find(opts.begin(), opts.end(), "--signal=B:USR1@105") != opts.end());
}

TEST_CASE("signal_lead auto: a save at the pre-timeout signal, the training gone before a pass saw it over, is measured "
          "at the job's end and sizes the next attempt's lead") {
  mlsup::test::EngineFixture f("", "slurm: {signal_lead: auto, time: \"01:00:00\"}\n");
  auto c = f.open();
  f.pass(*c);
  f.fake.set_state(f.last_job(), slurm::JobState::Running, 0, "n1");
  for (const char* beat : {"1\n", "2\n", "3\n", "3 saving\n", "3 saving\n"}) {  // no periodic save: the signal's
    f.heartbeat(beat, 1);
    f.pass(*c);
    f.clock += 10;
  }
  f.heartbeat("4\n", 1);  // the save is over, the training exits: the job has ended by the next pass
  f.fake.set_state(f.last_job(), slurm::JobState::Timeout, 0, "n1");
  f.pass(*c);
  f.clock += 30;
  f.pass(*c);
  REQUIRE(f.submits() == 2);
  const auto& opts = f.fake.submitted.at(1).options;
  // a 20 s save (first seen saving, to the pass that read the job's end) and a 10 s step: 1.5 x 30 + 60
  CAPTURE(util::join(opts, " "));
  CHECK(std::find(opts.begin(), opts.end(), "--signal=B:USR1@105") != opts.end());
}

TEST_CASE("status.json: a tick that sees the job as the last one wrote it writes nothing") {
  EngineFixture f;
  f.pass(*f.open());
  const auto id = f.last_job();
  f.fake.set_state(id, JobState::Pending);
  f.fake.table[id].reason = "BeginTime";
  f.clock += 60;
  f.pass(*f.open());  // each tick a process of its own
  const std::string path = f.config.state_dir + "/status.json";
  const auto updated = [&] { return nlohmann::json::parse(slurp(path))["updated"]; };
  CHECK(updated() == 1060);
  f.clock += 60;
  f.pass(*f.open());
  CHECK(updated() == 1060);  // the same state, nodes and reason: not written again
  f.fake.table[id].reason = "Priority";
  f.clock += 60;
  f.pass(*f.open());
  CHECK(updated() == 1180);
  CHECK(nlohmann::json::parse(slurp(path))["reason"] == "Priority");
}
