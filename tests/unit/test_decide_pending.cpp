// A pending job's step as a table: Slurm's reason and the waits in, wait / relax / alert out.
#include <doctest/doctest.h>

#include "decide/pending.h"

using namespace mlsup::decide;

TEST_CASE("pending: the step for each reason and wait") {
  struct Row {
    const char* reason;
    bool exclusions;
    double unavailable_for, pending_for;
    bool alerted;
    PendingStep step;
  };
  const Row rows[] = {
      {"ReqNodeNotAvail, UnavailableNodes:n2", true, 61, 61, false, PendingStep::Relax},
      {"ReqNodeNotAvail, UnavailableNodes:n2", true, 59, 600, false, PendingStep::Wait},   // not yet
      {"ReqNodeNotAvail, UnavailableNodes:n2", false, 0, 299, false, PendingStep::Wait},   // down nodes, none mlsup's:
      {"ReqNodeNotAvail, UnavailableNodes:n2", false, 0, 301, false, PendingStep::Alert},  // people, or a reboot
      {"ReqNodeNotAvail, UnavailableNodes:n2", false, 0, 600, true, PendingStep::Wait},    // told once
      {"Resources", true, 600, 600, false, PendingStep::Wait},                             // waiting ends it
      {"Priority", false, 0, 9999, false, PendingStep::Wait},
      {"PartitionTimeLimit", false, 0, 0, false, PendingStep::Alert},                      // never starts: at once
      {"PartitionNodeLimit", false, 0, 0, false, PendingStep::Alert},                      // more nodes than it has
      {"BadConstraints", true, 0, 0, false, PendingStep::Alert},
      {"JobHeldUser", false, 0, 299, false, PendingStep::Wait},                            // a person may release it
      {"PartitionDown", false, 0, 301, false, PendingStep::Alert},
      {"PartitionTimeLimit", false, 0, 9999, true, PendingStep::Wait},                     // told once
      {"JobHeldAdmin", true, 0, 301, false, PendingStep::Alert},
      {"AssocMaxNodesPerJobLimit", false, 0, 301, false, PendingStep::Alert},
  };
  for (const auto& r : rows) {
    CAPTURE(r.reason);
    CAPTURE(r.pending_for);
    CHECK(judge_pending({r.reason, r.exclusions, r.unavailable_for, r.pending_for, r.alerted, 60, 300}) == r.step);
  }
}

TEST_CASE("pending: only ReqNodeNotAvail with mlsup's exclusions is waiting for nodes; only limits and holds are stuck") {
  CHECK(waiting_for_nodes("ReqNodeNotAvail", true));
  CHECK_FALSE(waiting_for_nodes("ReqNodeNotAvail", false));
  CHECK_FALSE(waiting_for_nodes("Resources", true));
  CHECK(stuck_reason("InvalidQOS"));
  CHECK(stuck_reason("DependencyNeverSatisfied"));
  CHECK_FALSE(stuck_reason("Dependency"));
  CHECK_FALSE(stuck_reason("ReqNodeNotAvail"));
}

TEST_CASE("pending: requests that can never start as asked are told at once; holds and waits for people are not") {
  CHECK(never_starts("PartitionNodeLimit"));
  CHECK(never_starts("PartitionConfig"));
  CHECK_FALSE(never_starts("ReqNodeNotAvail, UnavailableNodes:n[3-4]"));  // down nodes may come back
  CHECK_FALSE(never_starts("ReqNodeNotAvail, UnavailableNodes:n2"));  // mlsup's exclusions: relaxed first
  CHECK_FALSE(never_starts("JobHeldAdmin"));
  CHECK_FALSE(never_starts("Resources"));
}
