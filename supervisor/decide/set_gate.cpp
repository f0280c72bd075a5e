#include "decide/set_gate.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>

namespace mlsup::engine {
namespace {

struct GateNameRow {
  Gate gate;
  const char* name;
};
constexpr GateNameRow kGateNames[] = {
    {Gate::Started, "started"}, {Gate::Start, "may-start"}, {Gate::Wait, "waiting"}, {Gate::Blocked, "blocked"}};

// The dependencies' verdict on a run that has not started: Start when all completed.
GateDecision by_dependencies(const GateRun& r, const std::map<std::string, std::size_t>& index,
                             const std::vector<GateRun>& runs, std::vector<std::optional<GateDecision>>& memo);

GateDecision decided(std::size_t i, const std::map<std::string, std::size_t>& index, const std::vector<GateRun>& runs,
                     std::vector<std::optional<GateDecision>>& memo) {
  if (memo[i]) return *memo[i];
  memo[i] = GateDecision{Gate::Wait, "(a cycle)", 0};  // never read for a valid set: cycles are refused when it is loaded
  const GateRun& r = runs[i];
  GateDecision d = r.phase == RunPhase::NotStarted ? by_dependencies(r, index, runs, memo) : GateDecision{Gate::Started, "", 0};
  memo[i] = d;
  return d;
}

GateDecision by_dependencies(const GateRun& r, const std::map<std::string, std::size_t>& index,
                             const std::vector<GateRun>& runs, std::vector<std::optional<GateDecision>>& memo) {
  std::vector<std::string> pending;
  for (const auto& dep : r.after) {
    const auto at = index.find(dep);
    if (at == index.end()) continue;
    const GateRun& d = runs[at->second];
    if (d.phase == RunPhase::Ended)
      return {Gate::Blocked, "after " + dep + ", which ended with exit " + std::to_string(d.exit_code) +
                                 " (not completed); `mlsup resume` it, or remove it from this run's `after`", d.exit_code};
    if (d.phase == RunPhase::NotStarted) {
      const auto up = decided(at->second, index, runs, memo);
      if (up.gate == Gate::Blocked) return {Gate::Blocked, "after " + dep + ", which is blocked: " + up.reason, up.exit_code};
    }
    if (d.phase != RunPhase::Completed) pending.push_back(dep + (d.phase == RunPhase::Active ? " (running)" : " (not started)"));
  }
  if (pending.empty()) return {Gate::Start, "", 0};
  std::string list;
  for (const auto& p : pending) list += (list.empty() ? "" : ", ") + p;
  return {Gate::Wait, "after " + list, 0};
}

}  // namespace

const char* gate_name(Gate g) {
  for (const auto& row : kGateNames)
    if (row.gate == g) return row.name;
  return "?";
}

std::vector<GateDecision> decide_starts(const std::vector<GateRun>& runs, int max_running, int max_nodes) {
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < runs.size(); ++i) index.emplace(runs[i].name, i);
  std::vector<std::optional<GateDecision>> memo(runs.size());
  std::vector<GateDecision> out;
  int running = 0, nodes = 0;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    out.push_back(decided(i, index, runs, memo));
    if (runs[i].phase == RunPhase::Active) ++running, nodes += runs[i].nodes;
  }
  std::vector<std::size_t> ready;
  for (std::size_t i = 0; i < runs.size(); ++i)
    if (out[i].gate == Gate::Start) ready.push_back(i);
  std::stable_sort(ready.begin(), ready.end(), [&](std::size_t a, std::size_t b) { return runs[a].priority > runs[b].priority; });
  std::string full;  // once set, every later run waits for the same reason
  for (const auto i : ready) {
    if (full.empty() && max_running > 0 && running >= max_running)
      full = "max_running " + std::to_string(max_running) + " reached (" + std::to_string(running) + " running)";
    if (full.empty() && max_nodes > 0 && nodes + runs[i].nodes > max_nodes)
      full = "max_nodes " + std::to_string(max_nodes) + " reached (" + std::to_string(nodes) + " in use, " +
             runs[i].name + " needs " + std::to_string(runs[i].nodes) + ")";
    if (!full.empty()) {
      out[i] = {Gate::Wait, full, 0};
      continue;
    }
    ++running, nodes += runs[i].nodes;
  }
  return out;
}

}  // namespace mlsup::engine
