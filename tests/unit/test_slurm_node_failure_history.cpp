// The cluster's node-failure history as the command-line backend reads it: `sacct -a -X -n -P
// --format=NNodes,ElapsedRaw,State` lines, every user's jobs, a job (or array task) a line.
#include <doctest/doctest.h>

#include <string>

#include "slurm_model/sacct_text.h"

using namespace mlsup::slurm;

namespace {

struct Row {
  std::string text;
  double node_seconds;
  int node_failures;
};

}  // namespace

TEST_CASE("node-failure history: each ended job adds nodes x elapsed; NODE_FAIL counts") {
  const Row rows[] = {
      {"", 0, 0},
      {"4|3600|COMPLETED\n", 4 * 3600, 0},
      {"2|100|NODE_FAIL\n", 200, 1},
      {"1|50|FAILED\n2|10|TIMEOUT\n3|7|CANCELLED by 1000\r\n", 50 + 20 + 21, 0},
      {"1|0|NODE_FAIL\n", 0, 1},  // failed at once: no node-seconds, still a node failure
      // three tasks of one array, a line each; its tasks still pending are not ended
      {"1|30|COMPLETED\n1|30|NODE_FAIL\n1|40|COMPLETED\n1|0|PENDING\n", 100, 1},
      {"2|500|RUNNING\n", 0, 0},  // not ended: not in the history yet
      // malformed lines are skipped, the good ones around them read
      {"8|10|NODE_FAIL\nx|10|COMPLETED\n2|y|COMPLETED\n2|10\n|10|COMPLETED\n2|10|SOMETHING\n-1|10|FAILED\n1|5|OUT_OF_MEMORY\n",
       85, 1},
  };
  for (const auto& row : rows) {
    CAPTURE(row.text);
    const auto h = parse_node_failure_history(row.text);
    CHECK(h.available);
    CHECK(h.node_seconds == doctest::Approx(row.node_seconds));
    CHECK(h.node_failures == row.node_failures);
  }
}

TEST_CASE("node-failure history: 4 node failures in 400 node-hours") {
  std::string text;
  for (int i = 0; i < 4; ++i) text += "4|9000|NODE_FAIL\n";  // 4 x 4 x 2.5 h = 40 node-hours
  for (int i = 0; i < 9; ++i) text += "10|14400|COMPLETED\n";  // 9 x 10 x 4 h = 360 node-hours
  const auto h = parse_node_failure_history(text);
  CHECK(h.node_failures == 4);
  CHECK(h.node_seconds == doctest::Approx(400 * 3600.0));
}

TEST_CASE("node-failure history: the format asked is the one read") {
  CHECK(kSacctHistoryFormat == "NNodes,ElapsedRaw,State");
}
