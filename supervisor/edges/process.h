#pragma once
// Runs a program with an argv vector (never through a shell) and collects what it printed.
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mlsup::edges {

struct ProcessRequest {
  std::vector<std::string> argv;                               // argv[0] is looked up in PATH
  std::vector<std::pair<std::string, std::string>> env_add;    // set on top of this process's environment
  std::string working_dir;                                     // "" = the current one
  // The child and its process group are killed (SIGKILL) this long after the start, whether or not
  // they still hold the output pipes open.
  std::chrono::milliseconds timeout{std::chrono::seconds(60)};
  // Called in this process once the child exists (its pid), before its output is read: a caller
  // that must be able to find the child again (sbatch) records it here.
  std::function<void(int pid)> on_start;
};

struct ProcessResult {
  bool started = false;     // false when the program could not be executed at all
  bool timed_out = false;
  int exit_code = -1;       // when it exited
  int signal = 0;           // when a signal ended it
  std::string out, err;
  std::string start_error;  // why it could not start
  std::string timeout_message;  // "timed out after N s" when timed_out
};

// Runs the request to completion (or its timeout, which bounds the call); blocking.
ProcessResult run_process(const ProcessRequest& request);

// How a run ended, in words: "could not start: ...", "timed out" or "exit N".
std::string outcome(const ProcessResult& result);

// When process pid of this host started, in clock ticks since boot (/proc/PID/stat); nullopt when no
// such process runs (or only its zombie is left). With the pid, it tells a process from a later one
// that reuses the number.
std::optional<long long> process_start_ticks(int pid);

// Opens /dev/null on each of the standard fds (0, 1, 2) that is closed, so that no pipe or file
// opened later takes its number; for the start of main().
void open_closed_standard_fds();

}  // namespace mlsup::edges
