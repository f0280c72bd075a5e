#include "slurm_model/sacct_text.h"

#include <charconv>
#include <optional>
#include <string>

#include "util/strings.h"

namespace mlsup::slurm {
namespace {

// A whole unsigned number, or nullopt.
std::optional<std::uint32_t> number(std::string_view text) {
  std::uint32_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return v;
}

// "CANCELLED by 1000" -> Cancelled and uid 1000; other states have no "by".
void read_state(std::string_view text, AccountedJob& job) {
  const auto by = text.find(" by ");
  job.state = state_from_name(util::trim(text.substr(0, by)));
  if (by != std::string_view::npos && job.state == JobState::Cancelled) job.cancelled_by = number(util::trim(text.substr(by + 4)));
}

// "13:0" -> exit code 13, signal 0.
bool read_exit(std::string_view text, AccountedJob& job) {
  const auto colon = text.find(':');
  if (colon == std::string_view::npos) return false;
  const auto code = number(text.substr(0, colon));
  const auto sig = number(text.substr(colon + 1));
  if (!code || !sig || *code > 255 || *sig > 255) return false;
  job.exit_code = static_cast<int>(*code);
  job.exit_signal = static_cast<int>(*sig);
  return true;
}

std::optional<AccountedJob> read_line(std::string_view line) {
  std::string_view rest = line;
  std::string_view fields[4];
  for (auto& f : fields) {
    const auto bar = rest.find('|');
    if (bar == std::string_view::npos) return std::nullopt;
    f = rest.substr(0, bar);
    rest = rest.substr(bar + 1);
  }
  AccountedJob job;
  const auto id = number(util::trim(fields[0]));
  if (!id || *id == 0) return std::nullopt;
  job.job_id = *id;
  const auto task = fields[1].find('_');  // "4_2": task 2 of array 4
  if (task != std::string_view::npos) job.array_job_id = number(util::trim(fields[1].substr(0, task))).value_or(0);
  read_state(fields[2], job);
  if (!read_exit(util::trim(fields[3]), job)) return std::nullopt;
  job.comment = std::string(rest);
  return job;
}

// Calls on_line with each line of text, without its end ("\n" or "\r\n").
template <typename OnLine>
void each_line(std::string_view text, OnLine on_line) {
  std::size_t at = 0;
  while (at < text.size()) {
    const auto end = text.find('\n', at);
    std::string_view line = text.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at);
    at = end == std::string_view::npos ? text.size() : end + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    on_line(line);
  }
}

// One ended job of the history's lines ("2|3600|NODE_FAIL"): its node-seconds and whether a node failed it.
struct EndedJob {
  double node_seconds = 0;
  bool node_failed = false;
};

std::optional<EndedJob> read_history_line(std::string_view line) {
  const auto first = line.find('|');
  const auto second = first == std::string_view::npos ? first : line.find('|', first + 1);
  if (second == std::string_view::npos) return std::nullopt;
  const auto nodes = number(util::trim(line.substr(0, first)));
  const auto elapsed = number(util::trim(line.substr(first + 1, second - first - 1)));
  const std::string_view state_text = util::trim(line.substr(second + 1));
  const JobState state = state_from_name(state_text.substr(0, state_text.find(' ')));  // "CANCELLED by 0"
  if (!nodes || !elapsed || !is_final(state)) return std::nullopt;
  return EndedJob{static_cast<double>(*nodes) * static_cast<double>(*elapsed), state == JobState::NodeFail};
}

}  // namespace

std::vector<AccountedJob> parse_sacct(std::string_view text) {
  std::vector<AccountedJob> out;
  each_line(text, [&](std::string_view line) {
    if (auto job = read_line(line)) out.push_back(std::move(*job));
  });
  return out;
}

NodeFailureHistory parse_node_failure_history(std::string_view text) {
  NodeFailureHistory h{.available = true};
  each_line(text, [&](std::string_view line) {
    const auto job = read_history_line(line);
    if (!job) return;
    h.node_seconds += job->node_seconds;
    h.node_failures += job->node_failed ? 1 : 0;
  });
  return h;
}

bool accounting_disabled(std::string_view message) {
  return message.find("accounting storage is disabled") != std::string_view::npos;
}

}  // namespace mlsup::slurm
