// The console lines of run and tick: an exclusion names its node and how long, a submission its
// exclusions and resume point; the event log keeps every field regardless.
#include <doctest/doctest.h>

#include <string>

#include "supervise/console.h"

using mlsup::engine::console_line;
using nlohmann::json;

namespace {

bool has(const std::string& line, const std::string& part) { return line.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("console: an exclusion names the node, for how long and until when") {
  const json e = {{"event", "excluded"}, {"time", 1.7e9},     {"campaign", "c"},   {"attempt", 2},
                  {"node", "n2"},        {"until", 1.7e9 + 21600}, {"for", "6h"}, {"reason", "suspect in 2 failed attempts"}};
  const std::string line = console_line(e, false);
  CAPTURE(line);
  CHECK(has(line, "excluded attempt=2 node=n2 for=6h until=20"));  // a date: the end may be days away
  CHECK(has(line, ": suspect in 2 failed attempts"));
}

TEST_CASE("console: a submission shows its exclusions and resume point") {
  const json resumed = {{"event", "submitted"},  {"time", 1.7e9},       {"attempt", 3},
                        {"job_id", 44},          {"exclude", json::array({"n2", "n4"})}, {"resume_from", "/ck/step-200"},
                        {"resume_step", 200},    {"reason", "resubmission"}};
  const std::string line = console_line(resumed, false);
  CAPTURE(line);
  CHECK(has(line, "submitted attempt=3 job_id=44 exclude=n2,n4 resume_from=/ck/step-200 resume_step=200: resubmission"));
  const json fresh = {{"event", "submitted"}, {"time", 1.7e9}, {"attempt", 1}, {"job_id", 43},
                      {"exclude", json::array()}, {"resume_from", ""}, {"resume_step", 0}, {"reason", "first attempt"}};
  CHECK(has(console_line(fresh, true), "[?] submitted attempt=1 job_id=43 exclude=none resume_from=none resume_step=0"));
}

TEST_CASE("console: a lifted exclusion names the nodes given back, the rank and the step of the failure") {
  const json e = {{"event", "exclusion-lifted"}, {"time", 1.7e9}, {"attempt", 3}, {"lifted", json::array({"n2"})},
                  {"rank", 1}, {"step", 300}, {"tolerance", 20}, {"reason", "rank 1 failed first near step 300 again"}};
  const std::string line = console_line(e, false);
  CAPTURE(line);
  CHECK(has(line, "exclusion-lifted attempt=3 step=300 lifted=n2 rank=1: rank 1 failed first near step 300 again"));
}

TEST_CASE("console: an attempt's end says how its first failing rank ended, beside the job's exit") {
  const json killed = {{"event", "attempt-ended"}, {"time", 1.7e9}, {"attempt", 1}, {"job_id", 7}, {"class", "failed"},
                       {"exit_code", 143}, {"signal", 0},
                       {"first_failure", {{"node", "n2"}, {"step", 0}, {"rank", 1}, {"exit_code", 0}, {"signal", 9}}}};
  std::string line = console_line(killed, false);
  CAPTURE(line);
  CHECK(has(line, "class=failed first_failure=rank 1 on n2: SIGKILL exit_code=143"));
  const json exited = {{"event", "attempt-ended"}, {"time", 1.7e9}, {"class", "failed"}, {"exit_code", 1},
                       {"first_failure", {{"node", "n3"}, {"rank", 0}, {"exit_code", 3}, {"signal", 0}}}};
  CHECK(has(console_line(exited, false), "first_failure=rank 0 on n3: exit 3 exit_code=1"));
  const json reported = {{"event", "attempt-ended"}, {"time", 1.7e9}, {"class", "failed"}, {"exit_code", 143},
                         {"first_reported", {{"node", "n1"}, {"tasks", "1"}, {"exit_code", 0}, {"signal", "Killed"}}}};
  line = console_line(reported, false);
  CAPTURE(line);
  CHECK(has(line, "first_reported=task 1 on n1: Killed exit_code=143"));
}
