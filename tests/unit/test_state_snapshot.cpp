// The replay snapshot: the state's JSON both ways, and a campaign that opens a long journal from it.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/campaign_verbs.h"
#include "engine_fixture.h"
#include "journal/atomic_file.h"
#include "state/snapshot.h"
#include "store/read_campaign.h"
#include "store/replay_snapshot.h"

using namespace mlsup;
using namespace mlsup::engine;
using nlohmann::json;

namespace {

// A state with every member away from its default.
CampaignState busy_state() {
  CampaignState s;
  s.campaign_id = "abc";
  AttemptState a;
  a.number = 7, a.tag = "mlsup:t:abc:7", a.resume_from = "/c/7", a.resume_step = 70, a.exclude = {"n1", "n2"};
  a.signal_lead = 90, a.relaxed_at = 5.5, a.relaxed = 1, a.intent_time = 6.5, a.job_id = 42;
  a.submit_failures = {{7.5, slurm::ErrorKind::Timeout, "timed out"}};
  a.failed_submissions = 2, a.submissions = 3, a.chain = true, a.task_job_id = 43, a.in_job = true;
  a.step_claimed = true, a.step_nodes = {"n3"}, a.steps_only = true, a.cancel_reason = decide::EndClass::Hang;
  a.pending_alerted = true, a.held = true, a.held_for = "pause", a.sbatch = SbatchRun{9, 10, "h", "b", 11.5, 12.5};
  a.sbatch_awaited = 13, a.uncertain = true, a.spares_dropped = true, a.switch_set_at = 14.5, a.switch_for = "cancel";
  a.ended = true, a.end_class = decide::EndClass::NodeFail, a.end_step = 77;
  a.submitted_at = 16.5, a.ended_at = 17.5, a.step_times = true, a.first_step_at = 18.5, a.last_progress_at = 19.5;
  a.end_slurm_state = "NODE_FAIL", a.end_nodes = "n[1-2]";
  s.attempts = {a, a};
  s.attempts[1].number = 8;
  s.attempts[1].job_id.reset();
  s.restarts = {{1.5, decide::EndClass::Preempted, true, true, true}};
  s.restarts_earlier = {{decide::EndClass::Hang, 3}};
  s.ledger = {{"n1", "node failure", 2.5, 3.5}};
  s.ledger_attempts = {7};
  s.failures = {{4.5, {"n1"}}};
  s.rule_exclusions = {{0, {"n1", 3, 300}}};
  s.training_faults = {{3, 300, 50}};
  s.next_submit_at = 15.5, s.quarantined = {"/c/6"}, s.quarantined_in_a_row = 1, s.proven_checkpoint = "/c/5";
  s.proven_step = 50, s.awaiting_submit = true, s.finished_code = 4, s.finished_reason = "why";
  s.requests_done = {"r1", "r2"}, s.paused = true, s.pause_now = true, s.cancel_requested = true;
  s.resume_point = "/c/4", s.resume_point_step = 40;
  s.earlier = {5, 20.5, 21.5, 22}, s.began = 23.5, s.finished_at = 24.5;
  return s;
}

// A journal of attempts that were preempted and resubmitted, records in all (with the campaign's first).
std::string long_journal(const std::string& name, int records) {
  std::ostringstream out;
  out << R"({"mlsup_journal":1,"campaign":")" << name << "\"}\n";
  long long seq = 0;
  double t = 1000;
  auto line = [&](const std::string& type, json fields) {
    fields["seq"] = ++seq, fields["time"] = t += 1, fields["type"] = type, fields["epoch"] = 1;
    out << fields.dump() << "\n";
  };
  line("campaign", {{"id", "c0ffee00"}, {"name", name}});
  for (int a = 1; seq + 3 <= records; ++a) {
    line("submit-intent", {{"attempt", a}, {"tag", "mlsup:" + name + ":c0ffee00:" + std::to_string(a)}, {"resume_from", ""},
                           {"resume_step", 0}, {"exclude", json::array()}});
    line("submitted", {{"attempt", a}, {"job_id", 9000 + a}, {"chain", false}});
    line("ended", {{"attempt", a}, {"job_id", 9000 + a}, {"class", "preempted"}, {"slurm_state", "PREEMPTED"},
                   {"exit_code", 0}, {"signal", 0}, {"nodes", "n1"}, {"step", a * 10}, {"checkpoint_step", a * 10},
                   {"resumed_from", ""}, {"progressed", true}, {"action", "resubmit"}, {"delay", 0},
                   {"reason", "preempted: resubmitted"}});
  }
  return out.str();
}

// s's JSON with only its newest n attempts and its newest restart, as a supervisor keeps them (the
// counts of the others aside).
json newest(CampaignState s, std::size_t n) {
  if (s.attempts.size() > n) s.attempts.erase(s.attempts.begin(), s.attempts.end() - static_cast<long>(n));
  if (s.restarts.size() > 1) s.restarts.erase(s.restarts.begin(), s.restarts.end() - 1);
  s.earlier = {};
  s.restarts_earlier = {};
  return state_to_json(s);
}

// Every restart s tells of: those it holds and those it counts.
std::size_t all_restarts(const CampaignState& s) {
  std::size_t n = s.restarts.size();
  for (const auto& e : s.restarts_earlier) n += static_cast<std::size_t>(e.count);
  return n;
}

// A campaign of f whose journal holds 1,201 records, opened and passed once (the replay snapshot then
// kept: its records are 1,000 and more); the state its journal told before that pass.
CampaignState snapshot_kept(test::EngineFixture& f) {
  f.clock = 1e6;  // after the journal's records, by more than a week (restarts that old are only counted)
  std::filesystem::create_directories(f.config.state_dir);
  std::ofstream(f.config.dir().journal()) << long_journal("t", 1201);
  auto before = store::read_journal(f.config).state;
  {
    auto c = f.open();
    f.pass(*c);
  }
  REQUIRE(std::filesystem::exists(f.config.dir().replay()));
  return before;
}

}  // namespace

TEST_CASE("state snapshot: every member of the state comes back as it was written") {
  const CampaignState s = busy_state();
  const json j = state_to_json(s);
  const auto back = state_from_json(json::parse(j.dump()));
  REQUIRE(back);
  CHECK(state_to_json(*back) == j);
  CHECK(back->attempts[0].sbatch->server_time == 12.5);
  CHECK(back->attempts[0].submit_failures[0].kind == slurm::ErrorKind::Timeout);
  CHECK(*back->attempts[0].cancel_reason == decide::EndClass::Hang);
  CHECK_FALSE(back->attempts[1].job_id.has_value());
  CHECK(back->rule_exclusions[0].failure.step == 300);
  CHECK(back->requests_done.contains("r2"));
  CHECK(back->earlier.recomputed == 22);
  CHECK(back->attempts[0].end_nodes == "n[1-2]");
  CHECK(state_to_json(CampaignState{}) != j);  // a member the codec forgot would be equal here
}

TEST_CASE("state snapshot: another codec version, a missing member or one of another type is no snapshot") {
  json j = state_to_json(busy_state());
  CHECK(state_from_json(j));
  json other = j;
  other["codec"] = kStateCodecVersion + 1;
  CHECK_FALSE(state_from_json(other));
  json missing = j;
  missing.erase("proven_step");
  CHECK_FALSE(state_from_json(missing));
  json wrong = j;
  wrong["restarts"][0][1] = "no such class";
  CHECK_FALSE(state_from_json(wrong));
}

TEST_CASE("replay snapshot: a campaign opening a long journal keeps one, and the next opening parses only what follows it") {
  test::EngineFixture f;
  const std::string path = f.config.dir().journal();
  const auto before = snapshot_kept(f);
  const auto snap = store::read_replay_snapshot(f.config.dir().replay(), "t", path);
  REQUIRE(snap);
  CHECK(snap->mark.count >= 1201);
  const auto whole_now = store::read_journal(f.config, store::Replay::Whole);
  CHECK(newest(snap->state, 2)["restarts"] == newest(whole_now.state, 2)["restarts"]);
  CHECK(snap->state.restarts.size() == 1);  // the newest, which progressed; the others counted
  CHECK(all_restarts(snap->state) == all_restarts(whole_now.state));
  // The state from the snapshot and the records after it is the state from the whole journal.
  CHECK(newest(store::replayed_state(f.config), 2) == newest(whole_now.state, 2));
  const auto after = store::read_journal(f.config, store::Replay::FromSnapshot);  // as status reads it
  CHECK(newest(after.state, 2) == newest(store::replayed_state(f.config), 2));
  CHECK(after.earlier == snap->mark.count);
  CHECK(after.records.size() == whole_now.records.size() - snap->mark.count);
  CHECK(before.restarts.size() == 400);

  // A record before the mark made unreadable (same length): a whole replay now stops at it, the
  // snapshot's reader never parses it.
  std::string text = *journal::read_file(path);
  const auto at = text.find("\"submitted\"", text.size() / 2);
  text.replace(at, 11, "\"submitted_");  // the string runs on: not JSON
  REQUIRE(journal::write_atomically(path, text));
  CHECK_FALSE(store::read_journal(f.config).problems.empty());
  CHECK(all_restarts(store::replayed_state(f.config)) == 400);
  CHECK(store::read_journal(f.config, store::Replay::FromSnapshot).problems.empty());  // nor does status's reading
  auto again = f.open();  // opens without the damaged line ever being read
  f.pass(*again);
  CHECK(f.submits() >= 1);
}

TEST_CASE("replay snapshot: a journal that is not the one the snapshot was taken of is replayed whole") {
  test::EngineFixture f;
  const std::string path = f.config.dir().journal();
  snapshot_kept(f);
  std::ofstream(path) << long_journal("t", 30);  // a journal started over, the old snapshot left behind
  CHECK_FALSE(store::read_replay_snapshot(f.config.dir().replay(), "t", path));
  CHECK(store::replayed_state(f.config).restarts.size() == 9);
  const auto before = f.submits();
  auto c = f.open();
  f.pass(*c);
  REQUIRE(f.submits() == before + 1);
  const auto& options = f.fake.submitted.back().options;  // attempt 10 of the new journal, decided from it alone
  CHECK(std::any_of(options.begin(), options.end(), [](const std::string& o) { return o.ends_with(":c0ffee00:10"); }));
}

TEST_CASE("status of a long journal from its replay snapshot: the attempts held, the others counted, the same figures") {
  test::EngineFixture f;
  snapshot_kept(f);
  const Clocks now{f.clock + 50, f.clock + 50, ""};
  const auto whole = store::read_campaign(f.config, now, false, store::Replay::Whole);
  const auto from_snapshot = store::read_campaign(f.config, now, false, store::Replay::FromSnapshot);
  REQUIRE(from_snapshot.journal.earlier >= 1201);
  REQUIRE(from_snapshot.journal.problems.empty());
  const json all = cli::status_json(f.config, whole, now, cli::kAllHistory);
  const json view = cli::status_json(f.config, from_snapshot, now);
  CHECK(all["attempts"] == 401);
  CHECK(all["history"].size() == 401);
  CHECK(view["attempts"] == 401);
  // The snapshot holds the newest two attempts the supervisor kept, the tail the one it submitted since.
  REQUIRE(view["history"].size() == 3);
  CHECK(view["history_earlier"] == 398);
  CHECK(view["history"].back() == all["history"].back());
  CHECK(view["history"].front() == all["history"][398]);
  CHECK(cli::status_json(f.config, whole, now)["history"].size() == cli::kStatusHistory);
  CHECK(cli::status_json(f.config, whole, now)["history_earlier"] == 401 - cli::kStatusHistory);
  // The figures over every attempt: the dropped ones' added up as the supervisor dropped them.
  for (const char* key : {"began", "elapsed", "recomputed_steps", "goodput"}) CHECK(view["time"][key] == all["time"][key]);
  CHECK(view["time"]["recomputed_steps"].get<long long>() > 0);
  CHECK(view["time"]["useful"].get<double>() == doctest::Approx(all["time"]["useful"].get<double>()));
  CHECK(view["time"]["lost_to_failures"].get<double>() == doctest::Approx(all["time"]["lost_to_failures"].get<double>()));
  CHECK(view["restarts_by_class"] == all["restarts_by_class"]);
  CHECK(view["job_seen"] == all["job_seen"]);
  CHECK(view["state"] == all["state"]);
}
