#include "observe/node_dump.h"

#include <charconv>
#include <map>
#include <string_view>

#include "util/strings.h"

namespace mlsup::observe {
namespace {

// srun --label: "<task>: <line>", the task number right-aligned to the widest.
bool split_label(std::string_view line, int& task, std::string_view& rest) {
  std::size_t i = line.find_first_not_of(' ');
  const std::size_t colon = line.find(": ", i == std::string_view::npos ? 0 : i);
  if (i == std::string_view::npos || colon == std::string_view::npos || colon == i) return false;
  const auto [end, ec] = std::from_chars(line.data() + i, line.data() + colon, task);
  if (ec != std::errc() || end != line.data() + colon) return false;
  rest = line.substr(colon + 2);
  return true;
}

// The value of key=VALUE among a line's words ("" when absent).
std::string word_value(std::string_view line, std::string_view key) {
  for (const auto& w : util::split(line, ' '))
    if (w.size() > key.size() && w.compare(0, key.size(), key) == 0 && w[key.size()] == '=') return w.substr(key.size() + 1);
  return "";
}

int int_value(std::string_view line, std::string_view key) {
  const auto v = word_value(line, key);
  int n = 0;
  std::from_chars(v.data(), v.data() + v.size(), n);
  return n;
}

DumpedProcess* process_of(NodeDump& d, int pid) {
  for (auto& p : d.processes)
    if (p.pid == pid) return &p;
  return nullptr;
}

// One labelled line into its node's dump.
void take(NodeDump& d, std::string_view line) {
  d.text.append(line).push_back('\n');
  if (line.starts_with("node=") && d.node.empty()) d.node = std::string(line.substr(5));
  else if (line.starts_with("tool=") && d.tool.empty()) d.tool = std::string(line.substr(5));
  else if (line.starts_with("proc ")) {
    d.processes.push_back({int_value(line, "pid"), word_value(line, "rank"), word_value(line, "step"), word_value(line, "state"),
                           word_value(line, "wchan"), word_value(line, "comm"), "", 0, ""});
  } else if (line.starts_with("dumped ")) {
    if (auto* p = process_of(d, int_value(line, "pid"))) {
      p->by = word_value(line, "by");
      p->frames = int_value(line, "frames");
    }
  } else if (line.starts_with("flight-recorder ")) {
    if (auto* p = process_of(d, int_value(line, "pid"))) p->flight_recorder = word_value(line, "dump");
  } else if (line.starts_with("done node=")) d.complete = true;
}

}  // namespace

std::vector<NodeDump> parse_node_dumps(const std::string& out) {
  std::map<int, NodeDump> by_task;
  std::vector<int> order;
  for (const auto& line : util::split(out, '\n')) {
    int task = 0;
    std::string_view rest;
    if (!split_label(line, task, rest)) continue;
    if (!by_task.contains(task)) order.push_back(task);
    take(by_task[task], rest);
  }
  std::vector<NodeDump> dumps;
  for (const int t : order)
    if (!by_task[t].node.empty()) dumps.push_back(std::move(by_task[t]));
  return dumps;
}

std::string describe(const DumpedProcess& p) {
  std::string s = "pid " + std::to_string(p.pid);
  if (!p.rank.empty() && p.rank != "-") s += " rank " + p.rank;
  s += " " + p.comm + " " + p.state + " " + p.wchan;
  if (p.by == "py-spy" || p.by == "gdb") s += " (" + p.by + ": " + std::to_string(p.frames) + " frames)";
  if (!p.flight_recorder.empty()) s += ", NCCL flight recorder dump asked: " + p.flight_recorder;
  return s;
}

}  // namespace mlsup::observe
