// The reconcile pass as tables: the journal's state, a world and the memory in; intents out. No
// Slurm, no files: what the engine decides, apart from how it reads the world and acts.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "decide/exit_codes.h"
#include "reconcile/reconcile.h"
#include "engine_fixture.h"
#include "intent_names.h"
#include "util/strings.h"

namespace mlsup::test {
namespace {

using engine::AttemptState;
using engine::CampaignState;
using engine::Intent;
using engine::World;

// A world at wall time 1000, mono 500, with a template that renders.
World world() {
  World w;
  w.now = {1000, 500, "host/boot"};
  w.template_text = "#!/bin/bash\nsrun true\n";
  w.template_read = true;
  w.checkpoints = checkpoint::Scan{};
  return w;
}

AttemptState submitted(int number, slurm::JobId id) {
  AttemptState a;
  a.number = number;
  a.tag = "mlsup:t:abc:" + std::to_string(number);
  a.job_id = id;
  return a;
}

CampaignState with(std::vector<AttemptState> attempts) {
  CampaignState s;
  s.campaign_id = "abc";
  s.attempts = std::move(attempts);
  return s;
}

slurm::Job job(slurm::JobId id, slurm::JobState state, std::string reason = "") {
  slurm::Job j;
  j.job_id = id;
  j.state = state;
  j.reason = std::move(reason);
  j.nodes = "n1";
  return j;
}

engine::Reconciled decide(const CampaignState& s, const World& w, const config::Config& c, engine::Memory m = {}) {
  return engine::reconcile(s, w, std::move(m), c, "abc");
}

}  // namespace

TEST_CASE("reconcile: each phase of a campaign and what it calls for") {
  EngineFixture f;
  const auto& c = f.config;
  struct Row {
    std::string what;
    CampaignState s;
    World w;
    std::string expected;
  };
  World killed = world();
  killed.kill_switch = true;
  World no_template = world();
  no_template.template_text.reset();
  AttemptState intent_only = submitted(1, 0);
  intent_only.job_id.reset();
  World tag_empty = world();
  tag_empty.by_tag = engine::JobsAnswer(std::vector<slurm::Job>{});
  World tag_found = world();
  tag_found.by_tag = engine::JobsAnswer(std::vector<slurm::Job>{job(42, slurm::JobState::Running)});
  World tag_failed = world();
  tag_failed.by_tag = engine::JobsAnswer(std::unexpected(slurm::Error{.message = "unreachable"}));
  World running = world();
  running.jobs = engine::JobsAnswer(std::vector<slurm::Job>{job(42, slurm::JobState::Running)});
  running.heartbeat = std::map<std::string, std::string>{{"", "5"}};
  World gone = world();
  gone.jobs = engine::JobsAnswer(std::vector<slurm::Job>{});
  World gone_ran = gone;
  gone_ran.started_signs = {"its output /x/logs/t-42.out"};
  World completed = world();
  completed.jobs = engine::JobsAnswer(std::vector<slurm::Job>{job(42, slurm::JobState::Completed)});
  World pending_killed = world();
  pending_killed.kill_switch = true;
  pending_killed.jobs = engine::JobsAnswer(std::vector<slurm::Job>{job(42, slurm::JobState::Pending, "Priority")});
  World query_failed = world();
  query_failed.jobs = engine::JobsAnswer(std::unexpected(slurm::Error{.message = "timed out"}));

  const std::vector<Row> rows = {
      {"nothing yet: the first attempt", with({}), world(), "Submit"},
      {"nothing yet, the kill switch set: the end", with({}), killed, "Finish"},
      {"nothing yet, no template renders: nothing (told by observe)", with({}), no_template, ""},
      {"an intent without its job, none carries the tag: sbatch", with({intent_only}), tag_empty, "Send"},
      {"an intent without its job, a job carries the tag: adopted", with({intent_only}), tag_found, "Adopt"},
      {"an intent without its job, Slurm does not answer: told only", with({intent_only}), tag_failed, "Report"},
      {"a running job with a fresh heartbeat: status only", with({submitted(1, 42)}), running, "Status"},
      {"a job Slurm forgot, nothing shows it started: the ending (forgotten), to be submitted again", with({submitted(1, 42)}), gone, "End"},
      {"a job Slurm forgot that ran, no source knowing its end: waited for until shown gone", with({submitted(1, 42)}), gone_ran, "Report"},
      {"a completed job: the ending and the campaign's end", with({submitted(1, 42)}), completed, "Status End Finish"},
      {"a pending job, the kill switch set: cancelled", with({submitted(1, 42)}), pending_killed, "Status Cancel"},
      {"the job query failed: told, nothing decided", with({submitted(1, 42)}), query_failed, "Report"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.what);
    CHECK(kinds(decide(row.s, row.w, c).intents) == row.expected);
  }
}

TEST_CASE("reconcile: a failed job is ended, then resubmitted after its backoff, decided from the memory alone") {
  EngineFixture f;
  CampaignState s = with({submitted(1, 42)});
  World w = world();
  auto failed = job(42, slurm::JobState::Failed);
  failed.exit_code = 1;
  w.jobs = engine::JobsAnswer(std::vector<slurm::Job>{failed});
  auto first = decide(s, w, f.config);
  REQUIRE(kinds(first.intents) == "Status End");
  const auto& end = std::get<engine::intent::End>(first.intents.back());
  CHECK(nlohmann::json(end.ended)["class"] == "failed");
  CHECK(nlohmann::json(end.ended)["action"] == "resubmit");
  // The journal now says: ended, resubmission decided 5 s on (backoff 5 s).
  s.attempts.back().ended = true;
  s.awaiting_submit = true;
  s.next_submit_at = 1005;
  World later = world();
  CHECK(kinds(decide(s, later, f.config, first.memory).intents) == "");
  later.now = {1003, 504, "host/boot"};  // the wall clock says 3 s, the monotonic one 4 s: not yet
  CHECK(kinds(decide(s, later, f.config, first.memory).intents) == "");
  later.now = {1004, 505, "host/boot"};  // 5 s on the monotonic clock, whatever the wall clock says
  const auto next = decide(s, later, f.config, first.memory);
  REQUIRE(kinds(next.intents) == "Submit");
  CHECK(std::get<engine::intent::Submit>(next.intents[0]).attempt == 2);
}

TEST_CASE("reconcile: a job pending for excluded nodes gets its oldest exclusion dropped after exclusion_relax_after") {
  EngineFixture f(", exclusion_relax_after: 60s");
  AttemptState a = submitted(2, 42);
  a.exclude = {"n3", "n2"};  // newest first: n2 is the oldest
  const CampaignState s = with({submitted(1, 41), a});
  auto stuck = job(42, slurm::JobState::Pending, "ReqNodeNotAvail, UnavailableNodes:n2");
  stuck.excluded_nodes = "n2,n3";
  World w = world();
  w.jobs = engine::JobsAnswer(std::vector<slurm::Job>{stuck});
  auto first = decide(s, w, f.config);
  CHECK(kinds(first.intents) == "Status Report");  // the pending reason, told once
  CHECK(first.memory.unavailable_since == 500);
  w.now = {1059, 559, "host/boot"};
  CHECK(kinds(decide(s, w, f.config, first.memory).intents) == "Status");
  // A tick is a new process: what it remembers is the memory, so it relaxes exactly as `run` does.
  w.now = {1060, 560, "host/boot"};
  const auto due = decide(s, w, f.config, first.memory);
  REQUIRE(kinds(due.intents) == "Status Relax");
  const auto& relax = std::get<engine::intent::Relax>(due.intents[1]);
  CHECK(relax.node == "n2");
  CHECK(relax.keep == std::vector<std::string>{"n3"});
}

TEST_CASE("reconcile: a pending job's reason is told as soon as it is seen, once per change, not every pass") {
  EngineFixture f;
  const CampaignState s = with({submitted(1, 42)});
  World w = world();
  const auto pass = [&](const char* reason, engine::Memory m) {
    w.jobs = engine::JobsAnswer(std::vector<slurm::Job>{job(42, slurm::JobState::Pending, reason)});
    return decide(s, w, f.config, std::move(m));
  };
  const auto none = pass("None", {});  // Slurm has not looked at it yet: nothing to tell
  CHECK(kinds(none.intents) == "Status");
  const auto first = pass("Priority", none.memory);
  REQUIRE(kinds(first.intents) == "Status Report");
  const auto& told = std::get<engine::intent::Report>(first.intents[1]);
  CHECK(told.event == "pending");
  CHECK(told.fields["slurm_reason"] == "Priority");
  CHECK(told.fields["job_id"] == 42);
  CHECK(kinds(pass("Priority", first.memory).intents) == "Status");
  CHECK(kinds(pass("Resources", first.memory).intents) == "Status Report");
}

TEST_CASE("reconcile: a request that can never start is an alert at once, not after pending_alert_after") {
  EngineFixture f;
  const CampaignState s = with({submitted(1, 42)});
  World w = world();
  w.jobs = engine::JobsAnswer(std::vector<slurm::Job>{job(42, slurm::JobState::Pending, "PartitionNodeLimit")});
  const auto first = decide(s, w, f.config);
  REQUIRE(kinds(first.intents) == "Status Report PendingAlert");
  CHECK(std::get<engine::intent::PendingAlert>(first.intents[2]).never_starts);
  // A hold waits for a person: told only after pending_alert_after.
  w.jobs = engine::JobsAnswer(std::vector<slurm::Job>{job(42, slurm::JobState::Pending, "JobHeldUser")});
  CHECK(kinds(decide(s, w, f.config).intents) == "Status Report");
}

TEST_CASE("next_submission: the engine's next attempt from the journal's state: tag, resume point, exclusions") {
  EngineFixture f(", exclusion_cap: 2");
  AttemptState ended = submitted(2, 42);
  ended.ended = true;
  CampaignState s = with({submitted(1, 41), ended});
  s.awaiting_submit = true;
  s.ledger = {{"n3", "suspect", 900, 99999}, {"n4", "expired", 100, 200}};
  World w = world();
  w.checkpoints = checkpoint::Scan{};
  w.checkpoints->checkpoints = {{"/ck/step-100", 100, true, "", true}, {"/ck/step-200", 200, true, "", true}};
  const auto next = engine::next_submission(s, w, f.config);
  REQUIRE(next);
  CHECK(next->attempt == 3);
  CHECK(next->tag == "mlsup:t:abc:3");
  CHECK(next->resume_from == "/ck/step-200");
  CHECK(next->resume_step == 200);
  CHECK(next->exclude == std::vector<std::string>{"n3"});
  // An intent journaled and not yet sent keeps its own values.
  AttemptState intent_only = submitted(3, 0);
  intent_only.job_id.reset();
  intent_only.resume_from = "/ck/step-100";
  s.attempts.push_back(intent_only);
  const auto again = engine::next_submission(s, w, f.config);
  REQUIRE(again);
  CHECK(again->attempt == 3);
  CHECK(again->resume_from == "/ck/step-100");
}

TEST_CASE("reconcile: a running job silent past the steady timeout is a hang, with the node that went quiet first") {
  EngineFixture f;
  const CampaignState s = with({submitted(1, 42)});
  World w = world();
  w.jobs = engine::JobsAnswer(std::vector<slurm::Job>{job(42, slurm::JobState::Running)});
  w.heartbeat = std::map<std::string, std::string>{{"n1.0", "1"}, {"n2.1", "1"}};
  auto m = decide(s, w, f.config).memory;
  for (int t = 1; t <= 8; ++t) {  // n2 goes on for 8 s, n1 stays at step 1
    w.now = {1000.0 + t, 500.0 + t, "host/boot"};
    w.heartbeat = std::map<std::string, std::string>{{"n1.0", "1"}, {"n2.1", std::to_string(1 + t)}};
    m = decide(s, w, f.config, m).memory;
  }
  w.now = {1019, 519, "host/boot"};  // 11 s after n2's last step: past the 10 s steady timeout
  const auto r = decide(s, w, f.config, m);
  REQUIRE(kinds(r.intents) == "Status Hang");
  const auto& hang = std::get<engine::intent::Hang>(r.intents[1]);
  REQUIRE(hang.stale.size() == 1);
  CHECK(hang.stale[0].node == "n1");
}

TEST_CASE("reconcile: a running job whose batch host Slurm removed is a node fault: the host excluded, the job cancelled") {
  EngineFixture f;
  const CampaignState s = with({submitted(1, 42)});
  World w = world();
  slurm::Job j = job(42, slurm::JobState::Running);
  j.nodes = "n[2-3]";  // a --no-kill job on n[1-3] after n1, its batch host, failed
  j.batch_host = "n1";
  w.jobs = engine::JobsAnswer(std::vector<slurm::Job>{j});
  const auto r = decide(s, w, f.config);
  REQUIRE(kinds(r.intents) == "Status Exclude Cancel");
  CHECK(std::get<engine::intent::Exclude>(r.intents[1]).blamed.node == "n1");
  CHECK(std::get<engine::intent::Cancel>(r.intents[2]).why == decide::EndClass::NodeFail);
  j.nodes = "n[1-3]";  // the batch host still in the job: watched as usual
  w.jobs = engine::JobsAnswer(std::vector<slurm::Job>{j});
  CHECK(kinds(decide(s, w, f.config).intents) == "Status");
  j.nodes = "n[2-3]";
  j.batch_host = "";  // a job record that does not say
  w.jobs = engine::JobsAnswer(std::vector<slurm::Job>{j});
  CHECK(kinds(decide(s, w, f.config).intents) == "Status");
}

TEST_CASE("reconcile: chain mode, an attempt handed to the array") {
  EngineFixture f;
  AttemptState a = submitted(2, 40);
  a.chain = true;
  a.tag = "mlsup:t:abc:1";
  AttemptState first = submitted(1, 40);
  first.chain = true;
  first.task_job_id = 41;
  first.ended = true;
  const CampaignState s = with({first, a});
  World w = world();
  w.claim_read = true;
  SUBCASE("its task claimed it") {
    w.jobs = engine::JobsAnswer(std::vector<slurm::Job>{});
    w.claim = engine::Claim{43, "2", "prepared", "/ck/10"};
    CHECK(kinds(decide(s, w, f.config).intents) == "ChainValues Claimed");
  }
  SUBCASE("its tasks still queued: exclusions kept on them, the pending wait") {
    auto rest = job(40, slurm::JobState::Pending, "Priority");
    w.jobs = engine::JobsAnswer(std::vector<slurm::Job>{rest});
    CHECK(kinds(decide(s, w, f.config).intents) == "ChainValues PatchQueued Status Report");  // Report: its reason
  }
  SUBCASE("the array ran out: a new one under a tag of its own") {
    w.jobs = engine::JobsAnswer(std::vector<slurm::Job>{});
    const auto r = decide(s, w, f.config);
    REQUIRE(kinds(r.intents) == "ChainValues ChainExhausted");
    CHECK(std::get<engine::intent::ChainExhausted>(r.intents[1]).new_tag == "mlsup:t:abc:2-r1000");
  }
}

TEST_CASE("reconcile: the next attempt after a chain's task goes to the queued task, not to sbatch") {
  EngineFixture f;
  AttemptState done = submitted(1, 40);
  done.chain = true;
  done.task_job_id = 41;
  done.ended = true;
  done.exclude = {"n4"};
  CampaignState s = with({done});
  s.awaiting_submit = true;
  World w = world();
  w.template_text.reset();  // a queued task needs no template
  auto queued = job(40, slurm::JobState::Pending, "Dependency");
  w.chain = engine::JobsAnswer(std::vector<slurm::Job>{queued});
  const auto r = decide(s, w, f.config);
  REQUIRE(kinds(r.intents) == "Submit");
  const auto& sub = std::get<engine::intent::Submit>(r.intents[0]);
  CHECK(sub.attempt == 2);
  REQUIRE(sub.queued);
  CHECK(*sub.chain_job == 40);
  CHECK(sub.tag == done.tag);
  CHECK(sub.before == std::vector<std::string>{"n4"});
}

TEST_CASE("needs: a source is read only when a decision of this pass uses it") {
  EngineFixture f;
  const auto& c = f.config;
  World w = world();
  auto n = engine::needs(with({}), World{}, {}, c);
  CHECK((n.template_text && n.checkpoints && !n.jobs && !n.nodes && !n.heartbeat));
  AttemptState a = submitted(1, 42);
  n = engine::needs(with({a}), World{}, {}, c);
  CHECK((n.jobs && !n.heartbeat && !n.checkpoints && !n.template_text));
  w.jobs = engine::JobsAnswer(std::vector<slurm::Job>{job(42, slurm::JobState::Running)});
  n = engine::needs(with({a}), w, {}, c);
  CHECK((n.heartbeat && !n.checkpoints && !n.nodes && !n.ending));
  w.jobs = engine::JobsAnswer(std::vector<slurm::Job>{job(42, slurm::JobState::Pending)});
  n = engine::needs(with({a}), w, {}, c);
  CHECK((!n.heartbeat && !n.checkpoints));
  w.jobs = engine::JobsAnswer(std::vector<slurm::Job>{job(42, slurm::JobState::Failed)});
  n = engine::needs(with({a}), w, {}, c);
  CHECK((n.heartbeat && n.checkpoints && n.nodes && n.ending));
  a.ended = true;
  CampaignState waiting = with({a});
  waiting.awaiting_submit = true;
  waiting.next_submit_at = 2000;
  n = engine::needs(waiting, w, {}, c);
  CHECK((!n.template_text && !n.checkpoints && !n.jobs));  // the backoff is not over: nothing to read
}

TEST_CASE("needs: a run that failed inside a job with spare nodes is an ending: its checkpoints are read") {
  EngineFixture f;
  auto c = f.config;
  c.slurm.spare_nodes = 1;
  World w = world();
  AttemptState a = submitted(1, 42);
  w.jobs = engine::JobsAnswer(std::vector<slurm::Job>{job(42, slurm::JobState::Running)});
  w.spare_end = 1;  // the attempt's run exited 1 while the job runs on
  const auto n = engine::needs(with({a}), w, {}, c);
  CHECK((n.ending && n.heartbeat && n.checkpoints));
}

TEST_CASE("due_at_once: a second round only for a resubmission due now or failed sbatches that end the campaign") {
  EngineFixture f;
  AttemptState a = submitted(1, 42);
  const CampaignState before = with({a});
  a.ended = true;
  CampaignState after = with({a});
  after.awaiting_submit = true;
  after.next_submit_at = 1000;
  const engine::Clocks now{1000, 500, "host/boot"};
  CHECK(engine::due_at_once(progress(before), after, {}, f.config, now));
  after.next_submit_at = 1005;
  CHECK_FALSE(engine::due_at_once(progress(before), after, {}, f.config, now));
  AttemptState unsent = submitted(2, 0);
  unsent.job_id.reset();
  const CampaignState intent = with({unsent});
  unsent.submit_failures.push_back({999, slurm::ErrorKind::Rejected, "invalid partition"});
  CHECK(engine::due_at_once(progress(intent), with({unsent}), {}, f.config, now));
  CHECK_FALSE(engine::due_at_once(progress(with({unsent})), with({unsent}), {}, f.config, now));
  unsent.submit_failures.back().kind = slurm::ErrorKind::Unreachable;  // retried later: nothing due now
  CHECK_FALSE(engine::due_at_once(progress(intent), with({unsent}), {}, f.config, now));
}


TEST_CASE("reconcile: retention keeps the checkpoint the last attempt resumed from and got past") {
  EngineFixture f;
  f.config.checkpoint.keep = 1;
  auto rec = [](std::string type, nlohmann::json data) { return engine::JournalRecord{900, std::move(type), std::move(data)}; };
  const auto s = engine::replay({
      rec("campaign", {{"id", "abc"}}),
      rec("submit-intent", {{"attempt", 1}, {"tag", "mlsup:t:abc:1"}, {"resume_from", "/ckpt/s1000"}, {"resume_step", 1000}}),
      rec("submitted", {{"attempt", 1}, {"job_id", 42}}),
      rec("ended", {{"attempt", 1}, {"class", "failed"}, {"step", 1900}, {"progressed", false}, {"action", "resubmit"}}),
  });
  REQUIRE(s.problems.empty());
  CHECK(s.proven_checkpoint == "/ckpt/s1000");
  World w = world();
  // 2000, 2500 and 3000 were written by that attempt and look complete, but no attempt has got past any yet;
  // 2500 stays too: the next attempt resumes from 3000, and 2500 is where a fallback from it would resume.
  for (long long step : {1000, 2000, 2500, 3000})
    w.checkpoints->checkpoints.push_back({"/ckpt/s" + std::to_string(step), step, true, "", true});
  const auto r = decide(s, w, f.config);
  REQUIRE(kinds(r.intents) == "Prune Submit");
  const auto& gone = std::get<engine::intent::Prune>(r.intents.front()).old;
  REQUIRE(gone.size() == 1);
  CHECK(gone[0].step == 2000);
  CHECK(std::get<engine::intent::Submit>(r.intents.back()).resume_from == "/ckpt/s3000");
}

TEST_CASE("reconcile: an attempt that did not get past its checkpoint proves nothing") {
  auto rec = [](std::string type, nlohmann::json data) { return engine::JournalRecord{900, std::move(type), std::move(data)}; };
  const auto s = engine::replay({
      rec("submit-intent", {{"attempt", 1}, {"tag", "x"}, {"resume_from", "/ckpt/s1000"}, {"resume_step", 1000}}),
      rec("ended", {{"attempt", 1}, {"class", "failed"}, {"step", 1000}, {"progressed", false}, {"action", "resubmit"}}),
      rec("submit-intent", {{"attempt", 2}, {"tag", "y"}, {"resume_from", ""}, {"resume_step", 0}}),
      rec("ended", {{"attempt", 2}, {"class", "failed"}, {"step", 50}, {"progressed", true}, {"action", "resubmit"}}),
  });
  CHECK(s.proven_checkpoint.empty());  // attempt 2 got past nothing: it started fresh
}

}  // namespace mlsup::test

namespace mlsup::test {

TEST_CASE("reconcile: a pass that saw only a job waiting in the queue says so, and no other does") {
  EngineFixture f;
  auto answered = [](std::vector<slurm::Job> jobs, bool kill = false) {
    World w = world();
    w.jobs = engine::JobsAnswer(std::move(jobs));
    w.kill_switch = kill;
    return w;
  };
  auto paused = with({submitted(1, 42)});
  paused.paused = true;
  auto chain = submitted(1, 42);
  chain.chain = true;
  auto fresh = submitted(1, 42);
  fresh.intent_time = 1000 - 29;  // submitted 29 s before the pass
  auto settled = submitted(1, 42);
  settled.intent_time = 1000 - 30;
  slurm::Job pending = job(42, slurm::JobState::Pending, "Priority");
  engine::Memory told;  // the pending reason already told
  told.pending_reason = "Priority";
  told.attempt = 1;
  struct Row {
    std::string what;
    CampaignState s;
    World w;
    bool queued;
  };
  const std::vector<Row> rows = {
      {"a pending job, nothing decided", with({submitted(1, 42)}), answered({pending}), true},
      {"a running job", with({submitted(1, 42)}), answered({job(42, slurm::JobState::Running)}), false},
      {"a pending job and the kill switch: cancelled", with({submitted(1, 42)}), answered({pending}, true), false},
      {"a pending job of a paused campaign", paused, answered({pending}), false},
      {"a job submitted 29 s ago, pending: looked at every poll_interval", with({fresh}), answered({pending}), false},
      {"a job submitted 30 s ago, pending", with({settled}), answered({pending}), true},
      {"chain mode", with({chain}), answered({pending}), false},
      {"the query failed", with({submitted(1, 42)}),
       [] {
         World w = world();
         w.jobs = engine::JobsAnswer(std::unexpected(slurm::Error{slurm::ErrorKind::Timeout, 0, "timeout"}));
         return w;
       }(),
       false},
      {"nothing submitted yet", with({}), world(), false},
  };
  for (const auto& row : rows) {
    CAPTURE(row.what);
    const auto out = decide(row.s, row.w, f.config, told);
    CAPTURE(kinds(out.intents));
    CHECK(out.queued == row.queued);
  }
}

}  // namespace mlsup::test

namespace mlsup::test {
namespace {

// Spare nodes: attempt 1 of job 42 (n1, the batch host, and n2 train; n3 is the spare), running.
CampaignState spare_campaign() {
  AttemptState a = submitted(1, 42);
  a.step_claimed = true;
  a.step_nodes = {"n1", "n2"};
  return with({a});
}

slurm::Job spare_job(std::string nodes) {
  slurm::Job j = job(42, slurm::JobState::Running);
  j.nodes = std::move(nodes);
  j.batch_host = "n1";
  return j;
}

}  // namespace

TEST_CASE("spare nodes: the next run's nodes keep each rank where it was and put a spare where a node failed") {
  using engine::spare_step_nodes;
  using V = std::vector<std::string>;
  CHECK(spare_step_nodes({"a", "b"}, {"a", "c"}, {}, 2) == V{"a", "c"});         // b left the job
  CHECK(spare_step_nodes({"b", "a"}, {"a", "b", "c"}, {"b"}, 2) == V{"c", "a"});  // b's rank 0 moves, a keeps rank 1
  CHECK(spare_step_nodes({"a", "b"}, {"a", "b", "c"}, {}, 2) == V{"a", "b"});     // nothing failed
  CHECK_FALSE(spare_step_nodes({"a", "b"}, {"a", "b", "c"}, {"a", "b"}, 2));      // one spare for two
  CHECK_FALSE(spare_step_nodes({"a", "b"}, {"a", "b", "c"}, {"c", "b"}, 2));      // the spare is bad too
  CHECK(spare_step_nodes({}, {"a", "b", "c"}, {"a"}, 2) == V{"b", "c"});          // not known: the first good
}

TEST_CASE("spare nodes: a failed run in a job Slurm shrank ends the attempt as a node fault; the job goes on") {
  EngineFixture f("", "slurm: {spare_nodes: 1}\n");
  World w = world();
  w.jobs = engine::JobsAnswer(std::vector<slurm::Job>{spare_job("n[1,3]")});
  w.spare_end = 137;
  const auto r = decide(spare_campaign(), w, f.config);
  REQUIRE(kinds(r.intents) == "Status End");
  const auto& end = std::get<engine::intent::End>(r.intents[1]);
  CHECK(nlohmann::json(end.ended)["class"] == "node_fail");
  CHECK(nlohmann::json(end.ended)["action"] == "resubmit");
  w.jobs = engine::JobsAnswer(std::vector<slurm::Job>{spare_job("n[1-3]")});  // the run failed, its nodes are all there
  CHECK(nlohmann::json(std::get<engine::intent::End>(decide(spare_campaign(), w, f.config).intents[1]).ended)["class"] == "failed");
  w.spare_end = 0;  // a run that succeeded ends the job itself: judged from the job's ending
  CHECK(kinds(decide(spare_campaign(), w, f.config).intents) == "Status");
}

TEST_CASE("spare nodes: a hang's killed run ends the attempt as a hang while the job runs on") {
  EngineFixture f("", "slurm: {spare_nodes: 1}\n");
  CampaignState s = spare_campaign();
  s.attempts[0].cancel_reason = decide::EndClass::Hang;
  s.attempts[0].steps_only = true;
  World w = world();
  w.jobs = engine::JobsAnswer(std::vector<slurm::Job>{spare_job("n[1-3]")});
  const auto r = decide(s, w, f.config);
  REQUIRE(kinds(r.intents) == "Status End");
  CHECK(nlohmann::json(std::get<engine::intent::End>(r.intents[1]).ended)["class"] == "hang");
}

TEST_CASE("spare nodes: the next attempt goes into the running job on the survivor and the spare, else to a new job") {
  EngineFixture f("", "slurm: {spare_nodes: 1, nodes: 2}\n");
  CampaignState s = spare_campaign();
  s.attempts[0].ended = true;
  s.awaiting_submit = true;
  World w = world();
  w.chain = engine::JobsAnswer(std::vector<slurm::Job>{spare_job("n[1,3]")});
  w.nodes = slurm::Result<std::vector<slurm::Node>>(std::vector<slurm::Node>{});
  auto r = decide(s, w, f.config);
  REQUIRE(kinds(r.intents) == "Submit");
  auto sub = std::get<engine::intent::Submit>(r.intents[0]);
  CHECK(sub.attempt == 2);
  CHECK(sub.in_job == slurm::JobId{42});
  CHECK(sub.step_nodes == std::vector<std::string>{"n1", "n3"});
  CHECK(sub.tag == s.attempts[0].tag);  // the job's own tag: a lost intent is adopted by it
  w.chain = engine::JobsAnswer(std::vector<slurm::Job>{spare_job("n[1-2]")});  // n2 still in the job, but down
  w.nodes = slurm::Result<std::vector<slurm::Node>>(std::vector<slurm::Node>{{.name = "n2", .state = "DOWN"}});
  r = decide(s, w, f.config);
  REQUIRE(kinds(r.intents) == "Report Submit");  // no spare left: a new job, the old one told to end
  sub = std::get<engine::intent::Submit>(r.intents.back());
  CHECK_FALSE(sub.in_job);
  CHECK(sub.stop_job == slurm::JobId{42});
}

}  // namespace mlsup::test

namespace mlsup::test {
namespace {

// Checkpoints at steps, complete and proven, then one being written (no marker yet) at writing.
checkpoint::Scan saved(std::vector<long long> steps, long long writing) {
  checkpoint::Scan scan;
  for (long long step : steps) scan.checkpoints.push_back({"/ckpt/s" + std::to_string(step), step, true, "", true});
  scan.checkpoints.push_back({"/ckpt/s" + std::to_string(writing), writing, false, "has no COMPLETE inside", false});
  return scan;
}

// The steps of the checkpoints the pass's Prune deletes (none without a Prune).
std::vector<long long> pruned(const engine::Reconciled& r) {
  std::vector<long long> steps;
  for (const auto& i : r.intents)
    if (const auto* p = std::get_if<engine::intent::Prune>(&i))
      for (const auto& c : p->old) steps.push_back(c.step);
  return steps;
}

}  // namespace

TEST_CASE("reconcile: while an attempt runs, checkpoint.keep prunes, never what it started from nor a save being written") {
  EngineFixture f;
  f.config.checkpoint.keep = 1;
  AttemptState a = submitted(1, 42);
  a.resume_from = "/ckpt/s100";
  const CampaignState s = with({a});
  World w = world();
  w.jobs = engine::JobsAnswer(std::vector<slurm::Job>{job(42, slurm::JobState::Running)});
  w.heartbeat = std::map<std::string, std::string>{{"n1.0", "350"}};
  w.checkpoints = saved({100, 200, 250, 300}, 400);
  const auto r = decide(s, w, f.config);
  // 100 it started from, 300 the newest, 250 the one before it (a fallback's, should 300 be broken), 400 being written
  CHECK(pruned(r) == std::vector<long long>{200});
  w.now = {1005, 505, "host/boot"};
  CHECK(pruned(decide(s, w, f.config, r.memory)).empty());  // looked at again 10 s after, not every pass
  w.now = {1011, 511, "host/boot"};
  CHECK(pruned(decide(s, w, f.config, r.memory)) == std::vector<long long>{200});
  f.config.checkpoint.keep = 0;
  CHECK(pruned(decide(s, w, f.config)).empty());
}

TEST_CASE("reconcile: chain mode keeps what next.env names and what is written into it, while a task runs") {
  EngineFixture f;
  f.config.checkpoint.keep = 1;
  AttemptState a = submitted(1, 40);
  a.chain = true;
  a.task_job_id = 41;
  a.resume_from = "/ckpt/s100";
  const CampaignState s = with({a});
  World w = world();
  slurm::Job task = job(41, slurm::JobState::Running);
  task.array_task_id = 1;
  w.jobs = engine::JobsAnswer(std::vector<slurm::Job>{task});
  w.heartbeat = std::map<std::string, std::string>{{"n1.0", "450"}};
  w.checkpoints = saved({100, 200, 300, 350, 400}, 500);
  w.handed = "export MLSUP_CAMPAIGN=t\nexport MLSUP_RESUME_FROM=" + util::shell_quote("/ckpt/s200") + "\n";
  const auto r = decide(s, w, f.config);
  CHECK(pruned(r) == std::vector<long long>{300});  // 200: a task started while mlsup is away resumes from it; 350: a fallback's
  bool wrote = false;
  for (const auto& i : r.intents)
    if (const auto* v = std::get_if<engine::intent::ChainValues>(&i)) wrote = v->resume_from == "/ckpt/s400";
  CHECK(wrote);
}

TEST_CASE("reconcile: a completed campaign keeps checkpoint.keep checkpoints, no more") {
  EngineFixture f;
  f.config.checkpoint.keep = 2;
  AttemptState a = submitted(1, 42);
  a.resume_from = "/ckpt/s100";
  const CampaignState s = with({a});
  World w = world();
  slurm::Job done = job(42, slurm::JobState::Completed);
  w.jobs = engine::JobsAnswer(std::vector<slurm::Job>{done});
  w.heartbeat = std::map<std::string, std::string>{{"n1.0", "600"}};
  w.checkpoints = saved({100, 200, 300, 400, 500, 600}, 700);
  w.ending = engine::EndingOutput{};
  w.nodes = slurm::Result<std::vector<slurm::Node>>(std::vector<slurm::Node>{});
  const auto r = decide(s, w, f.config);
  CHECK(pruned(r) == std::vector<long long>{200, 300, 400});  // 100 its start, 500 and 600 kept
}

}  // namespace mlsup::test
