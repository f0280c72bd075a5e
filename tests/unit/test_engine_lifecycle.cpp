// The lifecycle verbs (state/lifecycle.h): which requests each state allows, what a pause or a
// cancel calls for in each phase (tables of reconcile's intents), and whole passes with the fake
// Slurm: a stop resumed, a pause held and released, a cancel asked and then sent.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "decide/exit_codes.h"
#include "decide/stop_wait.h"
#include "state/lifecycle.h"
#include "reconcile/reconcile.h"
#include "engine_fixture.h"
#include "intent_names.h"
#include "reconcile_rows.h"
#include "journal/journal.h"
#include "util/json.h"

namespace mlsup::test {
namespace {

using engine::AttemptState;
using engine::CampaignState;
using engine::Intent;
using engine::Request;
using engine::Verb;
using engine::World;

using rows::attempt;
using rows::campaign;
using rows::job;
using rows::journaled;
using rows::world;

CampaignState finished(int code) {
  auto s = campaign({attempt(true)});
  s.finished_code = code;
  return s;
}

}  // namespace

TEST_CASE("lifecycle: each verb in each state goes ahead or is refused with its exit code, nothing changed") {
  auto paused = campaign({attempt()});
  paused.paused = true;
  auto paused_now = paused;
  paused_now.pause_now = true;
  auto cancelling = campaign({attempt()});
  cancelling.cancel_requested = true;
  struct Row {
    std::string what;
    CampaignState s;
    Request r;
    std::optional<int> code;  // nullopt: it goes ahead
  };
  const Request resume{.verb = Verb::Resume}, pause{.verb = Verb::Pause}, cancel{.verb = Verb::Cancel};
  const Request pause_now{.verb = Verb::Pause, .now = true}, resume_from{.verb = Verb::Resume, .from = "/c/step-10"};
  const std::vector<Row> rows = {
      {"resume a running campaign", campaign({attempt()}), resume, decide::kNotStopped},
      {"resume a campaign not started", campaign({}), resume, decide::kNotStopped},
      {"resume a completed campaign", finished(decide::kCompleted), resume, decide::kNotStopped},
      {"resume after the kill switch", finished(decide::kStoppedBySwitch), resume, std::nullopt},
      {"resume after a spent budget", finished(decide::kBudgetSpent), resume, std::nullopt},
      {"resume after a person's scancel", finished(decide::kCancelledByPerson), resume, std::nullopt},
      {"resume after an unknown end", finished(decide::kEndUnknown), resume, std::nullopt},
      {"resume after a deadline or refused sbatch", finished(decide::kCannotGoOn), resume, std::nullopt},
      {"resume after mlsup cancel", finished(decide::kCancelled), resume, std::nullopt},
      {"resume --from after a stop", finished(decide::kStoppedBySwitch), resume_from, std::nullopt},
      {"resume a pause", paused, resume, std::nullopt},
      {"resume --from a pause whose job is still there", paused, resume_from, decide::kNotStopped},
      {"pause a running campaign", campaign({attempt()}), pause, std::nullopt},
      {"pause a stopped campaign", finished(decide::kBudgetSpent), pause, decide::kAlreadyEnded},
      {"pause a completed campaign", finished(decide::kCompleted), pause, decide::kAlreadyEnded},
      {"pause a paused campaign: nothing to do", paused, pause, decide::kCompleted},
      {"pause --now a paused campaign", paused, pause_now, std::nullopt},
      {"pause --now a campaign paused --now: nothing to do", paused_now, pause_now, decide::kCompleted},
      {"cancel a running campaign", campaign({attempt()}), cancel, std::nullopt},
      {"cancel a paused campaign", paused, cancel, std::nullopt},
      {"cancel a campaign not started", campaign({}), cancel, std::nullopt},
      {"cancel a completed campaign", finished(decide::kCompleted), cancel, decide::kAlreadyEnded},
      {"cancel a stopped campaign", finished(decide::kStoppedBySwitch), cancel, decide::kAlreadyEnded},
      {"cancel a cancelled campaign", finished(decide::kCancelled), cancel, decide::kAlreadyEnded},
      {"cancel a campaign being cancelled: nothing to do", cancelling, cancel, decide::kCompleted},
  };
  for (const auto& row : rows) {
    CAPTURE(row.what);
    const auto no = engine::refuse(row.s, row.r);
    CHECK(no.has_value() == row.code.has_value());
    if (no && row.code) {
      CHECK(no->code == *row.code);
      CHECK(!no->message.empty());
    }
  }
}

TEST_CASE("lifecycle: the state's name, as status shows it") {
  auto paused = campaign({attempt()});
  paused.paused = true;
  CHECK(engine::state_name(campaign({})) == "not started");
  CHECK(engine::state_name(campaign({attempt()})) == "running");
  CHECK(engine::state_name(paused) == "paused");
  CHECK(engine::state_name(finished(decide::kCompleted)) == "completed");
  CHECK(engine::state_name(finished(decide::kCancelled)) == "cancelled");
  CHECK(engine::state_name(finished(decide::kBudgetSpent)) == "stopped");
}

TEST_CASE("lifecycle: what a pause or a cancel calls for in each phase") {
  EngineFixture f;
  auto with = [](CampaignState s, bool paused, bool now, bool cancel) {
    s.paused = paused;
    s.pause_now = now;
    s.cancel_requested = cancel;
    return s;
  };
  auto held = attempt();
  held.held = true;
  auto asked = attempt();
  asked.switch_set_at = 990;  // 10 s before the world's wall time
  auto asked_long_ago = attempt();
  asked_long_ago.switch_set_at = 1000 - 60.0;
  auto ended = attempt(true);
  auto awaiting = campaign({ended});
  awaiting.awaiting_submit = true;
  auto ended_by_pause = attempt(true);
  ended_by_pause.switch_set_at = 990;
  auto awaiting_after_now = campaign({ended_by_pause});
  awaiting_after_now.awaiting_submit = true;
  auto stop = [](World w) {  // a person's `mlsup stop`
    w.kill_switch = true;
    return w;
  };
  auto own_switch = [](World w) {  // the switch mlsup set for the pause --now ("pause requested")
    w.kill_switch = w.kill_switch_ours = true;
    return w;
  };
  const auto pending = world({job(slurm::JobState::Pending)});
  const auto running = world({job(slurm::JobState::Running)});
  auto failed_job = job(slurm::JobState::Failed);
  failed_job.exit_code = 1;
  const auto failed = world({failed_job});
  auto completed_job = job(slurm::JobState::Completed);  // the training saved and exited on the switch
  struct Row {
    std::string what;
    CampaignState s;
    World w;
    std::string expected;
    std::string action = "pause";  // an End's decision
  };
  const std::vector<Row> rows = {
      {"paused, a queued job: held", with(campaign({attempt()}), true, false, false), pending, "Status Hold"},
      {"paused, a held job: nothing more", with(campaign({held}), true, false, false), pending, "Status"},
      {"paused, a running job: it goes on", with(campaign({attempt()}), true, false, false), running, "Status"},
      {"paused --now, a running job: the kill switch", with(campaign({attempt()}), true, true, false), running,
       "AskToStop Status"},
      {"paused --now, the switch set: it goes on", with(campaign({asked}), true, true, false), running, "Status"},
      {"paused, the last attempt ended: nothing is submitted", with(awaiting, true, false, false), world(), ""},
      {"paused, a failed job: its ending, no resubmission, no end", with(campaign({attempt()}), true, false, false),
       failed, "Status End"},
      {"paused, a held job, a person's stop: cancelled as a stop", with(campaign({held}), true, false, false),
       stop(pending), "Status Cancel"},
      {"paused, the last attempt ended, a person's stop: stopped", with(awaiting, true, false, false), stop(world()),
       "Finish"},
      {"paused --now, its attempt ended on the pause's switch: still paused", with(awaiting_after_now, true, true, false),
       own_switch(world()), ""},
      {"paused --now, its attempt ended, a person's stop over the switch: stopped", with(awaiting_after_now, true, true, false),
       stop(world()), "Finish"},
      {"paused, a running job ends on a person's stop: a stop", with(campaign({attempt()}), true, false, false),
       stop(world({completed_job})), "Status End Finish", "stop"},
      {"paused --now, a running job ends on the pause's switch: a pause", with(campaign({asked}), true, true, false),
       own_switch(world({completed_job})), "Status End"},
      {"paused --now, a running job ends on a person's stop over the pause's switch: a stop",
       with(campaign({asked}), true, true, false), stop(world({completed_job})), "Status End Finish", "stop"},
      {"the pause over, a held job: released", campaign({held}), pending, "Release Status"},
      {"cancel, nothing submitted: the end", with(campaign({}), false, false, true), world(), "Finish"},
      {"cancel, the last attempt ended: the end", with(awaiting, false, false, true), world(), "Finish"},
      {"cancel, a queued job: cancelled at once", with(campaign({attempt()}), false, false, true), pending,
       "Status Cancel"},
      {"cancel, a running job: the kill switch first", with(campaign({attempt()}), false, false, true), running,
       "Status AskToStop Status"},
      {"cancel, the switch set within the grace: it goes on", with(campaign({asked}), false, false, true), running,
       "Status Status"},
      {"cancel, the grace over: cancelled", with(campaign({asked_long_ago}), false, false, true), running,
       "Status Cancel"},
      {"cancel, a failed job: the end as cancelled", with(campaign({attempt()}), false, false, true), failed,
       "Status End Finish"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.what);
    const auto out = engine::reconcile(row.s, row.w, {}, f.config, "abc");
    CHECK(kinds(out.intents) == row.expected);
    for (const auto& i : out.intents) {
      const bool cancel = row.s.cancel_requested;
      if (const auto* fin = std::get_if<engine::intent::Finish>(&i))
        CHECK(fin->code == (cancel ? decide::kCancelled : decide::kStoppedBySwitch));
      if (const auto* end = std::get_if<engine::intent::End>(&i); end && row.s.paused) CHECK(nlohmann::json(end->ended)["action"] == row.action);
      if (const auto* c = std::get_if<engine::intent::Cancel>(&i))
        CHECK(c->why == (cancel ? decide::EndClass::CancelRequested : decide::EndClass::KillSwitch));
    }
  }
}

TEST_CASE("lifecycle: in chain mode a pause holds the array's queued tasks, and its end releases them") {
  EngineFixture f;
  slurm::Job task = job(slurm::JobState::Running);  // the task that runs the attempt
  task.job_id = 43;
  task.array_job_id = 42;
  task.array_task_id = 1;
  slurm::Job queued = job(slurm::JobState::Pending);  // the array's record of its queued tasks
  queued.array_job_id = 42;
  queued.array_task_pending = "2-8%1";
  queued.reason = "JobArrayTaskLimit";
  slurm::Job held_queue = queued;
  held_queue.reason = "JobHeldAdmin";
  auto chained = [](AttemptState a, bool claimed) {
    a.chain = true;
    if (claimed) a.task_job_id = 43;
    return a;
  };
  auto paused = [](CampaignState s) {
    s.paused = true;
    return s;
  };
  auto ended_world = [](std::vector<slurm::Job> chain) {  // the attempt ended: its array is read as the chain
    World w = world();
    w.chain = engine::JobsAnswer(std::move(chain));
    return w;
  };
  auto held_attempt = [&](bool ended, bool claimed = true) {
    auto a = chained(attempt(ended), claimed);
    a.held = true;
    return a;
  };
  auto stop = ended_world({queued});
  stop.kill_switch = true;
  struct Row {
    std::string what;
    CampaignState s;
    World w;
    std::string expected;
  };
  const std::vector<Row> rows = {
      {"paused, a task runs: the queued tasks are held, the task goes on",
       paused(campaign({chained(attempt(), true)})), world({task, queued}), "Hold Status"},
      {"paused, the queued tasks held already: nothing more", paused(campaign({held_attempt(false)})),
       world({task, held_queue}), "Status"},
      {"paused, the attempt ended: the queued tasks are held, nothing handed over",
       paused(campaign({chained(attempt(true), true)})), ended_world({queued}), "Hold"},
      {"paused, an attempt no task has taken, the tasks held: nothing to watch",
       paused(campaign({held_attempt(false, false)})), world({held_queue}), ""},
      {"paused, the attempt ended, a person's stop: stopped, not held", paused(campaign({chained(attempt(true), true)})),
       stop, "Finish"},
      {"the pause over, a task runs: the queued tasks are released", campaign({held_attempt(false)}),
       world({task, held_queue}), "Release Status"},
      {"the pause over, the attempt ended: released", campaign({held_attempt(true)}), ended_world({held_queue}),
       "Release"},
      {"not paused, tasks held by someone else: left alone", campaign({chained(attempt(), true)}),
       world({task, held_queue}), "Status"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.what);
    const auto out = engine::reconcile(row.s, row.w, {}, f.config, "abc");
    CHECK(kinds(out.intents) == row.expected);
    for (const auto& i : out.intents) {
      if (const auto* h = std::get_if<engine::intent::Hold>(&i)) CHECK(h->job_id == 42);
      if (const auto* r = std::get_if<engine::intent::Release>(&i)) CHECK(r->job_id == 42);
      if (const auto* fin = std::get_if<engine::intent::Finish>(&i)) CHECK(fin->cancel_chain.has_value());
    }
  }
}

TEST_CASE("lifecycle: the oldest request is taken first; one the journal has is only removed") {
  auto s = campaign({attempt()});
  const std::vector<Request> requests = {{.id = "300-1", .verb = Verb::Cancel}, {.id = "200-1", .verb = Verb::Pause}};
  auto next = engine::next_request(s, requests);
  REQUIRE(next);
  CHECK(next->request.id == "200-1");
  CHECK_FALSE(next->refused);
  CHECK_FALSE(next->done);
  s.requests_done.insert("200-1");
  CHECK(engine::next_request(s, requests)->done);
  s = finished(decide::kCompleted);
  CHECK(engine::next_request(s, {{.id = "1-1", .verb = Verb::Pause}})->refused->code == decide::kAlreadyEnded);
  CHECK_FALSE(engine::next_request(s, {}));
}

namespace {

// Leaves a request as the verb does.
void ask(const EngineFixture& f, const std::string& id, Request r) {
  std::filesystem::create_directories(f.config.state_dir + "/requests");
  std::ofstream(f.config.state_dir + "/requests/" + id + ".json") << util::dump_json(engine::to_json(r));
}

}  // namespace

TEST_CASE("lifecycle: a campaign stopped by its crash-loop rule, resumed, goes on with a fresh count and the kill "
          "switch cleared") {
  EngineFixture f(", crash_loop_restarts: 2");
  auto c = f.open();
  std::optional<engine::Outcome> out;
  for (int i = 0; i < 10 && !out; ++i) {  // every job fails at once, without progress: a crash loop
    out = f.pass(*c);
    f.fake.table[f.last_job()].state = slurm::JobState::Failed;
    f.fake.table[f.last_job()].exit_code = 1;
    f.clock += 10;
  }
  REQUIRE(out);
  CHECK(journaled(f).current()->number == 2);
  CHECK(out->exit_code == decide::kBudgetSpent);
  const auto submits = f.submits();
  std::filesystem::create_directories(std::filesystem::path(f.config.switches.kill).parent_path());
  std::ofstream(f.config.switches.kill) << "stop\n";
  ask(f, "100-1", {.verb = Verb::Resume, .by = "ann@login"});
  REQUIRE(c->requests());
  CHECK_FALSE(std::filesystem::exists(f.config.state_dir + "/requests/100-1.json"));
  CHECK_FALSE(std::filesystem::exists(f.config.switches.kill));
  const auto s = journaled(f);
  CHECK(engine::state_name(s) == "running");
  CHECK(s.restarts.empty());
  CHECK(f.submits() == submits);  // resume does not supervise
  CHECK_FALSE(f.pass(*c));        // the next pass does: a new attempt
  CHECK(f.submits() == submits + 1);
  CHECK(journaled(f).current()->number == 3);
  f.fake.table[f.last_job()].state = slurm::JobState::Failed;  // one failure is no crash loop now
  f.fake.table[f.last_job()].exit_code = 1;
  f.clock += 10;
  CHECK_FALSE(f.pass(*c));
}

TEST_CASE("lifecycle: a pause holds the queued job and a resume releases it; a request refused on the way is journaled") {
  EngineFixture f;
  auto c = f.open();
  f.pass(*c);
  const auto id = f.last_job();
  f.fake.table[id].state = slurm::JobState::Pending;
  ask(f, "100-1", {.verb = Verb::Pause});
  ask(f, "101-1", {.verb = Verb::Pause});  // a second pause: nothing to do, refused
  CHECK_FALSE(f.pass(*c));
  CHECK(f.calls("hold " + std::to_string(id)) == 1);
  auto s = journaled(f);
  CHECK(engine::state_name(s) == "paused");
  CHECK(s.current()->held);
  CHECK(s.requests_done.contains("101-1"));
  CHECK(f.told("request-refused"));
  CHECK_FALSE(f.pass(*c));
  CHECK(f.calls("hold") == 1);  // held once
  ask(f, "102-1", {.verb = Verb::Resume});
  CHECK_FALSE(f.pass(*c));
  CHECK(f.calls("release " + std::to_string(id)) == 2);  // once when its submission was journaled, once now
  CHECK_FALSE(journaled(f).current()->held);
  CHECK(engine::state_name(journaled(f)) == "running");
}

TEST_CASE("lifecycle: cancel asks the training through the kill switch, cancels its job after the grace, and ends "
          "the campaign as cancelled") {
  EngineFixture f;
  auto c = f.open();
  f.pass(*c);
  const auto id = f.last_job();
  f.fake.table[id].state = slurm::JobState::Running;
  ask(f, "100-1", {.verb = Verb::Cancel});
  CHECK_FALSE(f.pass(*c));
  CHECK(std::filesystem::exists(f.config.switches.kill));
  CHECK(f.calls("cancel") == 0);
  f.clock += 60.0 - 1;
  CHECK_FALSE(f.pass(*c));
  CHECK(f.calls("cancel") == 0);
  f.clock += 2;
  CHECK_FALSE(f.pass(*c));
  CHECK(f.calls("cancel " + std::to_string(id)) == 1);
  f.fake.table[id].state = slurm::JobState::Cancelled;
  const auto out = f.pass(*c);
  REQUIRE(out);
  CHECK(out->exit_code == decide::kCancelled);
  CHECK(engine::state_name(journaled(f)) == "cancelled");
  CHECK(journaled(f).current()->end_class == decide::EndClass::CancelRequested);
}

TEST_CASE("lifecycle: pause --now ends the running attempt through the kill switch as a pause; resume submits the next") {
  EngineFixture f;
  auto c = f.open();
  f.pass(*c);
  const auto id = f.last_job();
  f.fake.table[id].state = slurm::JobState::Running;
  ask(f, "100-1", {.verb = Verb::Pause, .now = true});
  CHECK_FALSE(f.pass(*c));
  CHECK(std::filesystem::exists(f.config.switches.kill));
  f.fake.table[id].state = slurm::JobState::Completed;  // the training saved and exited 0
  CHECK_FALSE(f.pass(*c));
  auto s = journaled(f);
  CHECK(engine::state_name(s) == "paused");
  CHECK(s.current()->end_class == decide::EndClass::KillSwitch);
  CHECK_FALSE(f.pass(*c));
  CHECK(f.submits() == 1);
  ask(f, "101-1", {.verb = Verb::Resume});
  REQUIRE(c->requests());
  CHECK_FALSE(std::filesystem::exists(f.config.switches.kill));
  CHECK_FALSE(f.pass(*c));
  CHECK(f.submits() == 2);
}

TEST_CASE("lifecycle: a person's `mlsup stop` after pause --now set the switch stops the campaign (10), not a pause") {
  EngineFixture f;
  auto c = f.open();
  f.pass(*c);
  const auto id = f.last_job();
  f.fake.table[id].state = slurm::JobState::Running;
  ask(f, "100-1", {.verb = Verb::Pause, .now = true});
  CHECK_FALSE(f.pass(*c));
  REQUIRE(std::filesystem::exists(f.config.switches.kill));
  std::ofstream(f.config.switches.kill) << "stop requested 2026-12-05 03:00:00\n";  // as `mlsup stop` writes it
  f.fake.table[id].state = slurm::JobState::Completed;
  const auto out = f.pass(*c);
  REQUIRE(out.has_value());
  CHECK(out->exit_code == decide::kStoppedBySwitch);
  CHECK(engine::state_name(journaled(f)) == "stopped");
}


TEST_CASE("lifecycle: cancel never cuts off a save the heartbeat tells of, up to heartbeat.save_timeout") {
  EngineFixture f;
  f.config.heartbeat.save_timeout = config::Seconds(300);
  auto c = f.open();
  f.pass(*c);
  const auto id = f.last_job();
  f.fake.table[id].state = slurm::JobState::Running;
  f.heartbeat("5\n", 1);
  f.pass(*c);
  ask(f, "100-1", {.verb = Verb::Cancel});
  CHECK_FALSE(f.pass(*c));  // the switch is set: the training saves, then exits
  f.clock += 1;
  f.heartbeat("6 saving\n", 1);
  CHECK_FALSE(f.pass(*c));
  f.clock += 100;  // past the grace (60 s), the save still under way
  CHECK_FALSE(f.pass(*c));
  CHECK(f.calls("cancel") == 0);
  f.clock += 200;  // saving for 300 s: the save timeout
  CHECK_FALSE(f.pass(*c));
  CHECK(f.calls("cancel " + std::to_string(id)) == 1);
}

TEST_CASE("lifecycle: the grace after the switch grows to twice the slowest save measured") {
  CHECK(decide::stop_grace(60, std::nullopt) == 60);
  CHECK(decide::stop_grace(60, 20.0) == 60);
  CHECK(decide::stop_grace(60, 90.0) == 180);
  CHECK_FALSE(decide::stop_overdue({.switch_set_at = 1000, .grace = 60, .saving_for = -1, .save_timeout = 300}, 1059));
  CHECK(decide::stop_overdue({.switch_set_at = 1000, .grace = 60, .saving_for = -1, .save_timeout = 300}, 1060));
  CHECK_FALSE(decide::stop_overdue({.switch_set_at = 1000, .grace = 60, .saving_for = 299, .save_timeout = 300}, 1500));
  CHECK(decide::stop_overdue({.switch_set_at = 1000, .grace = 60, .saving_for = 300, .save_timeout = 300}, 1500));
}

}  // namespace mlsup::test
