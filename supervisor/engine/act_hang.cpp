// act on a hang: keep what evidence there is (the hang command's output), probe the job's nodes,
// blame from the heartbeats that went silent first and the nodes that do not answer, then cancel.
// The probe is read here, not in observe: it only means something at the moment of the hang.
#include <filesystem>

#include "decide/blame.h"
#include "edges/process.h"
#include "engine/campaign.h"
#include "engine/reconcile.h"
#include "journal/atomic_file.h"
#include "util/strings.h"

namespace mlsup::engine {
namespace fs = std::filesystem;
using nlohmann::json;

void Campaign::keep_hang_evidence(const AttemptState& a, const slurm::Job& job, const std::vector<std::string>& nodes) {
  if (config_.heartbeat.hang_command.empty()) return;
  edges::ProcessRequest r;
  r.argv = {"/bin/sh", "-c", config_.heartbeat.hang_command};
  r.env_add = {{"MLSUP_JOB_ID", std::to_string(job.job_id)}, {"MLSUP_NODES", util::join(nodes, ",")},
               {"MLSUP_ATTEMPT", std::to_string(a.number)}, {"MLSUP_STATE_DIR", config_.state_dir}};
  r.working_dir = config_.base_dir;
  r.timeout = config_.heartbeat.hang_command_timeout;
  if (!hold(static_cast<double>(r.timeout.count()) + 5)) return;  // another supervisor holds the campaign now
  const auto done = edges::run_process(r);
  const std::string path = config_.state_dir + "/attempts/" + std::to_string(a.number) + "/hang-evidence.txt";
  const std::string outcome = !done.started ? "could not start: " + done.start_error
                              : done.timed_out ? "timed out"
                              : "exit " + std::to_string(done.exit_code);
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  (void)journal::write_atomically(path, done.out + (done.err.empty() ? "" : "\n--- stderr ---\n" + done.err), 0644);
  event("hang-evidence", {{"attempt", a.number}, {"job_id", job.job_id}, {"path", path}, {"outcome", outcome}});
}

util::Result<void> Campaign::act(const CampaignState& s, const intent::Hang& i) {
  const auto& a = i.attempt;
  const auto nodes = slurm::expand_hostlist(i.job.nodes);
  event("hang-detected", {{"attempt", a.number}, {"job_id", i.job.job_id}, {"reason", i.reason}, {"probing", nodes},
                          {"steady_timeout", config::format_duration(config::Seconds(i.steady_timeout))},
                          {"calibrated", i.calibrated}});
  keep_hang_evidence(a, i.job, nodes);
  if (!i.stale.empty()) {
    json named = json::array();
    for (const auto& st : i.stale) named.push_back({{"node", st.node}, {"lead", st.lead}});
    event("heartbeat-stale-first", {{"attempt", a.number}, {"job_id", i.job.job_id}, {"nodes", named},
                                    {"margin", stale_margin(config_.heartbeat)}});
  }
  if (auto held = hold(static_cast<double>(config_.heartbeat.probe_timeout.count()) + 5); !held) return held;
  const auto silent = edges_.probe ? edges_.probe(i.job.job_id, nodes, config_.heartbeat.probe_timeout) : std::vector<std::string>{};
  for (const auto& e : blame_exclusions(s, a.number, decide::EndClass::Hang, decide::hang_evidence(nodes, i.stale, silent),
                                        config_, edges_.now()))
    if (auto ok = act(s, e); !ok) return ok;
  return act(s, intent::Cancel{a, decide::EndClass::Hang, i.reason});
}

}  // namespace mlsup::engine
