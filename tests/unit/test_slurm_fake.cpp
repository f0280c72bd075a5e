#include <doctest/doctest.h>

#include "slurm/fake_client.h"

using namespace mlsup::slurm;

TEST_CASE("the fake client keeps a job table, logs every call and fails on demand") {
  FakeClient fake;
  const JobId id = fake.submit({.options = {"--parsable", "--comment=mlsup:demo:1"}, .script_path = "/x"}).value();
  CHECK(fake.find_by_tag("mlsup:demo:").value().size() == 1);
  fake.set_state(id, JobState::Running, 0, "n1");
  CHECK(fake.jobs({id}).value().front().state == JobState::Running);
  fake.next_errors.push_back(Error{ErrorKind::Unreachable, 0, "down"});
  CHECK(fake.jobs({id}).error().kind == ErrorKind::Unreachable);
  CHECK(fake.jobs({id}).value().front().nodes == "n1");
  CHECK(fake.cancel(id).has_value());
  CHECK(fake.jobs({id}).value().front().state == JobState::Cancelled);
  CHECK(fake.cancel(999).error().kind == ErrorKind::UnknownJob);
  CHECK(fake.set_excluded(id, "n2").has_value());
  CHECK(fake.calls == std::vector<std::string>{"submit", "find_by_tag mlsup:demo:", "jobs 100", "jobs 100", "jobs 100",
                                               "cancel 100", "jobs 100", "cancel 999", "set_excluded n2 100"});
}
