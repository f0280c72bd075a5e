// `mlsup status`'s figures against what was done to a campaign through the engine and the fake Slurm:
// the steps the heartbeats said, the endings injected, the exclusion they caused, the checkpoints
// written, each at a known time; and the campaign id every attempt's job gets.
#include <doctest/doctest.h>

#include <utime.h>

#include <algorithm>
#include <ctime>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/campaign_verbs.h"
#include "cli/status_now.h"
#include "cli/status_text.h"
#include "campaign/campaign.h"
#include "views/status_view.h"
#include "capture.h"
#include "engine_fixture.h"
#include "store/read_campaign.h"

using namespace mlsup;
using mlsup::test::EngineFixture;
using nlohmann::json;
using slurm::JobState;

namespace {

// A 2-node campaign with a target of 100 steps on a 4-node cluster.
struct Figures : EngineFixture {
  // status reads what the running supervisor saved: every observation at once here
  Figures() : EngineFixture("", "slurm: {nodes: 2}\ntarget: {steps: 100}\nmemory_save_interval: 0s\n") {
    fake.node_table = {{"n1", "MIXED"}, {"n2", "MIXED"}, {"n3", "IDLE"}, {"n4", "IDLE"}};
  }

  // The newest job runs on nodes; each step is written to the attempt's heartbeat and seen by a pass, 10 s apart.
  void run_steps(engine::Campaign& c, int attempt, const std::string& nodes, std::initializer_list<int> steps) {
    fake.set_state(last_job(), JobState::Running, 0, nodes);
    bool first = true;
    for (const int step : steps) {
      if (!first) clock += 10;
      first = false;
      heartbeat(std::to_string(step) + "\n", attempt);
      pass(c);
    }
  }

  // A complete checkpoint of step, last written at wall time at.
  void checkpoint(int step, double at) {
    const std::string path = ".mlsup/t/checkpoints/step-" + std::to_string(step);
    dir.write(path + "/model.bin", "weights");
    const utimbuf times{static_cast<std::time_t>(at), static_cast<std::time_t>(at)};
    REQUIRE(::utime((dir.path() + "/" + path).c_str(), &times) == 0);
  }

  json status() const {
    const engine::Clocks now{clock, mono(), clock_id};
    return cli::status_json(config, store::read_campaign(config, now, true), now);
  }
};

// The environment the fake Slurm was given with submission i.
std::map<std::string, std::string> environment(const EngineFixture& f, std::size_t i) {
  const auto& env = f.fake.submitted.at(i).environment;
  return {env.begin(), env.end()};
}

}  // namespace

TEST_CASE("status: the time a job spent suspended is not in its step rate") {
  Figures f;
  auto c = f.open();
  f.pass(*c);
  f.run_steps(*c, 1, "n[1-2]", {10, 20, 30});  // 1 step/s for 20 s
  f.fake.set_state(f.last_job(), JobState::Suspended, 0, "n[1-2]");
  f.clock += 5;
  f.pass(*c);
  f.clock += 3600;  // an hour suspended (scontrol suspend)
  f.pass(*c);
  f.fake.set_state(f.last_job(), JobState::Running, 0, "n[1-2]");
  f.pass(*c);
  f.clock += 10;
  f.heartbeat("40\n", 1);
  f.pass(*c);
  const json s = f.status();
  CHECK(s["step"] == 40);
  // 30 steps in the 30 s it ran (suspended from the last pass that saw it running, as the heartbeat's silence is)
  CHECK(s["step_rate"].get<double>() == doctest::Approx(1.0));
}

TEST_CASE("status: step, rate, ETA, checkpoint and heartbeat ages, restarts by class, exclusions, time lost and goodput") {
  Figures f;
  auto c = f.open();
  f.pass(*c);                                   // t=1000: attempt 1 submitted
  f.run_steps(*c, 1, "n[1-2]", {10, 30, 50});   // t=1000..1020
  f.checkpoint(40, 1015);
  f.silent = {"n2"};
  f.clock = 1031;
  f.pass(*c);  // no heartbeat for 11 s: hung; n2 does not answer the probe
  f.pass(*c);  // ended (hang, step 50); n2 excluded, so attempt 2 (from step 40) is submitted at once
  f.silent.clear();
  f.clock = 1037;
  f.pass(*c);
  f.run_steps(*c, 2, "n[3-4]", {45, 55});       // t=1037, 1047 (nodes apart from attempt 1's: no node is blamed twice)
  f.checkpoint(50, 1045);
  f.clock = 1050;
  f.fake.set_state(f.last_job(), JobState::Failed, 1, "n[3-4]");
  f.pass(*c);  // ended (failed, step 55, after a newer checkpoint): attempt 3 (from step 50) submitted at once
  f.clock = 1056;
  f.pass(*c);
  f.run_steps(*c, 3, "n[3-4]", {60, 70, 80});   // t=1056..1076
  f.clock = 1081;

  const json s = f.status();
  CHECK(s["state"] == "running");
  CHECK(s["attempt"] == 3);
  CHECK(s["job_id"] == f.last_job());
  CHECK(s["job_state"] == "RUNNING");
  CHECK(s["nodes"] == "n[3-4]");
  CHECK(s["step"] == 80);
  CHECK(s["step_source"] == "heartbeat");
  CHECK(s["step_rate"].get<double>() == doctest::Approx(1.0));  // 20 steps in the 20 s seen
  CHECK(s["step_rate_window"].get<double>() == doctest::Approx(20));
  CHECK(s["target_steps"] == 100);
  CHECK(s["eta"].get<double>() == doctest::Approx(20));
  CHECK(s["eta_at"].get<double>() == doctest::Approx(1101));
  CHECK(s["heartbeat_age"].get<double>() == doctest::Approx(5));
  CHECK(s["checkpoint"]["path"] == f.config.checkpoint.dir + "/step-50");
  CHECK(s["checkpoint"]["step"] == 50);
  CHECK(s["checkpoint"]["age"].get<double>() == doctest::Approx(36));
  CHECK(s["restarts"] == 2);
  CHECK(s["restarts_by_class"] == json({{"hang", 1}, {"failed", 1}}));
  REQUIRE(s["exclusions"].size() == 1);
  CHECK(s["exclusions"][0]["node"] == "n2");
  CHECK(s["exclusions"][0]["attempt"] == 1);
  CHECK(s["exclusions"][0]["live"] == true);
  CHECK(s["exclusions"][0]["until"].get<double>() ==
        doctest::Approx(1031 + static_cast<double>(f.config.policy.exclusion_ttl.count())));
  CHECK(s["exclusions"][0]["reason"].get<std::string>().find("did not respond") != std::string::npos);

  // Time as a stopwatch would count it. Attempt 1 stepped from 1000 (step 10) to 1020 (step 50): 40 of its 50
  // steps kept (the next resumed at 40), 20 s x 40/50 useful; lost: 20 s x 10/50 recomputed, and the silence
  // from its last step (1020) until the training stepped again: attempt 2's first step, 1037 (the steps before
  // the first one seen are dated back at the pace measured, but not to before the pass that first saw the
  // job running, here the same pass): 4 + 17 s. Attempt 2 stepped from 1037 (45) to 1047 (55), 10 of 15 kept:
  // 10 s x 10/15 useful; lost: 10 s x 5/15, and 1047 until attempt 3's first step at 1056. Attempt 3 steps
  // from 1056 to 1076, all kept. 81 s in all: 42.7 useful, 33.3 lost, and the 5 s since attempt 3's last step.
  const auto& t = s["time"];
  CHECK(t["began"] == 1000.0);
  CHECK(t["elapsed"].get<double>() == doctest::Approx(81));
  const double useful = 20 * 40.0 / 50 + 10 * 10.0 / 15 + 20;
  const double lost = (20 * 10.0 / 50 + 17) + (10 * 5.0 / 15 + 9);
  CHECK(t["useful"].get<double>() == doctest::Approx(useful));
  CHECK(t["lost_to_failures"].get<double>() == doctest::Approx(lost));
  CHECK(useful + lost + 5 == doctest::Approx(81));
  CHECK(t["recomputed_steps"] == 15);
  CHECK(t["goodput"].get<double>() == doctest::Approx(useful / 81));

  const auto lines = cli::status_lines(s);
  const auto text = [&] {
    std::string all;
    for (const auto& l : lines) all += l + "\n";
    return all;
  }();
  CHECK(s["job_seen"]["source"] == "supervisor");
  CHECK(s["job_seen"]["age"].get<double>() == doctest::Approx(5));  // status.json changed with step 80, at 1076
  CHECK(text.find("\nattempt: 3, job " + std::to_string(f.last_job()) +
                  " RUNNING on n[3-4] (as its supervisor last wrote it, 5s ago)\n") != std::string::npos);
  CHECK(s["hang_timeout"] == json({{"steady", 10}, {"configured", 10}, {"calibrated", false}, {"steps_seen", 5}}));
  CHECK(text.find("\nstep: 80 of 100 (heartbeat 5s ago); a hang after 10s without a step\n") != std::string::npos);
  CHECK(text.find("\nrate: 1.00 steps/s over the last 20s; ETA 20s (") != std::string::npos);
  CHECK(text.find("\ncheckpoint: " + f.config.checkpoint.dir + "/step-50 (step 50, written 36s ago)\n") != std::string::npos);
  CHECK(text.find("\nrestarts: 2 (failed 1, hang 1)\n") != std::string::npos);
  CHECK(text.find("\ntime: 1m21s since the campaign began; lost to failures 33s (15 steps recomputed); goodput 52.7%\n") !=
        std::string::npos);
}

TEST_CASE("status: a completed campaign stands at its last step, with no rate and no ETA") {
  Figures f;
  auto c = f.open();
  f.pass(*c);
  f.run_steps(*c, 1, "n[1-2]", {50, 100});
  f.clock = 1015;
  f.fake.set_state(f.last_job(), JobState::Completed, 0, "n[1-2]");
  f.pass(*c);
  f.clock = 2000;
  const json s = f.status();
  CHECK(s["state"] == "completed");
  CHECK(s["job_state"] == "COMPLETED");  // the journal's record of its end, not the last pass's RUNNING
  CHECK(s["nodes"] == "n[1-2]");
  CHECK(s["job_seen"]["source"] == "journal");
  CHECK(s["job_seen"]["age"].get<double>() == doctest::Approx(985));
  CHECK(s["step"] == 100);
  CHECK(s["step_source"] == "ended");
  CHECK(s["step_rate"].is_null());
  CHECK(s["eta"] == 0.0);  // the target is reached
  CHECK(s["heartbeat_age"].is_null());
  CHECK(s["restarts"] == 0);
  CHECK(s["restarts_by_class"] == json::object());
  CHECK(s["time"]["elapsed"].get<double>() == doctest::Approx(15));  // up to the campaign's end
  CHECK(s["time"]["goodput"].get<double>() == doctest::Approx(10.0 / 15));  // stepping from 1000 to 1010 of 15 s
  CHECK(s["time"]["lost_to_failures"] == 0.0);
}

TEST_CASE("status before the first pass: every key there, null where nothing is known") {
  Figures f;
  const json s = f.status();
  for (const char* key : {"step", "step_rate", "eta", "checkpoint", "heartbeat_age", "campaign_id", "job_state", "nodes"}) {
    CAPTURE(key);
    REQUIRE(s.contains(key));
    CHECK(s[key].is_null());
  }
  CHECK(s["restarts"] == 0);
  CHECK(s["time"]["elapsed"].is_null());
}

TEST_CASE("every attempt's job gets the journal's campaign id in MLSUP_CAMPAIGN_ID; another campaign of the name another") {
  Figures f;
  auto c = f.open();
  f.pass(*c);
  f.fake.set_state(f.last_job(), JobState::Failed, 1, "n[1-2]");
  f.pass(*c);
  f.clock += 6;
  f.pass(*c);
  REQUIRE(f.submits() == 2);
  const std::string id = f.status()["campaign_id"];
  CHECK(id.size() == 8);
  CHECK(environment(f, 0).at("MLSUP_CAMPAIGN_ID") == id);
  CHECK(environment(f, 1).at("MLSUP_CAMPAIGN_ID") == id);
  CHECK(f.fake.submitted[1].options.end() !=
        std::find(f.fake.submitted[1].options.begin(), f.fake.submitted[1].options.end(), "--comment=mlsup:t:" + id + ":2"));

  Figures other;  // the same name, another state folder
  auto oc = other.open();
  other.pass(*oc);
  REQUIRE(other.submits() == 1);
  CHECK(environment(other, 0).at("MLSUP_CAMPAIGN_ID") != id);
  CHECK(environment(other, 0).at("MLSUP_CAMPAIGN_ID") == other.status()["campaign_id"]);
}

TEST_CASE("memory keeps the heartbeat's steps as they changed, over the last 10 minutes and two at least") {
  engine::Memory m;
  engine::note_step(m, 5, 100);
  engine::note_step(m, 5, 101);  // no change: not noted
  engine::note_step(m, -1, 101);  // no step
  engine::note_step(m, 6, 102);
  CHECK(m.steps == std::vector<engine::StepSeen>{{100, 5}, {102, 6}});
  engine::note_step(m, 7, 800);  // the two before are older than the window: the newer of them stays
  CHECK(m.steps == std::vector<engine::StepSeen>{{102, 6}, {800, 7}});
  engine::note_step(m, 8, 801);
  CHECK(m.steps == std::vector<engine::StepSeen>{{800, 7}, {801, 8}});
  CHECK(engine::memory_from_json(engine::to_json(m)).steps == m.steps);
  engine::focus(m, m.attempt + 1);
  CHECK(m.steps.empty());
}

TEST_CASE("status: the steady timeout in force, calibrated once 20 steps were seen, with what it was learned from") {
  Figures f;
  f.config.heartbeat.calibrate = true;
  f.config.heartbeat.calibrate_factor = 3;
  f.config.heartbeat.steady_timeout = config::Seconds(60);
  f.config.heartbeat.calibrate_min = config::Seconds(5);
  f.config.poll_interval = config::Millis(500);
  const engine::CampaignState state;
  engine::Memory memory;
  const auto figures = [&] { return engine::status_figures({f.config, state, memory, std::nullopt, {1000, 1000, ""}}); };

  memory.calibration = {2.5, 19};  // one step short: the configured timeout holds
  CHECK(figures()["hang_timeout"] == json({{"steady", 60}, {"configured", 60}, {"calibrated", false}, {"steps_seen", 19}}));
  memory.calibration = {2.5, 20};  // 3 x (2.5 s less the 500 ms poll interval)
  CHECK(figures()["hang_timeout"] == json({{"steady", 6}, {"configured", 60}, {"calibrated", true}, {"steps_seen", 20}}));
  memory.calibration = {0.5, 20};  // never under calibrate_min
  CHECK(figures()["hang_timeout"]["steady"] == 5);

  json v = figures();
  v["step"] = 7;
  v["step_source"] = "heartbeat";
  std::string text;
  for (const auto& l : cli::status_lines(v)) text += l + "\n";
  CHECK(text.find("(heartbeat); a hang after 5s without a step (calibrated from 20 steps; configured 1m00s)\n") !=
        std::string::npos);
}

TEST_CASE("status after a resubmission no pass has looked at yet: the new job's state is not known, not the old job's") {
  Figures f;
  auto c = f.open();
  f.pass(*c);
  f.run_steps(*c, 1, "n[1-2]", {10, 20});
  f.fake.set_state(f.last_job(), JobState::Failed, 1, "n[1-2]");
  f.pass(*c);  // ended; attempt 2 after the backoff
  f.clock += 6;
  f.pass(*c);  // attempt 2 submitted; status.json still tells of attempt 1's job
  REQUIRE(f.submits() == 2);
  const json s = f.status();
  CHECK(s["attempt"] == 2);
  CHECK(s["job_id"] == f.last_job());
  CHECK(s["job_state"].is_null());
  CHECK(s["nodes"].is_null());
  CHECK(s["job_seen"].is_null());
  CHECK(cli::status_line(s).find("FAILED") == std::string::npos);
}

TEST_CASE("status asks Slurm when no supervisor holds the campaign: its answer, a purged job, no answer") {
  json v = {{"job_state", "RUNNING"}, {"nodes", "n[1-2]"}, {"job_seen", {{"source", "supervisor"}, {"at", 900.0}, {"age", 100.0}}}};
  const std::vector<slurm::Job> jobs = {{.job_id = 7, .state = JobState::Running, .nodes = "n[1,3]"}};
  json asked = v;
  cli::slurm_job(asked, 7, jobs, 1000);
  CHECK(asked["job_state"] == "RUNNING");
  CHECK(asked["nodes"] == "n[1,3]");
  CHECK(asked["job_seen"]["source"] == "slurm");
  CHECK(asked["job_seen"]["age"] == 0.0);
  json gone = v;
  cli::slurm_job(gone, 8, jobs, 1000);
  CHECK(gone["job_state"] == "gone");
  json failed = v;
  cli::slurm_job(failed, 7, std::unexpected(slurm::Error{.message = "Slurm did not answer within 5s"}), 1000);
  CHECK(failed["job_state"] == "RUNNING");  // what is stored, with its age and why Slurm's word is missing
  CHECK(failed["job_seen"]["source"] == "supervisor");
  CHECK(failed["job_seen"]["slurm_error"] == "Slurm did not answer within 5s");
  json line = failed;
  line["attempt"] = 2;
  line["job_id"] = 7;
  CHECK(cli::status_lines(line).at(2) ==
        "attempt: 2, job 7 RUNNING on n[1-2] (as its supervisor last wrote it, 1m40s ago; Slurm: Slurm did not answer within 5s)");
}

TEST_CASE("status reads the heartbeat files when they are ahead of what memory holds (under cron, memory is a tick old)") {
  Figures f;
  auto c = f.open();
  f.pass(*c);
  f.run_steps(*c, 1, "n[1-2]", {10, 20});
  f.heartbeat("35\n", 1);  // written after the last pass
  const json s = f.status();
  CHECK(s["step"] == 35);
  CHECK(s["step_source"] == "heartbeat");
  CHECK(s["heartbeat_age"].is_number());
}

TEST_CASE("status of a run whose end was read after Slurm forgot its job: the end's state and nodes, not the last RUNNING seen") {
  Figures f;
  f.fake.accounting.available = true;
  auto c = f.open();
  f.pass(*c);
  f.run_steps(*c, 1, "n[1-2]", {50, 100});
  const auto id = f.last_job();
  f.fake.table.clear();  // purged (MinJobAge) before the next pass, as between two ticks
  f.fake.accounting.jobs = {{.job_id = id, .state = JobState::Completed}};
  f.clock += 60;
  REQUIRE(f.pass(*c));
  const json s = f.status();
  CHECK(s["state"] == "completed");
  CHECK(s["job_state"] == "COMPLETED");
  CHECK(s["nodes"] == "n[1-2]");
  CHECK(cli::status_line(s).find("RUNNING") == std::string::npos);
}

TEST_CASE("an attempt's first step, first seen some steps in, is dated back at the pace measured, not past the pass that saw its job start") {
  Figures f;
  auto c = f.open();
  f.pass(*c);
  f.run_steps(*c, 1, "n[1-2]", {10, 20, 30});  // 1000, 1010, 1020: a step a second
  f.fake.set_state(f.last_job(), JobState::Failed, 1, "n[1-2]");
  f.clock = 1021;
  f.pass(*c);  // ended: attempt 2 after the 5 s backoff
  f.clock = 1027;
  f.pass(*c);
  REQUIRE(f.submits() == 2);
  f.fake.set_state(f.last_job(), JobState::Running, 0, "n[1-2]");
  f.clock = 1030;
  f.pass(*c);  // running, no heartbeat yet
  f.clock = 1040;
  f.heartbeat("8\n", 2);  // first seen at step 8: steps 1-7 took about 7 s
  f.pass(*c);
  f.clock = 1041;
  f.fake.set_state(f.last_job(), JobState::Failed, 1, "n[1-2]");
  f.pass(*c);
  double first_step = 0;
  for (const auto& r : store::read_journal(f.config).records)
    if (r.type == "ended" && r.data.value("attempt", 0) == 2) first_step = r.data.value("first_step_at", 0.0);
  CHECK(first_step == doctest::Approx(1033));
}

TEST_CASE("status of a campaign resumed after it finished: its time runs on, and the new attempt's span ends now") {
  auto rec = [](double t, std::string type, json data) { return engine::JournalRecord{t, std::move(type), std::move(data)}; };
  const std::vector<engine::JournalRecord> records = {
      rec(1000, "campaign", {{"id", "c1"}, {"name", "t"}}),
      rec(1001, "submit-intent", {{"attempt", 1}, {"tag", "x:1"}, {"resume_from", ""}, {"resume_step", 0}, {"exclude", json::array()}}),
      rec(1002, "submitted", {{"attempt", 1}, {"job_id", 11}}),
      rec(1100, "ended", {{"attempt", 1}, {"job_id", 11}, {"class", "failed"}, {"step", 0}, {"nodes", "n1"}, {"action", "stop"}}),
      rec(1101, "finished", {{"code", 4}, {"reason", "stopped"}}),
      rec(2000, "resumed", {{"request", "r1"}, {"verb", "resume"}, {"by", "u"}, {"from", ""}, {"from_step", 0}}),
      rec(2001, "submit-intent", {{"attempt", 2}, {"tag", "x:2"}, {"resume_from", ""}, {"resume_step", 0}, {"exclude", json::array()}}),
      rec(2002, "submitted", {{"attempt", 2}, {"job_id", 12}}),
  };
  const auto s = engine::replay(records);
  REQUIRE(s.problems.empty());
  const auto spans = engine::attempt_spans(s, -1, 3000);
  REQUIRE(spans.size() == 2);
  CHECK(spans[0].end == 1100);
  CHECK(spans[1].start == 2002);
  CHECK(spans[1].end == 3000);  // running now, not cut at the earlier finish
  const json t = engine::time_figures(spans, s, 3000);
  CHECK(t["began"] == 1000.0);
  CHECK(t["elapsed"] == 2000.0);
}
