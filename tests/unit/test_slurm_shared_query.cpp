#include <doctest/doctest.h>

#include "slurm/fake_client.h"
#include "slurm/shared_query.h"

using namespace mlsup::slurm;

namespace {

std::size_t loads(const FakeClient& fake) {
  std::size_t n = 0;
  for (const auto& c : fake.calls) n += c == "find_by_tag " ? 1 : 0;
  return n;
}

}  // namespace

TEST_CASE("shared query: every campaign's job questions of one pass cost one load of the user's jobs") {
  FakeClient fake;
  SharedQuery shared(fake);
  std::vector<JobId> ids;
  for (int i = 0; i < 20; ++i)
    ids.push_back(fake.submit({.options = {"--comment=mlsup:c" + std::to_string(i) + ":x:1"}, .script_path = "/x"}).value());
  fake.calls.clear();
  shared.new_pass();
  for (int i = 0; i < 20; ++i) {
    const auto mine = shared.jobs({ids[static_cast<std::size_t>(i)]}).value();
    REQUIRE(mine.size() == 1);
    CHECK(mine.front().job_id == ids[static_cast<std::size_t>(i)]);
    CHECK(shared.find_by_tag("mlsup:c" + std::to_string(i) + ":x:1").value().size() == 1);
  }
  CHECK(loads(fake) == 1);
  CHECK(fake.calls.size() == 1);
  CHECK(shared.loads() == 1);

  SUBCASE("the next pass loads again") {
    shared.new_pass();
    (void)shared.jobs({ids[0]});
    CHECK(loads(fake) == 2);
  }
  SUBCASE("a change to a job is seen by what is asked after it") {
    fake.set_state(ids[3], JobState::Running);
    CHECK(shared.jobs({ids[3]}).value().front().state == JobState::Pending);  // the pass's load
    REQUIRE(shared.cancel(ids[3]).has_value());
    CHECK(shared.jobs({ids[3]}).value().front().state == JobState::Cancelled);
    const JobId fresh = shared.submit({.options = {"--comment=mlsup:new:x:1"}, .script_path = "/x"}).value();
    CHECK(shared.jobs({fresh}).value().size() == 1);
    CHECK(loads(fake) == 3);
  }
  SUBCASE("a failed load is the answer of the whole pass, and the next pass asks again") {
    shared.new_pass();
    fake.next_errors.push_back(Error{ErrorKind::Unreachable, 0, "down"});
    CHECK(shared.jobs({ids[0]}).error().kind == ErrorKind::Unreachable);
    CHECK(shared.find_by_tag("mlsup:c1:").error().kind == ErrorKind::Unreachable);
    shared.new_pass();
    CHECK(shared.jobs({ids[0]}).has_value());
  }
}

TEST_CASE("shared query: failed calls to Slurm are counted by kind, a failed load once for all who asked it") {
  FakeClient fake;
  SharedQuery shared(fake);
  const JobId id = shared.submit({.options = {"--comment=mlsup:c:x:1"}, .script_path = "/x"}).value();
  CHECK(shared.errors().empty());
  shared.new_pass();
  fake.next_errors.push_back(Error{ErrorKind::Unreachable, 0, "down"});
  CHECK(!shared.jobs({id}));
  CHECK(!shared.find_by_tag("mlsup:c:"));
  fake.next_errors.push_back(Error{ErrorKind::Busy, 0, "later"});
  CHECK(!shared.cancel(id));
  fake.next_errors.push_back(Error{ErrorKind::Timeout, 0, "slow"});
  CHECK(!shared.nodes());
  const auto errors = shared.errors();
  CHECK(errors.at(ErrorKind::Unreachable) == 1);
  CHECK(errors.at(ErrorKind::Busy) == 1);
  CHECK(errors.at(ErrorKind::Timeout) == 1);
  CHECK(errors.size() == 3);
}
