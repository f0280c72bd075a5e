#include "slurm_model/scontrol_text.h"

#include <algorithm>
#include <charconv>
#include <ctime>
#include <optional>
#include <utility>

#include "util/strings.h"

namespace mlsup::slurm {
namespace {

std::string field(const Record& r, const std::string& key) {
  const auto it = r.find(key);
  return it == r.end() || it->second == "(null)" ? "" : it->second;
}

std::uint32_t number(const std::string& s) {
  std::uint32_t v = 0;
  std::from_chars(s.data(), s.data() + s.size(), v);
  return v;
}

// scontrol prints local times as 2026-11-29T22:47:14, or "Unknown"/"None".
std::time_t when(const std::string& s) {
  std::tm tm{};
  if (s.size() < 19 || !::strptime(s.c_str(), "%Y-%m-%dT%H:%M:%S", &tm)) return 0;
  tm.tm_isdst = -1;
  return std::mktime(&tm);
}

// "1-00:00:00", "20:00", "UNLIMITED" -> minutes.
std::optional<std::uint32_t> limit_minutes(const std::string& s) {
  if (s.empty() || s == "UNLIMITED" || s == "NOT_SET") return std::nullopt;
  std::uint32_t days = 0;
  std::string clock = s;
  if (const auto dash = s.find('-'); dash != std::string::npos) {
    days = number(s.substr(0, dash));
    clock = s.substr(dash + 1);
  }
  const auto parts = util::split(clock, ':');
  std::uint32_t minutes = 0;
  if (parts.size() == 3) minutes = number(parts[0]) * 60 + number(parts[1]);
  if (parts.size() == 2) minutes = number(parts[0]);
  return days * 1440 + minutes;
}

bool letter(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }
bool name_char(char c) { return letter(c) || (c >= '0' && c <= '9') || c == '_' || c == ':' || c == '/'; }

// A word "Key=value" split at its first '=', when Key is a field name (a letter, then letters, digits, '_',
// ':' or '/'). Read by hand: a regex would recurse once per byte and overflow the stack on a long value.
std::optional<std::pair<std::string, std::string>> key_value(const std::string& word) {
  const auto eq = word.find('=');
  if (eq == std::string::npos || !letter(word[0])) return std::nullopt;
  if (!std::all_of(word.begin() + 1, word.begin() + static_cast<long>(eq), name_char)) return std::nullopt;
  return std::pair{word.substr(0, eq), word.substr(eq + 1)};
}

}  // namespace

std::vector<Record> parse_records(std::string_view text) {
  std::vector<Record> records;
  for (const auto& line : util::split(text, '\n')) {
    if (util::trim(line).empty()) continue;
    Record r;
    std::string last;
    for (const auto& word : util::split(util::trim(line), ' ')) {
      if (auto field = key_value(word)) {
        last = field->first;
        r[last] = std::move(field->second);
      } else if (!last.empty() && !word.empty()) {
        r[last] += " " + word;
      }
    }
    records.push_back(std::move(r));
  }
  return records;
}

Job job_from_record(const Record& r) {
  Job j;
  j.job_id = number(field(r, "JobId"));
  j.array_job_id = number(field(r, "ArrayJobId"));
  const std::string task = field(r, "ArrayTaskId");
  if (j.array_job_id != 0 && !task.empty() && task.find_first_not_of("0123456789") == std::string::npos)
    j.array_task_id = number(task);
  else if (j.array_job_id != 0)
    j.array_task_pending = task;
  j.name = field(r, "JobName");
  j.comment = field(r, "Comment");
  j.state = state_from_name(field(r, "JobState"));
  j.reason = field(r, "Reason");
  const auto exit = util::split(field(r, "ExitCode"), ':');
  j.exit_code = static_cast<int>(number(exit[0]));
  if (exit.size() > 1) j.exit_signal = static_cast<int>(number(exit[1]));
  j.nodes = field(r, "NodeList");
  j.excluded_nodes = field(r, "ExcNodeList");
  j.batch_host = field(r, "BatchHost");
  j.partition = field(r, "Partition");
  j.node_count = number(field(r, "NumNodes"));
  j.num_tasks = number(field(r, "NumTasks"));
  j.user_id = number(field(r, "UserId").substr(field(r, "UserId").find('(') + 1));
  j.submit_time = when(field(r, "SubmitTime"));
  j.start_time = when(field(r, "StartTime"));
  j.end_time = when(field(r, "EndTime"));
  j.time_limit_minutes = limit_minutes(field(r, "TimeLimit"));
  j.std_out = field(r, "StdOut");
  j.std_err = field(r, "StdErr");
  return j;
}

Node node_from_record(const Record& r) {
  Node n;
  n.name = field(r, "NodeName");
  const std::string state = field(r, "State");
  n.state = state.substr(0, state.find_first_of("+*"));
  n.drain = state.find("DRAIN") != std::string::npos;
  n.not_responding = state.find('*') != std::string::npos || state.find("NOT_RESPONDING") != std::string::npos;
  n.reason = field(r, "Reason");
  if (const auto parts = field(r, "Partitions"); !parts.empty() && parts != "(null)") n.partitions = util::split(parts, ',');
  n.address = field(r, "NodeAddr");
  n.hostname = field(r, "NodeHostName");
  return n;
}

}  // namespace mlsup::slurm
