// run_process: its timeout holds for the child's whole life, and capture survives closed standard fds.
#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <fstream>
#include <string>
#include <sys/wait.h>
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

// The exit code of body() run in a forked child of this test (whose file descriptors it may change).
template <class Body>
int in_child(Body body) {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(body());
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

TEST_CASE("a child that closes its output and keeps running is killed at the timeout") {
  ProcessRequest r;
  r.argv = {"/bin/sh", "-c", "exec >/dev/null 2>&1; sleep 30"};
  r.timeout = std::chrono::seconds(1);
  const auto start = std::chrono::steady_clock::now();
  const auto result = run_process(r);
  CHECK(seconds_since(start) < 10.0);  // not the child's 30 s; the slack is for a loaded machine
  CHECK(result.started);
  CHECK(result.timed_out);
  CHECK(result.signal == SIGKILL);
  CHECK(result.timeout_message == "timed out after 1 s");
}

TEST_CASE("the timeout kills the child's whole process group") {
  mlsup::test::TempDir dir;
  ProcessRequest r;
  r.argv = {"/bin/sh", "-c", "exec >/dev/null 2>&1; sleep 30 & echo $! > pid; wait"};
  r.working_dir = dir.path();
  r.timeout = std::chrono::seconds(2);  // time enough for the shell to start the grandchild on a loaded machine
  const auto start = std::chrono::steady_clock::now();
  const auto result = run_process(r);
  CHECK(seconds_since(start) < 10.0);  // not the grandchild's 30 s
  CHECK(result.timed_out);
  CHECK(result.timeout_message == "timed out after 2 s");
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

TEST_CASE("a child's output is captured when this process started with standard fds closed") {
  // Each set of closed fds in a child of its own: 0 = captured, 1 = out lost, 2 = err lost.
  for (const auto& closed : std::vector<std::vector<int>>{{0}, {1}, {2}, {0, 1}, {1, 2}, {0, 2}, {0, 1, 2}}) {
    CAPTURE(closed.size());
    CAPTURE(closed.front());
    CAPTURE(closed.back());
    const int code = in_child([&closed] {
      for (int fd : closed) ::close(fd);
      ProcessRequest r;
      r.argv = {"/bin/sh", "-c", "echo out; echo err >&2; cat"};  // cat: stdin must be open (/dev/null)
      const auto result = run_process(r);
      if (result.out != "out\n") return 1;
      return result.err == "err\n" && result.exit_code == 0 ? 0 : 2;
    });
    CHECK(code == 0);
  }
}

TEST_CASE("open_closed_standard_fds gives each closed standard fd /dev/null, so files opened later get 3 and above") {
  const int code = in_child([] {
    for (int fd : {0, 1, 2}) ::close(fd);
    mlsup::edges::open_closed_standard_fds();
    for (int fd : {0, 1, 2})
      if (::fcntl(fd, F_GETFD) < 0) return 1;
    if (::write(1, "", 0) != 0 || ::write(2, "", 0) != 0) return 2;
    return ::open("/dev/null", O_RDONLY) >= 3 ? 0 : 3;
  });
  CHECK(code == 0);
}
