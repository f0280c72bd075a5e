#include "observe/node_records.h"

#include <algorithm>
#include <csignal>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

namespace mlsup::observe {
namespace {

using nlohmann::json;

std::string problem(std::string_view node, int line, std::string_view what) {
  return std::string(node) + ":" + std::to_string(line) + ": " + std::string(what);
}

// Reads a required field; throws json::exception when absent or of the wrong type.
template <class T>
T field(const json& j, const char* key) {
  return j.at(key).get<T>();
}

std::string node_of(const json& j, std::string_view file_node) {
  auto it = j.find("node");
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string(file_node);
}

// A "node" record: its addresses and GPUs (a GPU without a UUID is left out).
NodeFacts node_facts(const json& j, std::string_view file_node) {
  NodeFacts f{node_of(j, file_node), field<int>(j, "step"), {}, {}, field<double>(j, "time")};
  for (const auto& a : j.value("addresses", json::array()))
    if (a.is_string()) f.addresses.push_back(a.get<std::string>());
  for (const auto& g : j.value("gpus", json::array())) {
    if (!g.is_object() || !g.contains("uuid") || !g["uuid"].is_string() || g["uuid"].get<std::string>().empty()) continue;
    f.gpus.push_back(slurm::Gpu{g["uuid"].get<std::string>(), g.value("bus", std::string()), g.value("model", std::string())});
  }
  return f;
}

void parse_line(const json& j, std::string_view file_node, NodeRecords& out) {
  const std::string kind = field<std::string>(j, "kind");
  if (kind == "task-exit") {
    out.exits.push_back({node_of(j, file_node), field<int>(j, "step"), field<int>(j, "rank"),
                         field<int>(j, "exit_code"), field<int>(j, "signal"), field<double>(j, "time")});
  } else if (kind == "health") {
    HealthCheck c{node_of(j, file_node), field<int>(j, "step"), field<bool>(j, "ok"), field<int>(j, "exit_code"),
                  j.value("detail", std::string()), field<double>(j, "time")};
    if (j.value("detail_truncated", false)) {
      c.detail_bytes = j.value("detail_bytes", std::size_t{0});
      c.detail += " [cut from " + (c.detail_bytes ? std::to_string(c.detail_bytes) : std::string("more")) + " bytes]";
    }
    out.health.push_back(std::move(c));
  } else if (kind == "node") {
    out.facts.push_back(node_facts(j, file_node));
  }
}

}  // namespace

NodeRecords parse_node_records(std::string_view text, std::string_view node) {
  NodeRecords out;
  int number = 0;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    const bool complete = nl != std::string_view::npos;
    const std::string_view line = text.substr(0, complete ? nl : text.size());
    text.remove_prefix(complete ? nl + 1 : text.size());
    ++number;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    const json j = json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      out.problems.push_back(problem(node, number, complete ? "not a JSON object (skipped)" : "torn last line (skipped)"));
      continue;
    }
    try {
      if (!j.contains("v") || j.at("v") != 1) {
        out.problems.push_back(problem(node, number, "unsupported record version (skipped)"));
        continue;
      }
      parse_line(j, node, out);
    } catch (const json::exception& e) {
      out.problems.push_back(problem(node, number, std::string("missing or bad field (skipped): ") + e.what()));
    }
  }
  return out;
}

NodeRecords combine_node_records(const std::vector<NodeFile>& files) {
  NodeRecords all;
  for (const auto& file : files) {
    if (!file.problem.empty()) {
      all.problems.push_back(file.problem);
      continue;
    }
    NodeRecords one = parse_node_records(file.text, file.node);
    std::move(one.exits.begin(), one.exits.end(), std::back_inserter(all.exits));
    std::move(one.health.begin(), one.health.end(), std::back_inserter(all.health));
    std::move(one.facts.begin(), one.facts.end(), std::back_inserter(all.facts));
    std::move(one.problems.begin(), one.problems.end(), std::back_inserter(all.problems));
  }
  std::stable_sort(all.exits.begin(), all.exits.end(),
                   [](const TaskExit& a, const TaskExit& b) { return std::tie(a.time, a.rank) < std::tie(b.time, b.rank); });
  std::stable_sort(all.health.begin(), all.health.end(),
                   [](const HealthCheck& a, const HealthCheck& b) { return std::tie(a.time, a.node) < std::tie(b.time, b.node); });
  std::stable_sort(all.facts.begin(), all.facts.end(),
                   [](const NodeFacts& a, const NodeFacts& b) { return std::tie(a.time, a.node) < std::tie(b.time, b.node); });
  return all;
}

std::map<std::string, NodeFacts> latest_facts(const std::vector<NodeFacts>& facts) {
  std::map<std::string, NodeFacts> out;
  for (const auto& f : facts) {
    auto it = out.find(f.node);
    if (it == out.end() || it->second.time <= f.time) out[f.node] = f;
  }
  return out;
}

bool failed(const TaskExit& e) { return e.exit_code != 0 || e.signal != 0; }

namespace {

bool killer_signal(const TaskExit& e) { return e.exit_code == 0 && (e.signal == SIGKILL || e.signal == SIGTERM); }

// The failures that may have come first: failed, and not a kill that followed another failure.
std::vector<TaskExit> candidates(const std::vector<TaskExit>& exits, double margin) {
  auto killed_after_another = [&](const TaskExit& e) {
    return killer_signal(e) && std::any_of(exits.begin(), exits.end(), [&](const TaskExit& f) {
             return failed(f) && !killer_signal(f) && f.time <= e.time + margin;
           });
  };
  std::vector<TaskExit> out;
  for (const auto& e : exits)
    if (failed(e) && !killed_after_another(e)) out.push_back(e);
  return out;
}

// Among simultaneous failures: not a kill, then a step's task before the batch script (which ends
// because its step did), then the lowest rank.
std::tuple<bool, bool, int> order(const TaskExit& e) { return {killer_signal(e), e.step < 0, e.rank}; }

}  // namespace

std::optional<TaskExit> first_failure(const std::vector<TaskExit>& exits, double kill_grace) {
  const double margin = std::max(kill_grace, kClockMargin);
  const auto c = candidates(exits, margin);
  if (c.empty()) return std::nullopt;
  const double earliest = std::min_element(c.begin(), c.end(), [](const TaskExit& a, const TaskExit& b) {
                            return a.time < b.time;
                          })->time;
  std::optional<TaskExit> first;
  for (const auto& e : c) {
    if (e.time > earliest + margin) continue;  // clearly later, whatever the clocks
    if (!first || order(e) < order(*first)) first = e;
  }
  return first;
}

std::vector<std::string> failed_health(const std::vector<HealthCheck>& checks) {
  std::set<std::string> nodes;
  for (const auto& c : checks)
    if (!c.ok) nodes.insert(c.node);
  return {nodes.begin(), nodes.end()};
}

}  // namespace mlsup::observe
