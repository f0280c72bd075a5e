// Submissions that meet trouble: a template that is briefly unreadable or invalid, and sbatch
// refusals that may pass later (retried with a growing delay, then given up on).
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>
#include <slurm/slurm_errno.h>

#include "config/load.h"
#include "decide/submit_retry.h"
#include "campaign/campaign.h"
#include "campaign/template_snapshot.h"
#include "engine_fixture.h"
#include "slurm/fake_client.h"

using namespace mlsup;
using mlsup::test::EngineFixture;
using mlsup::test::slurp;
using nlohmann::json;
using slurm::ErrorKind;
using slurm::JobState;

namespace {

const std::string kPolicyRefusal =
    "sbatch: error: Batch job submission failed: Job violates accounting/QOS policy (job submit limit, user's size "
    "and/or time limits)";

// The JSON lines of a file (the event log, the journal).
std::vector<json> lines_of(const std::string& path) {
  std::vector<json> out;
  std::istringstream in(slurp(path));
  for (std::string line; std::getline(in, line);)
    if (auto j = json::parse(line, nullptr, false); j.is_object()) out.push_back(j);
  return out;
}

std::vector<json> events_named(const EngineFixture& f, const std::string& name) {
  std::vector<json> out;
  for (const auto& e : lines_of(f.config.state_dir + "/events.jsonl"))
    if (e.value("event", "") == name) out.push_back(e);
  return out;
}

std::vector<json> records_of(const EngineFixture& f, const std::string& type) {
  std::vector<json> out;
  for (const auto& r : lines_of(f.config.state_dir + "/journal.jsonl"))
    if (r.value("type", "") == type) out.push_back(r);
  return out;
}

std::size_t alerts_of(const EngineFixture& f, const std::string& name) {
  const auto all = events_named(f, name);
  return static_cast<std::size_t>(std::count_if(all.begin(), all.end(), [](const json& e) { return e.value("alert", false); }));
}

std::string script_of(const EngineFixture& f, int attempt) {
  return slurp(f.config.state_dir + "/attempts/" + std::to_string(attempt) + "/job.sbatch");
}

std::size_t calls_to(const EngineFixture& f, const std::string& name) {
  return static_cast<std::size_t>(std::count_if(f.fake.calls.begin(), f.fake.calls.end(), [&](const std::string& c) {
    return c.substr(0, c.find(' ')) == name;
  }));
}

// Submits attempt 1 and lets it fail, so that its resubmission is due once the clock has moved past the backoff.
void fail_first_attempt(EngineFixture& f, engine::Campaign& c) {
  f.pass(c);
  REQUIRE(f.submits() == 1);
  f.fake.set_state(f.fake.table.begin()->first, JobState::Failed, 1);
  f.pass(c);  // ended; resubmission decided with a 5 s backoff
  f.clock += 6;
}

void write_template(const EngineFixture& f, const std::string& text) { std::ofstream(f.config.template_path) << text; }

}  // namespace

TEST_CASE("a template deleted while a resubmission is due: the resubmission renders from the snapshot, with an alert") {
  EngineFixture f;
  auto c = f.open();
  fail_first_attempt(f, *c);
  std::filesystem::remove(f.config.template_path);
  const auto out = f.pass(*c);
  CHECK_FALSE(out.has_value());
  CHECK(f.submits() == 2);
  CHECK(script_of(f, 2).find("srun true") != std::string::npos);
  CHECK(alerts_of(f, "template-unusable") == 1);
}

TEST_CASE("a template made invalid while a resubmission is due: the resubmission renders from the snapshot, with an alert") {
  EngineFixture f;
  auto c = f.open();
  fail_first_attempt(f, *c);
  write_template(f, "#!/bin/bash\n#SBATCH --nodes=1\nsrun {{nope}}\n");
  const auto out = f.pass(*c);
  CHECK_FALSE(out.has_value());
  CHECK(f.submits() == 2);
  CHECK(script_of(f, 2).find("srun true") != std::string::npos);
  const auto alerts = events_named(f, "template-unusable");
  REQUIRE(alerts.size() == 1);
  CHECK(alerts[0].value("alert", false));
  CHECK(alerts[0].value("detail", "").find("nope") != std::string::npos);
}

TEST_CASE("a new process (tick) that finds the template unreadable at its start submits from the stored snapshot") {
  EngineFixture f;
  {
    auto c = f.open();
    f.pass(*c);
    REQUIRE(f.submits() == 1);
  }
  f.fake.set_state(f.fake.table.begin()->first, JobState::Failed, 1);
  std::filesystem::remove(f.config.template_path);
  {
    auto c = f.open();
    CHECK_FALSE(f.pass(*c).has_value());  // ended; resubmission decided with a 5 s backoff
  }
  f.clock += 6;
  auto c = f.open();
  CHECK_FALSE(f.pass(*c).has_value());
  CHECK(f.submits() == 2);
  CHECK(script_of(f, 2).find("srun true") != std::string::npos);
  CHECK(alerts_of(f, "template-unusable") >= 1);
}

TEST_CASE("a valid edit of the template is taken for the next submission and becomes the snapshot") {
  EngineFixture f;
  auto c = f.open();
  fail_first_attempt(f, *c);
  write_template(f, "#!/bin/bash\n#SBATCH --nodes=1\nsrun edited\n");
  f.pass(*c);
  REQUIRE(f.submits() == 2);
  CHECK(script_of(f, 2).find("srun edited") != std::string::npos);
  f.fake.set_state(f.fake.table.rbegin()->first, JobState::Failed, 1);
  f.pass(*c);
  f.clock += 6;
  std::filesystem::remove(f.config.template_path);
  f.pass(*c);
  REQUIRE(f.submits() == 3);
  CHECK(script_of(f, 3).find("srun edited") != std::string::npos);
}

TEST_CASE("a template that never rendered: nothing is submitted and the campaign waits, with an alert, until it does") {
  EngineFixture f;
  write_template(f, "#!/bin/bash\nsrun {{nope}}\n");
  auto c = f.open();
  for (int i = 0; i < 3; ++i) {
    CHECK_FALSE(f.pass(*c).has_value());
    f.clock += 1;
  }
  CHECK(f.submits() == 0);
  CHECK(alerts_of(f, "template-unusable") == 1);  // once, not once per pass
  write_template(f, "#!/bin/bash\nsrun fixed\n");
  CHECK_FALSE(f.pass(*c).has_value());
  REQUIRE(f.submits() == 1);
  CHECK(script_of(f, 1).find("srun fixed") != std::string::npos);
}

TEST_CASE("a reload (SIGHUP) looks at the template again: one that does not render is told, and the snapshot kept") {
  EngineFixture f;
  auto c = f.open();
  fail_first_attempt(f, *c);
  write_template(f, "#!/bin/bash\nsrun {{nope}}\n");
  auto changed = f.config;
  changed.policy.backoff_max = config::Seconds(7);
  c->reload(changed);
  const auto reloaded = events_named(f, "config-reloaded");
  REQUIRE(reloaded.size() == 1);
  CHECK(reloaded[0]["changed"] == json{"policy.backoff_max"});
  CHECK(alerts_of(f, "template-unusable") == 1);
  CHECK_FALSE(f.pass(*c).has_value());
  REQUIRE(f.submits() == 2);
  CHECK(script_of(f, 2).find("srun true") != std::string::npos);
  CHECK(alerts_of(f, "template-unusable") == 1);  // the same problem is told once per process
}

TEST_CASE("run and tick load the config of a campaign that has a template snapshot even while its template is gone") {
  EngineFixture f;
  const std::string text = slurp(f.config.template_path);
  std::filesystem::remove(f.config.template_path);
  CHECK_FALSE(engine::load_config_to_supervise(f.config.source_file).has_value());  // no snapshot: an error, as before
  write_template(f, text);
  f.open();  // takes the snapshot
  std::filesystem::remove(f.config.template_path);
  CHECK(engine::load_config_to_supervise(f.config.source_file).has_value());
  CHECK_FALSE(config::load_config_file(f.config.source_file).has_value());  // `mlsup validate` still says so
}

TEST_CASE("an unclassified sbatch error is retried with a growing, capped delay, alerted once, then given up on") {
  EngineFixture f;
  f.config.policy.backoff_max = config::Seconds(80);
  f.config.policy.submit_unknown_grace = config::Seconds(1);  // the backoff alone, here
  auto c = f.open();
  const std::string said = "sbatch: error: Batch job submission failed: Unexpected message received";
  f.fake.always_failing["submit"] = {ErrorKind::Other, 0, said};
  std::vector<double> tries;
  std::optional<engine::Outcome> out;
  const double start = f.clock;
  for (int t = 0; t < 3 * 3600 && !out; ++t) {
    const auto before = calls_to(f, "submit");
    out = f.pass(*c);
    if (calls_to(f, "submit") > before) tries.push_back(f.clock);
    f.clock += 1;
  }
  REQUIRE(tries.size() >= 4);
  std::vector<double> gaps;
  for (std::size_t i = 1; i < tries.size(); ++i) gaps.push_back(tries[i] - tries[i - 1]);
  CHECK(gaps.front() >= 5);
  CHECK(gaps[1] > gaps[0]);  // growing
  CHECK(*std::max_element(gaps.begin(), gaps.end()) <= 80);  // capped at policy.backoff_max
  for (std::size_t i = 1; i + 1 < gaps.size(); ++i) CHECK(gaps[i] >= gaps[i - 1]);
  // Given up on after policy.submit_retry_for (1h by default), not before.
  REQUIRE(out.has_value());
  CHECK(out->exit_code == 14);
  CHECK(tries.back() - start >= 3600);
  CHECK(tries.back() - start <= 3600 + 80);
  CHECK(out->reason.find("Unexpected message received") != std::string::npos);
  CHECK(out->reason.find("1h") != std::string::npos);
  // Alerted once, when it began failing repeatedly (the third failure), then at the stop.
  const auto failed = events_named(f, "submit-failed");
  REQUIRE(failed.size() == tries.size());
  CHECK(alerts_of(f, "submit-failed") == 1);
  CHECK(failed[2].value("alert", false));
  CHECK(alerts_of(f, "stopped") == 1);
  // Each failure is a fact in the journal; the lookup by tag (controller, then accounting) comes before
  // every resubmission.
  const auto facts = records_of(f, "submit-failed");
  REQUIRE(facts.size() == tries.size());
  CHECK(facts[0].value("attempt", 0) == 1);
  CHECK(facts[0].value("kind", "") == "other");
  CHECK(facts[0].value("message", "") == said);
  const auto first = std::find(f.fake.calls.begin(), f.fake.calls.end(), "submit");
  for (auto it = first + 1; it != f.fake.calls.end(); ++it)
    if (*it == "submit") CHECK(((it - 1)->rfind("accounted_by_tag ", 0) == 0 && (it - 2)->rfind("find_by_tag ", 0) == 0));
}

TEST_CASE("the delay after a failed submission holds in a new process (tick) too, and the tag is looked up first") {
  EngineFixture f;
  {
    auto c = f.open();
    f.fake.next_errors.push_back({ErrorKind::Busy, 0, "sbatch: error: Resource temporarily unavailable"});
    f.pass(*c);
    CHECK(calls_to(f, "submit") == 1);
  }
  f.clock += 1;
  {
    auto c = f.open();
    f.pass(*c);
    CHECK(calls_to(f, "submit") == 1);  // still within the 5 s delay
  }
  f.clock += 5;
  auto c = f.open();
  f.pass(*c);
  CHECK(calls_to(f, "submit") == 2);
  CHECK(f.submits() == 1);
  const auto submit = std::find(f.fake.calls.rbegin(), f.fake.calls.rend(), "submit");
  REQUIRE(submit != f.fake.calls.rend());
  CHECK(std::any_of(submit + 1, f.fake.calls.rend(), [](const std::string& call) { return call.rfind("find_by_tag mlsup:t:", 0) == 0 && call.back() == '1'; }));
}

TEST_CASE("an accounting-policy refusal (often a momentary submit limit) is retried, not the end of the campaign") {
  // Slurm gives one errno for every such refusal; both backends must sort it alike, and apart from a bad request.
  CHECK(slurm::classify_errno(ESLURM_ACCOUNTING_POLICY) == slurm::classify_message(kPolicyRefusal));
  CHECK(slurm::classify_message(kPolicyRefusal) != ErrorKind::Rejected);
  EngineFixture f;
  auto c = f.open();
  fail_first_attempt(f, *c);
  f.fake.next_errors.push_back({slurm::classify_message(kPolicyRefusal), 0, kPolicyRefusal});
  CHECK_FALSE(f.pass(*c).has_value());
  CHECK(f.submits() == 1);
  f.clock += 5;
  CHECK_FALSE(f.pass(*c).has_value());
  CHECK(f.submits() == 2);
}

TEST_CASE("a refusal retrying cannot help (an invalid account) still stops the campaign at once") {
  EngineFixture f;
  auto c = f.open();
  const std::string said = "sbatch: error: Batch job submission failed: Invalid account or account/partition combination specified";
  f.fake.next_errors.push_back({slurm::classify_message(said), 0, said});
  const auto out = f.pass(*c);
  REQUIRE(out.has_value());
  CHECK(out->exit_code == 14);
  CHECK(out->reason.find("Invalid account") != std::string::npos);
  CHECK(records_of(f, "submit-failed").size() == 1);
}

namespace {

// The job a controller committed though sbatch did not say so: it carries attempt 1's tag.
void commit_late(EngineFixture& f, slurm::JobId id) {
  const auto intents = records_of(f, "submit-intent");
  REQUIRE(!intents.empty());
  slurm::Job job;
  job.job_id = id;
  job.comment = intents.front().value("tag", "");
  job.state = JobState::Pending;
  f.fake.table[id] = job;
}

}  // namespace

TEST_CASE("an sbatch that timed out may have created the job: no second sbatch while it may still show up; it is adopted") {
  EngineFixture f;
  auto c = f.open();
  f.fake.next_errors.push_back({ErrorKind::Timeout, 0, "sbatch did not finish in time"});
  f.pass(*c);
  REQUIRE(calls_to(f, "submit") == 1);
  CHECK(records_of(f, "submit-failed").front().value("outcome", "") == "unknown");
  for (int t = 0; t < 40; ++t) {  // the backoff (5 s) is long over; the grace (1m) is not
    f.clock += 1;
    CHECK_FALSE(f.pass(*c).has_value());
  }
  CHECK(calls_to(f, "submit") == 1);
  commit_late(f, 555);  // the controller's commit shows 41 s on
  f.clock += 1;
  f.pass(*c);
  CHECK(calls_to(f, "submit") == 1);
  const auto adopted = records_of(f, "adopted");
  REQUIRE(adopted.size() == 1);
  CHECK(adopted.front().value("job_id", 0) == 555);
}

TEST_CASE("after an sbatch of unknown outcome, the attempt is submitted again once its tag stayed absent for the grace, in every process") {
  EngineFixture f;
  const double failed_at = f.clock;
  {
    auto c = f.open();
    f.fake.next_errors.push_back({ErrorKind::Unreachable, 0, "Zero Bytes were transmitted or received"});
    f.pass(*c);
  }
  double second = 0;
  for (int t = 0; t < 120 && second == 0; ++t) {
    f.clock += 1;
    auto c = f.open();  // a tick: a new process each pass
    f.pass(*c);
    if (calls_to(f, "submit") == 2) second = f.clock;
  }
  CHECK(second >= failed_at + 60);
  CHECK(second <= failed_at + 62);
  CHECK(f.submits() == 1);
  // Every sbatch after the first came after a look for the tag, in the controller and in accounting.
  const auto last = std::find(f.fake.calls.rbegin(), f.fake.calls.rend(), "submit");
  REQUIRE(last + 2 < f.fake.calls.rend());
  CHECK((last + 1)->rfind("accounted_by_tag ", 0) == 0);
  CHECK((last + 2)->rfind("find_by_tag ", 0) == 0);
}

TEST_CASE("a refusal says the job does not exist: a busy controller's submission is tried again after the backoff alone") {
  EngineFixture f;
  auto c = f.open();
  f.fake.next_errors.push_back({ErrorKind::Busy, 0, "Resource temporarily unavailable"});
  f.pass(*c);
  CHECK(records_of(f, "submit-failed").front().value("outcome", "") == "refused");
  f.clock += 6;
  f.pass(*c);
  CHECK(calls_to(f, "submit") == 2);
  CHECK(f.submits() == 1);
}

TEST_CASE("outcome_unknown: what sbatch's failure says of the job") {
  CHECK(decide::outcome_unknown(ErrorKind::Timeout));
  CHECK(decide::outcome_unknown(ErrorKind::Unreachable));
  CHECK(decide::outcome_unknown(ErrorKind::Other));
  for (auto k : {ErrorKind::Busy, ErrorKind::OverLimit, ErrorKind::Rejected, ErrorKind::PermissionDenied, ErrorKind::UnknownJob})
    CHECK_FALSE(decide::outcome_unknown(k));
}

TEST_CASE("run: a submission that must wait for its sbatch turn journals nothing and holds no pass until the turn comes") {
  EngineFixture f;
  std::vector<double> turns{2.5};  // the first turn is 2.5 s away
  int reserved = 0;
  f.reserve_submit = [&] { return reserved < static_cast<int>(turns.size()) ? turns[reserved++] : 0.0; };
  auto c = f.open();
  f.pass(*c);
  CHECK(f.submits() == 0);
  CHECK(reserved == 1);
  CHECK(c->submit_turn_in() == doctest::Approx(2.5));
  CHECK(f.told(events::SubmitPaced::kKind, "reason", "waits its turn"));
  const std::string journal = slurp(f.config.dir().journal());
  CHECK(journal.find("submit-intent") == std::string::npos);  // a supervisor that dies now leaves nothing to recover
  f.clock += 1;
  f.pass(*c);
  CHECK(f.submits() == 0);
  CHECK(reserved == 1);  // the turn reserved is kept, not taken again
  f.clock += 1.5;
  f.pass(*c);
  CHECK(f.submits() == 1);
  CHECK_FALSE(c->submit_turn_in().has_value());
  CHECK(reserved == 1);  // send() waits for no second turn
}
