#include "slurm_model/srun_messages.h"

#include <algorithm>
#include <array>
#include <charconv>

#include "util/strings.h"

namespace mlsup::slurm {
namespace {

// Signals srun reports for tasks it (or Slurm) ended after another task failed or the job was cancelled.
constexpr std::array<std::string_view, 4> kKills = {"Terminated", "Killed", "Interrupt", "Hangup"};

// srun's words for the signals a task may end by (strsignal's), with their numbers.
struct SignalName {
  std::string_view words;
  int signo;
};
constexpr std::array<SignalName, 12> kSignals = {{{"Hangup", 1},
                                                  {"Interrupt", 2},
                                                  {"Quit", 3},
                                                  {"Illegal instruction", 4},
                                                  {"Trace/breakpoint trap", 5},
                                                  {"Aborted", 6},
                                                  {"Bus error", 7},
                                                  {"Floating point exception", 8},
                                                  {"Killed", 9},
                                                  {"User defined signal 1", 10},
                                                  {"Segmentation fault", 11},
                                                  {"Terminated", 15}}};

int signal_number(std::string_view words) {
  for (const auto& s : kSignals)
    if (s.words == words) return s.signo;
  return 0;
}

// Parses "NODE: task(s) LIST: WHAT" (the part after "srun: error: "); false when it is something else.
bool parse_report(std::string_view rest, TaskReport& r) {
  const auto c1 = rest.find(": ");
  if (c1 == std::string_view::npos) return false;
  r.node = std::string(rest.substr(0, c1));
  rest.remove_prefix(c1 + 2);
  if (util::starts_with(rest, "tasks ")) rest.remove_prefix(6);
  else if (util::starts_with(rest, "task ")) rest.remove_prefix(5);
  else return false;
  const auto c2 = rest.find(": ");
  if (c2 == std::string_view::npos || r.node.find(' ') != std::string::npos) return false;
  r.tasks = std::string(rest.substr(0, c2));
  const std::string_view what = util::trim(rest.substr(c2 + 2));
  constexpr std::string_view kExited = "Exited with exit code ";
  if (util::starts_with(what, kExited)) {
    const auto num = what.substr(kExited.size());
    if (std::from_chars(num.data(), num.data() + num.size(), r.exit_code).ec != std::errc{}) return false;
    r.failed = r.exit_code != 0;
    return true;
  }
  r.signal = std::string(what.substr(0, what.find(" (core dumped)")));
  r.signo = signal_number(r.signal);
  r.failed = std::find(kKills.begin(), kKills.end(), r.signal) == kKills.end();
  return true;
}

}  // namespace

std::vector<TaskReport> srun_task_reports(std::string_view text) {
  constexpr std::string_view kPrefix = "srun: error: ";
  std::vector<TaskReport> out;
  for (const auto& line : util::split(text, '\n')) {
    const auto at = line.find(kPrefix);
    if (at == std::string::npos) continue;
    TaskReport r;
    if (parse_report(std::string_view(line).substr(at + kPrefix.size()), r)) out.push_back(std::move(r));
  }
  return out;
}

std::optional<FirstEnd> first_task_end(const std::vector<TaskReport>& reports) {
  std::optional<FirstEnd> out;
  for (const auto& r : reports) {
    if (r.exit_code == 0 && r.signal.empty()) continue;  // "Exited with exit code 0": not an abnormal end
    if (!out) out = FirstEnd{r, {}};
    else if (r.node != out->report.node &&
             std::find(out->victims.begin(), out->victims.end(), r.node) == out->victims.end())
      out->victims.push_back(r.node);
  }
  return out;
}

}  // namespace mlsup::slurm
