// run_process: its timeout holds for the child's whole life.
#include <chrono>
#include <csignal>
#include <fstream>
#include <string>
#include <unistd.h>

#include <doctest/doctest.h>

#include "edges/process.h"
#include "support.h"

using mlsup::edges::ProcessRequest;
using mlsup::edges::run_process;

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// True while pid is a process that has not ended (a zombie has ended).
bool alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  const auto paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] != 'Z';
}

}  // namespace

TEST_CASE("a child that closes its output and keeps running is killed at the timeout") {
  ProcessRequest r;
  r.argv = {"/bin/sh", "-c", "exec >/dev/null 2>&1; sleep 8"};
  r.timeout = std::chrono::seconds(1);
  const auto start = std::chrono::steady_clock::now();
  const auto result = run_process(r);
  CHECK(seconds_since(start) < 4.0);
  CHECK(result.started);
  CHECK(result.timed_out);
  CHECK(result.signal == SIGKILL);
  CHECK(result.timeout_message == "timed out after 1 s");
}

TEST_CASE("the timeout kills the child's whole process group") {
  mlsup::test::TempDir dir;
  ProcessRequest r;
  r.argv = {"/bin/sh", "-c", "exec >/dev/null 2>&1; sleep 8 & echo $! > pid; wait"};
  r.working_dir = dir.path();
  r.timeout = std::chrono::milliseconds(500);
  const auto start = std::chrono::steady_clock::now();
  const auto result = run_process(r);
  CHECK(seconds_since(start) < 4.0);
  CHECK(result.timed_out);
  CHECK(result.timeout_message == "timed out after 0.5 s");
  pid_t grandchild = 0;
  std::ifstream(dir.path() + "/pid") >> grandchild;
  REQUIRE(grandchild > 0);
  for (int i = 0; i < 100 && alive(grandchild); ++i) ::usleep(10'000);
  CHECK_FALSE(alive(grandchild));
}

TEST_CASE("a child that ends in time is not reported as timed out") {
  ProcessRequest r;
  r.argv = {"/bin/sh", "-c", "exec >/dev/null 2>&1; sleep 0.2; exit 3"};
  r.timeout = std::chrono::seconds(5);
  const auto result = run_process(r);
  CHECK_FALSE(result.timed_out);
  CHECK(result.exit_code == 3);
  CHECK(result.timeout_message.empty());
}
