#include <doctest/doctest.h>

#include <slurm/slurm_errno.h>

#include "config/schema.h"
#include "decide/submit_retry.h"

using namespace mlsup::decide;
using mlsup::config::Seconds;
using mlsup::slurm::ErrorKind;

namespace {

mlsup::config::Config config() {
  auto c = mlsup::config::defaults();
  c.policy.backoff_initial = Seconds(10);
  c.policy.backoff_max = Seconds(35);
  c.policy.submit_retry_for = Seconds(100);
  c.policy.submit_unknown_grace = Seconds(0);  // the backoff alone; the grace has a test of its own
  return c;
}

// Failures of one kind at the given times.
std::vector<SubmitFailure> failures(ErrorKind kind, const std::vector<double>& times) {
  std::vector<SubmitFailure> out;
  for (double t : times) out.push_back({t, kind, "sbatch: error: " + std::to_string(static_cast<int>(t))});
  return out;
}

}  // namespace

TEST_CASE("submit retry: the next try after each failure, growing, capped, and the stop") {
  const auto c = config();
  struct Row {
    ErrorKind kind;
    std::vector<double> times;
    double now;
    SubmitStep step;
    double next_try;  // Try, Wait
    bool alert;
  };
  const Row table[] = {
      // Nothing failed: submit now.
      {ErrorKind::Other, {}, 0, SubmitStep::Try, 0, false},
      // 10 s after the first failure, then 20, then 35 (backoff_max), and so on.
      {ErrorKind::Other, {0}, 5, SubmitStep::Wait, 10, false},
      {ErrorKind::Other, {0}, 10, SubmitStep::Try, 10, false},
      {ErrorKind::Other, {0, 10}, 12, SubmitStep::Wait, 30, false},
      {ErrorKind::Other, {0, 10, 30}, 30, SubmitStep::Wait, 65, true},  // the third failure: alert
      {ErrorKind::Other, {0, 10, 30, 65}, 80, SubmitStep::Wait, 100, false},  // the last try comes when the time is up
      {ErrorKind::Other, {0, 10, 30, 65, 100}, 100, SubmitStep::Stop, 0, false},
      // The time passed with no try in between (nobody supervised): one more try, then the stop.
      {ErrorKind::Other, {0}, 5000, SubmitStep::Try, 10, false},
      {ErrorKind::Other, {0, 5000}, 5000, SubmitStep::Stop, 0, false},
      // An accounting/QOS refusal is retried and given up on alike.
      {ErrorKind::OverLimit, {0, 10}, 30, SubmitStep::Try, 30, false},
      {ErrorKind::OverLimit, {0, 10, 30, 65, 100}, 100, SubmitStep::Stop, 0, false},
      // An unreachable, slow or busy controller is retried with the same backoff, without end.
      {ErrorKind::Unreachable, {0, 10, 30, 65, 100, 135}, 140, SubmitStep::Wait, 170, false},
      {ErrorKind::Timeout, {0, 10, 30}, 65, SubmitStep::Try, 65, true},
      {ErrorKind::Busy, {0, 1000}, 1000, SubmitStep::Wait, 1020, false},
      // A request retrying cannot fix stops at once.
      {ErrorKind::Rejected, {0}, 0, SubmitStep::Stop, 0, false},
      {ErrorKind::PermissionDenied, {0}, 0, SubmitStep::Stop, 0, false},
  };
  for (const auto& row : table) {
    const auto f = failures(row.kind, row.times);
    CAPTURE(mlsup::slurm::error_kind_name(row.kind));
    CAPTURE(f.size());
    CAPTURE(row.now);
    const auto r = submit_retry(f, c, row.now);
    CHECK(r.step == row.step);
    if (row.step != SubmitStep::Stop) CHECK(r.next_try == doctest::Approx(row.next_try));
    CHECK(r.alert == row.alert);
    CHECK_FALSE(r.reason.empty());
  }
}

TEST_CASE("submit retry: after a failure of unknown outcome, no try before the grace is over; a refusal needs none") {
  auto c = config();
  c.policy.submit_unknown_grace = Seconds(60);
  CHECK(submit_retry(failures(ErrorKind::Timeout, {0}), c, 10).next_try == doctest::Approx(60));
  CHECK(submit_retry(failures(ErrorKind::Unreachable, {0}), c, 10).step == SubmitStep::Wait);
  CHECK(submit_retry(failures(ErrorKind::Other, {0}), c, 60).step == SubmitStep::Try);
  CHECK(submit_retry(failures(ErrorKind::Busy, {0}), c, 10).next_try == doctest::Approx(10));
  CHECK(submit_retry(failures(ErrorKind::OverLimit, {0}), c, 10).step == SubmitStep::Try);
}

TEST_CASE("submit retry: the stop says what Slurm said last and for how long it was retried") {
  auto c = config();
  c.policy.submit_retry_for = Seconds(3600);
  std::vector<SubmitFailure> f = {{0, ErrorKind::Other, "first"}, {3600, ErrorKind::OverLimit, "Job violates accounting/QOS policy"}};
  const auto r = submit_retry(f, c, 3600);
  REQUIRE(r.step == SubmitStep::Stop);
  CHECK(r.reason.find("Job violates accounting/QOS policy") != std::string::npos);
  CHECK(r.reason.find("1h") != std::string::npos);
  CHECK(r.reason.find("2 tries") != std::string::npos);
  const auto refused = submit_retry({{0, ErrorKind::Rejected, "Invalid partition name specified"}}, c, 0);
  CHECK(refused.reason == "Slurm refused the job: Invalid partition name specified");
}

TEST_CASE("submit retry: the window counts from the first failure of the streak, whatever its kind") {
  const auto c = config();
  const std::vector<SubmitFailure> f = {{0, ErrorKind::Timeout, "timed out"}, {150, ErrorKind::Other, "odd"}};
  CHECK(submit_retry(f, c, 150).step == SubmitStep::Stop);
  const std::vector<SubmitFailure> g = {{0, ErrorKind::Other, "odd"}, {150, ErrorKind::Unreachable, "down"}};
  CHECK(submit_retry(g, c, 150).step == SubmitStep::Wait);  // the controller is away: never a reason to stop
}

TEST_CASE("an accounting/QOS refusal has a kind of its own, from both backends, and its name reads back") {
  const std::string said =
      "sbatch: error: AssocMaxSubmitJobLimit\nsbatch: error: Batch job submission failed: Job violates accounting/QOS "
      "policy (job submit limit, user's size and/or time limits)";
  CHECK(mlsup::slurm::classify_message(said) == ErrorKind::OverLimit);
  CHECK(mlsup::slurm::classify_errno(ESLURM_ACCOUNTING_POLICY) == ErrorKind::OverLimit);
  CHECK_FALSE(mlsup::slurm::Error{ErrorKind::OverLimit}.transient());
  for (auto k : {ErrorKind::Unreachable, ErrorKind::Timeout, ErrorKind::UnknownJob, ErrorKind::PermissionDenied,
                 ErrorKind::Rejected, ErrorKind::OverLimit, ErrorKind::Busy, ErrorKind::Other})
    CHECK(mlsup::slurm::error_kind_from_name(mlsup::slurm::error_kind_name(k)) == k);
  CHECK(mlsup::slurm::error_kind_from_name("no such kind") == ErrorKind::Other);
}
