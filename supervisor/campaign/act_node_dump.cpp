// At a hang of a training without the Python helper (no rank made a stacks file): one step over the
// job's nodes that answered the probe (a frozen node would only make it wait its timeout) dumps what
// the job's processes do there; each node's part is kept in attempts/<N>/hang/node-<node>.txt and
// summarised in the hang-dump event. Evidence for a person: it blames no node.
#include <algorithm>
#include <filesystem>

#include "campaign/actor.h"
#include "journal/atomic_file.h"
#include "observe/node_dump.h"
#include "observe/rank_layout.h"

namespace mlsup::engine {
namespace fs = std::filesystem;

namespace {

std::vector<std::string> without(const std::vector<std::string>& nodes, const std::vector<std::string>& silent) {
  std::vector<std::string> out;
  for (const auto& n : nodes)
    if (std::find(silent.begin(), silent.end(), n) == silent.end()) out.push_back(n);
  return out;
}

events::DumpedNode told(const observe::NodeDump& d, const std::string& file) {
  events::DumpedNode n{d.node, d.tool, file, d.complete, {}};
  for (const auto& p : d.processes) n.processes.push_back({p.pid, p.rank, p.state, p.wchan, p.comm, p.by, p.frames, p.flight_recorder});
  return n;
}

}  // namespace

void Actor::dump_nodes(const AttemptState& a, const slurm::Job& job, const std::vector<std::string>& nodes,
                       const std::vector<std::string>& silent) {
  if (config_.heartbeat.node_dump != "auto" || !edges_.node_dump) return;
  const std::string folder = config_.dir().hang(a.number);
  if (!observe::rank_files(folder).empty()) return;  // the helper's stacks say more, rank by rank
  const auto asked = without(nodes, silent);
  if (asked.empty()) return;
  const auto timeout = config_.heartbeat.node_dump_timeout;
  if (!keep_lease(static_cast<double>(timeout.count()) + 5)) return;  // another supervisor holds the campaign now
  const auto done = edges_.node_dump(job.job_id, asked, timeout);
  std::error_code ec;
  fs::create_directories(folder, ec);
  events::HangDump e{a.number, job.job_id, folder, edges::outcome(done), {}, {}, {}};
  std::vector<std::string> seen;
  for (const auto& d : observe::parse_node_dumps(done.out)) {
    if (std::find(asked.begin(), asked.end(), d.node) == asked.end()) continue;  // a name the step cannot have printed
    const std::string file = folder + "/node-" + d.node + ".txt";
    (void)journal::write_atomically(file, d.text, 0644);
    e.dumps.push_back(told(d, file));
    for (const auto& p : d.processes) e.summary.push_back(d.node + ": " + observe::describe(p));
    seen.push_back(d.node);
  }
  e.missing = without(asked, seen);
  event(e);
}

}  // namespace mlsup::engine
