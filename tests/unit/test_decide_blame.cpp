#include <doctest/doctest.h>

#include "decide/blame.h"
#include "decide/ledger.h"

using namespace mlsup::decide;

namespace {

std::vector<std::string> names(const std::vector<Blamed>& b) {
  std::vector<std::string> out;
  for (const auto& x : b) out.push_back(x.node);
  return out;
}

}  // namespace

TEST_CASE("a node that does not answer is blamed; one Slurm already keeps jobs off is not") {
  BlameInput in{.cls = EndClass::NodeFail,
                .job_nodes = {{"n1"}, {"n2", false, true}, {"n3", true, true}}};
  CHECK(names(blame(in)) == std::vector<std::string>{"n2"});
  in.cls = EndClass::Timeout;
  CHECK(blame(in).empty());
  in.cls = EndClass::CancelledByPerson;
  CHECK(blame(in).empty());
}

TEST_CASE("the node common to repeated failures, never every node of the job") {
  BlameInput in{.cls = EndClass::Failed, .job_nodes = {{"n2"}, {"n3"}}, .past = {{100, {"n1", "n3"}}}, .now = 200};
  CHECK(names(blame(in)) == std::vector<std::string>{"n3"});
  in.past = {{100, {"n2", "n3"}}};  // the same two nodes again: nothing sets one apart
  CHECK(blame(in).empty());
  in.past = {{100, {"n1", "n3"}}};
  in.now = 100 + 6 * 3600;  // the earlier failure left the window
  CHECK(blame(in).empty());
  in.now = 200;
  in.repeat_threshold = 3;
  CHECK(blame(in).empty());
  in.past.push_back({150, {"n3", "n4"}});
  CHECK(names(blame(in)) == std::vector<std::string>{"n3"});
}

TEST_CASE("direct evidence wins over the repeated-failure rule") {
  BlameInput in{.cls = EndClass::Failed, .job_nodes = {{"n2", false, true}, {"n3"}}, .past = {{100, {"n3"}}}, .now = 200};
  CHECK(names(blame(in)) == std::vector<std::string>{"n2"});
}

TEST_CASE("the ledger: unexpired entries, newest first, within the cap") {
  const std::vector<Exclusion> ledger = {
      {"n1", "old", 100, 1000}, {"n2", "expired", 200, 300}, {"n3", "new", 400, 2000}, {"n1", "again", 500, 2000}};
  CHECK(excluded_nodes(ledger, 350, -1) == std::vector<std::string>{"n1", "n3"});
  CHECK(excluded_nodes(ledger, 350, 1) == std::vector<std::string>{"n1"});
  CHECK(excluded_nodes(ledger, 350, 0).empty());
  CHECK(excluded_nodes(ledger, 5000, -1).empty());
  CHECK(exclusion_cap(0, 4, 2) == 2);
  CHECK(exclusion_cap(0, 2, 4) == 0);
  CHECK(exclusion_cap(3, 4, 2) == 3);
}
