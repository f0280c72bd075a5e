#include "edges/process.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace mlsup::edges {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kReapGrace = std::chrono::seconds(5);  // after SIGKILL: a child is normally gone at once

// The environment for the child: ours, with env_add set (replacing same names).
std::vector<std::string> child_environment(const std::vector<std::pair<std::string, std::string>>& add) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    bool replaced = false;
    for (const auto& [k, v] : add) replaced = replaced || k == name;
    if (!replaced) env.push_back(entry);
  }
  for (const auto& [k, v] : add) env.push_back(k + "=" + v);
  return env;
}

std::vector<char*> c_strings(std::vector<std::string>& items) {
  std::vector<char*> out;
  for (auto& s : items) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// A copy of fd numbered 3 or above (never one of the standard fds), closed at exec; -1 for -1.
int spare(int fd) { return fd < 0 ? -1 : ::fcntl(fd, F_DUPFD_CLOEXEC, 3); }

// In the child: puts in_fd, out_fd and err_fd on 0, 1 and 2, whichever numbers they have now (a
// pipe may have been given 0-2 when this process started with them closed).
void wire_standard_fds(int in_fd, int out_fd, int err_fd) {
  const int spares[3] = {spare(in_fd), spare(out_fd), spare(err_fd)};
  for (int target = 0; target < 3; ++target) ::dup2(spares[target], target);
}

// In the child: writes "mlsup-exec: <what> <name>: <errno's text>" to stderr with write(2) alone.
void exec_failure(const char* what, const char* name) {
  const char* parts[] = {"mlsup-exec: ", what, name, ": ", std::strerror(errno), "\n"};
  for (const char* part : parts) [[maybe_unused]] auto n = ::write(STDERR_FILENO, part, std::strlen(part));
}

// In the child: wires the pipes and execs; never returns. Reports exec failures through err_fd. It
// allocates nothing: another thread of this process may have held the allocator's lock at the fork.
[[noreturn]] void exec_child(const char* working_dir, int out_fd, int err_fd, char* const* argv, char* const* env) {
  wire_standard_fds(::open("/dev/null", O_RDONLY | O_CLOEXEC), out_fd, err_fd);
  ::setpgid(0, 0);
  if (*working_dir && ::chdir(working_dir) != 0) {
    exec_failure("cannot enter ", working_dir);
    ::_exit(127);
  }
  ::execvpe(argv[0], argv, env);
  exec_failure("cannot run ", argv[0]);
  ::_exit(127);
}

// Reads both pipes until they close or the deadline passes; returns false on timeout.
bool drain(int out_fd, int err_fd, std::string& out, std::string& err, Clock::time_point deadline) {
  pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
  std::string* sinks[2] = {&out, &err};
  int open_count = 2;
  char buffer[4096];
  while (open_count > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    if (::poll(fds, 2, static_cast<int>(left)) < 0 && errno != EINTR) return false;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
      if (n > 0) {
        sinks[i]->append(buffer, static_cast<std::size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        fds[i].fd = -1;
        --open_count;
      }
    }
  }
  return true;
}

// Waits until pid ends or deadline passes, keeping its status; false when it still runs then.
bool reap(pid_t pid, int& status, Clock::time_point deadline) {
  auto pause = std::chrono::milliseconds(1);
  for (;;) {
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid || (r < 0 && errno != EINTR)) return true;
    const auto left = deadline - Clock::now();
    if (left <= Clock::duration::zero()) return false;
    std::this_thread::sleep_for(std::min<Clock::duration>(pause, left));
    pause = std::min(pause * 2, std::chrono::milliseconds(50));
  }
}

// "timed out after N s", N in seconds (0.5, 30).
std::string timeout_text(std::chrono::milliseconds timeout) {
  std::ostringstream text;
  text << "timed out after " << static_cast<double>(timeout.count()) / 1000 << " s";
  return text.str();
}

// Kills pid's process group (and pid, in case it has not made its group yet) and reaps pid.
void kill_and_reap(pid_t pid, int& status) {
  ::kill(-pid, SIGKILL);
  ::kill(pid, SIGKILL);
  (void)reap(pid, status, Clock::now() + kReapGrace);  // a child stuck in the kernel is left behind
}

// Fills in how the child ended from its wait status.
void read_status(int status, ProcessResult& result) {
  result.started = !(WIFEXITED(status) && WEXITSTATUS(status) == 127 && result.err.rfind("mlsup-exec: ", 0) == 0);
  if (!result.started) result.start_error = result.err;
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
}

}  // namespace

ProcessResult run_process(const ProcessRequest& request) {
  ProcessResult result;
  if (request.argv.empty()) {
    result.start_error = "no program given";
    return result;
  }
  int out_pipe[2], err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0) {
    result.start_error = std::string("pipe: ") + std::strerror(errno);
    return result;
  }
  auto argv = request.argv;
  auto env = child_environment(request.env_add);
  const auto cargv = c_strings(argv);
  const auto cenv = c_strings(env);
  const auto deadline = Clock::now() + request.timeout;
  const pid_t pid = ::fork();
  if (pid < 0) {
    result.start_error = std::string("fork: ") + std::strerror(errno);
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) ::close(fd);
    return result;
  }
  if (pid == 0) exec_child(request.working_dir.c_str(), out_pipe[1], err_pipe[1], cargv.data(), cenv.data());
  ::setpgid(pid, pid);  // as the child does, so that a kill at once reaches its group
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  if (request.on_start) request.on_start(pid);
  int status = 0;
  // The deadline holds after the pipes close too: a child may close its output and run on.
  const bool ended = drain(out_pipe[0], err_pipe[0], result.out, result.err, deadline) && reap(pid, status, deadline);
  ::close(out_pipe[0]);
  ::close(err_pipe[0]);
  if (!ended) {
    kill_and_reap(pid, status);
    result.timed_out = true;
    result.timeout_message = timeout_text(request.timeout);
  }
  read_status(status, result);
  return result;
}

std::optional<long long> process_start_ticks(int pid) {
  if (pid <= 0) return std::nullopt;
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(in, text)) return std::nullopt;
  const auto close = text.rfind(')');  // the name, in parentheses, may hold spaces
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(text.substr(close + 1));
  std::string state, skip;
  fields >> state;  // field 3; the start time is field 22
  for (int field = 4; field < 22 && fields >> skip; ++field) {
  }
  long long ticks = 0;
  if (state == "Z" || state == "X" || !(fields >> ticks)) return std::nullopt;
  return ticks;
}

// Opens /dev/null on each of fd 0, 1 and 2 that is closed. Called in order, each open takes the
// lowest free number, which is the closed fd itself.
void open_closed_standard_fds() {
  for (int fd = 0; fd < 3; ++fd) {
    if (::fcntl(fd, F_GETFD) >= 0 || errno != EBADF) continue;
    const int opened = ::open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
    if (opened > fd) {
      ::dup2(opened, fd);
      ::close(opened);
    }
  }
}

std::string outcome(const ProcessResult& result) {
  if (!result.started) return "could not start: " + result.start_error;
  if (result.timed_out) return "timed out";
  return "exit " + std::to_string(result.exit_code);
}

}  // namespace mlsup::edges
