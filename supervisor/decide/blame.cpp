#include "decide/blame.h"

#include <algorithm>
#include <map>

namespace mlsup::decide {
namespace {

// Nodes that did not answer: direct evidence, whatever the job's size.
void unresponsive(const BlameInput& in, std::vector<Blamed>& out) {
  for (const auto& n : in.job_nodes)
    if (n.not_responding && !n.slurm_down)
      out.push_back({n.name, "did not respond when the attempt ended as " + std::string(class_name(in.cls))});
}

// Nodes of this job that were also in the earlier failures within the window, often enough.
void repeated(const BlameInput& in, std::vector<Blamed>& out) {
  if (in.cls != EndClass::Failed && in.cls != EndClass::Hang) return;
  std::map<std::string, int> count;
  for (const auto& f : in.past) {
    if (in.now - f.time >= in.window_seconds) continue;
    for (const auto& node : f.nodes) ++count[node];
  }
  std::vector<Blamed> found;
  for (const auto& n : in.job_nodes) {
    const int failures = count[n.name] + 1;
    if (n.slurm_down || failures < in.repeat_threshold) continue;
    found.push_back({n.name, "in " + std::to_string(failures) + " failed attempts within the window"});
  }
  // Only a node that sets itself apart: if every node of the job is equally suspect, nothing is known.
  if (found.size() < in.job_nodes.size()) out.insert(out.end(), found.begin(), found.end());
}

}  // namespace

bool node_related(EndClass c) {
  return c == EndClass::Failed || c == EndClass::NodeFail || c == EndClass::Hang || c == EndClass::BootFail ||
         c == EndClass::Lost;
}

std::vector<Blamed> blame(const BlameInput& in) {
  std::vector<Blamed> out;
  if (!node_related(in.cls)) return out;
  unresponsive(in, out);
  if (out.empty()) repeated(in, out);
  return out;
}

}  // namespace mlsup::decide
