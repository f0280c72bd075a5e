#include "decide/blame.h"

#include "decide/classes.h"

#include <algorithm>
#include <array>
#include <csignal>
#include <map>

namespace mlsup::decide {
namespace {

bool specific(const NodeEvidence& n) {
  return n.task_failed || n.failed_first || n.heartbeat_stale_first || !n.waited_on.empty() || !n.named_by_output.empty();
}

// The first-evidence rule: in a failed job of several nodes, the node of the first failing task.
bool first_named(const BlameInput& in, const NodeEvidence& n) {
  return in.first_evidence && (n.task_failed || n.failed_first) && !n.first_killed && in.job_nodes.size() > 1 &&
         in.cls == EndClass::Failed;
}

// A failure that follows the training: its weak first end, and any srun reported, set no node apart.
BlameInput without_weak_ends(BlameInput in) {
  for (auto& n : in.job_nodes)
    if (n.task_failed || (n.failed_first && n.first_weak)) n.task_failed = n.failed_first = false;
  return in;
}

// Direct evidence against a node, whatever came before: it did not answer, its health check failed,
// or (in a job of several nodes) the plugin saw its task fail first by a machine fault's signal, or
// its per-task heartbeat went silent well before the other nodes' in a hang; then, under the
// first-evidence rule, the node of the first failing task however it ended.
void direct(const BlameInput& in, std::vector<Blamed>& out) {
  const std::string ending = std::string(class_name(in.cls));
  for (const auto& n : in.job_nodes) {
    if (n.slurm_down) continue;
    const std::string stopped = "its heartbeat stopped " + std::to_string(static_cast<long long>(n.heartbeat_lead)) +
                                " s before the other nodes'";
    const bool stale = n.heartbeat_stale_first && in.job_nodes.size() > 1 && in.cls == EndClass::Hang;
    if (n.not_responding)
      out.push_back({n.name, "did not respond when the attempt ended as " + ending + (stale ? "; " + stopped : "")});
    else if (n.health_failed) out.push_back({n.name, "its health check failed (the attempt ended as " + ending + ")"});
    else if (n.failed_first && !n.first_weak && in.job_nodes.size() > 1 && in.cls == EndClass::Failed)
      out.push_back({n.name, "the job's first failing task ran there, ended by a machine fault's signal; the other "
                             "nodes' tasks were ended after it"});
    else if (!n.named_by_output.empty() && in.cls == EndClass::Hang) out.push_back({n.name, n.named_by_output});
    else if (stale) out.push_back({n.name, stopped + " (the attempt ended as " + ending + ")"});
    else if (!n.waited_on.empty() && in.job_nodes.size() > 1 && in.cls == EndClass::Hang)
      out.push_back({n.name, "the hang's stacks: " + n.waited_on});
    else if (first_named(in, n))
      out.push_back({n.name, std::string("the job's first failing task ran there (") +
                                 (n.failed_first ? "the plugin's records" : "srun's report") +
                                 "); the other nodes' tasks were ended after it", true});
  }
}

// Without evidence that sets nodes apart, the most nodes the repeated-failure rule blames at once.
constexpr std::size_t kCommonAtMost = 2;

// Suspects of this failure that were also suspects of earlier failures within the window, often enough.
void repeated(const BlameInput& in, std::vector<Blamed>& out) {
  if (in.cls != EndClass::Failed && in.cls != EndClass::Hang) return;
  std::map<std::string, int> count;
  for (const auto& f : in.past) {
    if (in.now - f.time >= in.window_seconds) continue;
    for (const auto& node : f.nodes) ++count[node];
  }
  const auto now_suspects = suspects(in.job_nodes);
  std::vector<Blamed> found;
  for (const auto& n : in.job_nodes) {
    if (n.slurm_down || std::find(now_suspects.begin(), now_suspects.end(), n.name) == now_suspects.end()) continue;
    const int failures = count[n.name] + 1;
    if (failures < in.repeat_threshold) continue;
    found.push_back({n.name, "suspect in " + std::to_string(failures) + " failed attempts within the window" +
                                 (specific(n) ? " (named first by this failure's evidence)" : "")});
  }
  // Without evidence that sets a node apart, being common to the failures says something only when
  // their nodes differed (else every node is equally common), and of a few nodes at most: a fault of
  // many nodes at once needs evidence, not coincidence (a wide job's repeated hangs are the training's).
  const bool set_apart = std::any_of(in.job_nodes.begin(), in.job_nodes.end(), specific);
  if (set_apart) return out.insert(out.end(), found.begin(), found.end()), void();
  if (found.empty() || found.size() > kCommonAtMost) return;
  const auto in_found = [&](const std::string& node) {
    return std::any_of(found.begin(), found.end(), [&](const Blamed& b) { return b.node == node; });
  };
  const bool varied = std::any_of(in.past.begin(), in.past.end(), [&](const auto& f) {
    return in.now - f.time < in.window_seconds && !std::all_of(f.nodes.begin(), f.nodes.end(), in_found);
  });
  if (varied) out.insert(out.end(), found.begin(), found.end());
}

}  // namespace

bool node_related(EndClass c) { return row(c).node_related; }

std::vector<NodeEvidence> hang_evidence(const std::vector<std::string>& nodes, const std::vector<StaleNode>& stale,
                                        const std::vector<std::string>& silent, const std::vector<std::string>& waited_on,
                                        const std::string& why) {
  std::vector<NodeEvidence> out;
  for (const auto& n : nodes) {
    NodeEvidence e{n};
    if (std::find(waited_on.begin(), waited_on.end(), n) != waited_on.end()) e.waited_on = why;
    e.not_responding = std::find(silent.begin(), silent.end(), n) != silent.end();
    for (const auto& st : stale) {
      if (st.node != n) continue;
      e.heartbeat_stale_first = true;
      e.heartbeat_lead = st.lead;
    }
    out.push_back(e);
  }
  return out;
}

bool weak_end(int exit_code, int signal) {
  constexpr std::array<int, 3> kMachineFaults = {SIGSEGV, SIGBUS, SIGILL};
  return exit_code != 0 || std::find(kMachineFaults.begin(), kMachineFaults.end(), signal) == kMachineFaults.end();
}

std::vector<std::string> suspects(const std::vector<NodeEvidence>& job_nodes) {
  std::vector<std::string> named, all;
  for (const auto& n : job_nodes) {
    all.push_back(n.name);
    if (specific(n)) named.push_back(n.name);
  }
  return named.empty() ? all : named;
}

std::vector<Blamed> blame(const BlameInput& given) {
  std::vector<Blamed> out;
  if (!node_related(given.cls)) return out;
  const BlameInput in = given.follows_training ? without_weak_ends(given) : given;
  direct(in, out);
  if (out.empty() && !in.follows_training) repeated(in, out);
  return out;
}

}  // namespace mlsup::decide
