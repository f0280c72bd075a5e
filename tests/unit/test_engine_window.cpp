// The campaign's window (config `window:`): what reconcile decides in each phase when it is closed or
// opens again (a table of intents), and whole passes with the fake Slurm and a hand-moved clock: a
// queued job held and released, a running training asked to save at the window's end and carried on
// at the next opening with no budget spent, at_end: finish, and a person's stop meanwhile.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli/status_text.h"
#include "decide/exit_codes.h"
#include "reconcile/reconcile.h"
#include "reconcile/window_now.h"
#include "engine_fixture.h"
#include "intent_names.h"
#include "reconcile_rows.h"
#include "journal/journal.h"

namespace mlsup::test {
namespace {

using engine::AttemptState;
using engine::CampaignState;
using engine::World;

// 1970-01-01 (a Thursday) in UTC: the fixture's clock starts at 1000 (00:16:40), inside 00:00-00:30.
constexpr const char* kWindow = "window: {hours: \"00:00-00:30\", zone: UTC}\n";

using rows::attempt;
using rows::campaign;
using rows::job;
using rows::journaled;

// A pass with the window open (until 00:30) or closed (until the next midnight).
World world(bool open, std::vector<slurm::Job> jobs = {}) {
  World w = rows::world(std::move(jobs));
  w.window = engine::WindowNow{open, open ? 1800 : 86400};
  return w;
}

// The campaign's first job running 20 s before the window's close (00:30), then a pass 5 s after it;
// the job's id. No heartbeat timeout runs out between the passes.
slurm::JobId running_past_the_close(EngineFixture& f, engine::Campaign& c) {
  f.clock = 1780;
  f.pass(c);
  const auto id = f.last_job();
  f.fake.table[id].state = slurm::JobState::Running;
  CHECK_FALSE(f.pass(c));
  f.clock = 1805;
  CHECK_FALSE(f.pass(c));
  return id;
}

}  // namespace

TEST_CASE("window: what a closed window, and its opening, call for in each phase") {
  EngineFixture f("", kWindow);
  EngineFixture finish("", "window: {hours: \"00:00-00:30\", zone: UTC, at_end: finish}\n");
  auto held = attempt();
  held.held = true;
  auto asked = attempt();
  asked.switch_set_at = 990;
  asked.switch_for = "window";
  auto asked_long_ago = asked;
  asked_long_ago.switch_set_at = 1000 - 60.0;
  auto saved = attempt(true);  // ended on the window's switch
  saved.switch_set_at = 990;
  saved.switch_for = "window";
  auto stop = [](World w) {  // a person's `mlsup stop`
    w.kill_switch = true;
    return w;
  };
  auto own_switch = [](World w) {  // the switch mlsup set at the window's end ("window requested")
    w.kill_switch = w.kill_switch_ours = true;
    return w;
  };
  const auto closed = world(false);
  const auto open = world(true);
  struct Row {
    std::string what;
    CampaignState s;
    World w;
    std::string expected;
    const config::Config* config = nullptr;
  };
  const std::vector<Row> rows = {
      {"closed, nothing submitted: nothing starts", campaign({}), closed, ""},
      {"open, nothing submitted: the first attempt", campaign({}), open, "Submit"},
      {"closed, a queued job: held", campaign({attempt()}), world(false, {job(slurm::JobState::Pending)}), "Status Hold"},
      {"closed, a held job: nothing more", campaign({held}), world(false, {job(slurm::JobState::Pending)}), "Status"},
      {"open again, a held job: released", campaign({held}), world(true, {job(slurm::JobState::Pending)}), "Release Status"},
      {"closed, a running training: asked to save and exit", campaign({attempt()}),
       world(false, {job(slurm::JobState::Running)}), "AskToStop Status"},
      {"closed, at_end finish: the running job goes on", campaign({attempt()}),
       world(false, {job(slurm::JobState::Running)}), "Status", &finish.config},
      {"closed, the switch set 10 s ago: it goes on", campaign({asked}), world(false, {job(slurm::JobState::Running)}),
       "Status"},
      {"closed, the training outlived the grace: cancelled as preempted", campaign({asked_long_ago}),
       world(false, {job(slurm::JobState::Running)}), "Status Cancel"},
      {"closed, the attempt ended: nothing is submitted", campaign({attempt(true)}, true), closed, ""},
      {"closed, ended on the window's switch (still there): waits", campaign({saved}, true), own_switch(closed), ""},
      {"open again, the window's switch there: it goes first", campaign({saved}, true), own_switch(open), "ClearSwitch"},
      {"open again, a person's stop over the window's switch: stopped", campaign({saved}, true), stop(open), "Finish"},
      {"open, the switch gone: the next attempt", campaign({attempt(true)}, true), open, "Submit"},
      {"closed, the attempt ended, a person's stop: stopped", campaign({attempt(true)}, true), stop(closed), "Finish"},
      {"closed, nothing submitted, a person's stop: stopped", campaign({}), stop(closed), "Finish"},
      {"closed, a queued job, a person's stop: cancelled", campaign({attempt()}),
       stop(world(false, {job(slurm::JobState::Pending)})), "Status Cancel"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.what);
    engine::Memory m;
    m.window_told = row.w.window->open ? 1 : 2;  // told already: the table is about what else is decided
    const auto out = engine::reconcile(row.s, row.w, m, row.config ? *row.config : f.config, "abc");
    CHECK(kinds(out.intents) == row.expected);
    for (const auto& i : out.intents) {
      if (const auto* h = std::get_if<engine::intent::Hold>(&i)) CHECK(h->why == "window");
      if (const auto* a = std::get_if<engine::intent::AskToStop>(&i)) CHECK(a->why == "window");
      if (const auto* c = std::get_if<engine::intent::Cancel>(&i); c && !row.w.kill_switch)
        CHECK(c->why == decide::EndClass::Preempted);
      if (const auto* fin = std::get_if<engine::intent::Finish>(&i)) CHECK(fin->code == decide::kStoppedBySwitch);
    }
  }
}

TEST_CASE("window: its closing and its opening are told once each; a first look at an open window tells nothing") {
  EngineFixture f("", kWindow);
  auto told = [&](int before, bool open) {
    engine::Memory m;
    m.window_told = before;
    const auto out = engine::reconcile(campaign({attempt(true)}, true), world(open), m, f.config, "abc");
    std::string events;
    for (const auto& i : out.intents)
      if (const auto* r = std::get_if<engine::intent::Report>(&i)) events += r->event.str() + " ";
    return std::pair{events, out.memory.window_told};
  };
  CHECK(told(0, true) == std::pair{std::string(), 1});
  CHECK(told(0, false) == std::pair{std::string("window-closed "), 2});
  CHECK(told(1, false) == std::pair{std::string("window-closed "), 2});
  CHECK(told(2, false) == std::pair{std::string(), 2});
  CHECK(told(2, true) == std::pair{std::string("window-opened "), 1});
  engine::Memory m;  // kept in memory.json, so that each tick of cron tells it once too
  m.window_told = 2;
  CHECK(engine::memory_from_json(engine::to_json(m)).window_told == 2);
}

TEST_CASE("window: an ending on the window's switch is resubmitted at once, an ending on a person's stop stops") {
  EngineFixture f("", kWindow);
  auto saved = attempt();
  saved.switch_set_at = 990;
  saved.switch_for = "window";
  auto w = world(false, {job(slurm::JobState::Completed)});
  w.kill_switch = w.kill_switch_ours = true;
  auto out = engine::reconcile(campaign({saved}), w, {}, f.config, "abc");
  bool ended = false;
  for (const auto& i : out.intents)
    if (const auto* e = std::get_if<engine::intent::End>(&i)) {
      ended = true;
      CHECK(nlohmann::json(e->ended)["action"] == "resubmit");
      CHECK(nlohmann::json(e->ended)["delay"] == 0);
    }
  CHECK(ended);
  engine::Memory told;
  told.window_told = 2;
  out = engine::reconcile(campaign({attempt()}), w, told, f.config, "abc");  // the switch is not mlsup's
  CHECK(kinds(out.intents) == "Status End Finish");
}

TEST_CASE("window: a queued job is held at the window's end and released at its opening, with the Slurm calls") {
  EngineFixture f("", kWindow);
  auto c = f.open();
  f.pass(*c);
  REQUIRE(f.submits() == 1);
  const auto id = f.last_job();
  f.fake.table[id].state = slurm::JobState::Pending;
  f.clock = 1900;  // 00:31:40: closed until midnight
  CHECK_FALSE(f.pass(*c));
  CHECK(f.calls("hold " + std::to_string(id)) == 1);
  CHECK(journaled(f).current()->held);
  CHECK(f.told("window-closed"));
  CHECK_FALSE(f.pass(*c));
  CHECK(f.calls("hold") == 1);
  f.clock = 86400 + 60;  // the next day's window
  CHECK_FALSE(f.pass(*c));
  CHECK(f.calls("release " + std::to_string(id)) == 2);  // once when its submission was journaled, once now
  CHECK_FALSE(journaled(f).current()->held);
  CHECK(f.told("window-opened"));
  CHECK(f.submits() == 1);
}

TEST_CASE("window: at its end the running training saves and exits; the next window submits the next attempt, no "
          "budget spent and the switch removed") {
  EngineFixture f("", kWindow);
  auto c = f.open();
  const auto id = running_past_the_close(f, *c);
  CHECK(std::filesystem::exists(f.config.switches.kill));
  CHECK(slurp(f.config.switches.kill).starts_with("window requested"));
  f.fake.table[id].state = slurm::JobState::Completed;  // the training saved and exited 0
  CHECK_FALSE(f.pass(*c));
  auto s = journaled(f);
  CHECK(s.current()->end_class == decide::EndClass::KillSwitch);
  CHECK(s.awaiting_submit);
  CHECK_FALSE(s.finished_code);
  f.clock = 4000;
  CHECK_FALSE(f.pass(*c));
  CHECK(f.submits() == 1);  // still outside the window
  f.clock = 86400 + 60;
  CHECK_FALSE(f.pass(*c));  // the switch goes first
  CHECK_FALSE(std::filesystem::exists(f.config.switches.kill));
  CHECK(f.submits() == 1);
  CHECK_FALSE(f.pass(*c));
  CHECK(f.submits() == 2);
  CHECK(engine::state_name(journaled(f)) == "running");
}

TEST_CASE("window: with at_end finish the running job goes on past the end, and nothing new starts until the opening") {
  EngineFixture f("", "window: {hours: \"00:00-00:30\", zone: UTC, at_end: finish}\n");
  auto c = f.open();
  const auto id = running_past_the_close(f, *c);
  CHECK_FALSE(std::filesystem::exists(f.config.switches.kill));
  f.fake.table[id].state = slurm::JobState::Failed;
  f.fake.table[id].exit_code = 1;
  CHECK_FALSE(f.pass(*c));
  f.clock += 600;  // the backoff is long over
  CHECK_FALSE(f.pass(*c));
  CHECK(f.submits() == 1);
  f.clock = 86400 + 60;
  CHECK_FALSE(f.pass(*c));
  CHECK(f.submits() == 2);
}

TEST_CASE("window: a person's stop while the window holds a saved training ends the campaign, the stop kept") {
  EngineFixture f("", kWindow);
  auto c = f.open();
  const auto id = running_past_the_close(f, *c);
  f.fake.table[id].state = slurm::JobState::Completed;
  CHECK_FALSE(f.pass(*c));
  std::ofstream(f.config.switches.kill) << "stop requested 00:40:00\n";  // `mlsup stop` over the window's switch
  f.clock = 86400 + 60;
  const auto out = f.pass(*c);  // the switch is a person's now: followed at once, and kept
  CHECK(std::filesystem::exists(f.config.switches.kill));
  REQUIRE(out);
  CHECK(out->exit_code == decide::kStoppedBySwitch);
  CHECK(f.submits() == 1);
}

TEST_CASE("window: status's view of it, in its own zone") {
  EngineFixture f("", "window: {hours: \"20:00-07:00\", days: [mon-fri], zone: UTC}\n");
  const auto z = util::load_zone("UTC");
  REQUIRE(z);
  // 1970-01-02 was a Friday: open from 20:00 UTC until Saturday 07:00
  auto w = engine::window_in(f.config, *z, 86400 + 21 * 3600);
  REQUIRE(w);
  CHECK(w->open);
  CHECK(w->changes_at == 2 * 86400 + 7 * 3600);
  w = engine::window_in(f.config, *z, 2 * 86400 + 8 * 3600);  // Saturday morning: closed until Monday 20:00
  REQUIRE(w);
  CHECK_FALSE(w->open);
  CHECK(w->changes_at == 4 * 86400 + 20 * 3600);
  const auto j = engine::window_json(f.config, w);
  CHECK(j["hours"] == "20:00-07:00");
  CHECK(j["open"] == false);
  CHECK(j["at_end"] == "pause");
  EngineFixture none;
  CHECK_FALSE(engine::window_in(none.config, *z, 0));
  CHECK(engine::window_json(none.config, std::nullopt).is_null());
}

}  // namespace mlsup::test

TEST_CASE("window: status's line for it, and none without one") {
  const nlohmann::json w = {{"hours", "20:00-07:00"}, {"days", {"mon-fri"}}, {"zone", "Europe/Berlin"}, {"at_end", "finish"}};
  CHECK(mlsup::cli::window_line(w) == "window: 20:00-07:00 mon-fri (Europe/Berlin); at its end: finish");
  const nlohmann::json local = {{"hours", "22:00-06:00"}, {"days", nlohmann::json::array()}, {"zone", ""}, {"at_end", "pause"},
                                {"open", false}, {"until", 0}};
  CHECK(mlsup::cli::window_line(local).starts_with("window: 22:00-06:00 (local time), closed until 19"));
  CHECK(mlsup::cli::window_line(local).ends_with("; at its end: pause"));
}
