// Liveness of a running attempt: its heartbeat files judged on mlsup's clock (and kept in
// heartbeat.json so that ticks judge hangs too), the campaign's pace for calibration, and what is
// done on a hang before the cancel: evidence, probes, blame.
#include <algorithm>
#include <filesystem>
#include <map>

#include "edges/process.h"
#include "engine/campaign.h"
#include "journal/atomic_file.h"
#include "render/contract.h"
#include "util/files.h"
#include "util/json.h"
#include "util/strings.h"

namespace mlsup::engine {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// One look at an attempt's heartbeat files: P itself (key "") and every P.d/<name> the SPANK plugin's
// per-task paths give (hidden files, such as a writer's temporary ones, are skipped). One listing.
// Names and contents come back as valid UTF-8 (other bytes spelled "\xNN"), as heartbeat.json keeps them.
std::map<std::string, std::string> read_heartbeats(const std::string& path) {
  std::map<std::string, std::string> out;
  if (auto p = util::read_file(path)) out[""] = util::valid_utf8(*p);
  std::error_code ec;
  std::size_t seen = 0;
  for (fs::directory_iterator it(path + ".d", ec), end; !ec && it != end && seen < 4096; it.increment(ec), ++seen) {
    const std::string name = util::valid_utf8(it->path().filename().string());
    std::error_code gone;  // a file renamed away meanwhile is skipped; the listing goes on
    if (name.empty() || name[0] == '.' || !it->is_regular_file(gone)) continue;
    if (auto text = util::read_file(it->path().string())) out[name] = util::valid_utf8(*text);
  }
  return out;
}

// What heartbeat.json (j) kept of attempt's heartbeat, and the campaign's pace when none is known yet.
// Throws json::exception on a field of the wrong type.
void restore_heartbeat(const json& j, int attempt, HeartbeatSet& heartbeat, Calibration& calibration) {
  if (calibration.steps == 0 && j.contains("calibration") && j["calibration"].is_object())  // the campaign's pace
    calibration = {j["calibration"].value("longest", 0.0), j["calibration"].value("steps", 0)};
  if (j.value("attempt", 0) != attempt) return;
  heartbeat.running_since = j.value("running_since", 0.0);
  // Each file's observation; a file of an older mlsup has only P's, at the top level.
  const json files = j.contains("files") && j["files"].is_object() ? j["files"] : json{{"", j}};
  for (const auto& [name, f] : files.items()) {
    if (!f.is_object()) continue;
    auto seen = parse_heartbeat(f.value("content", ""));
    seen.changed_at = f.value("changed_at", 0.0);
    seen.progress_at = f.value("progress_at", seen.waiting ? 0.0 : seen.changed_at);
    seen.running_since = heartbeat.running_since;
    heartbeat.files[name] = seen;
  }
}

}  // namespace

void Campaign::look_at_heartbeat(int attempt, double now) {
  observe(heartbeat_, read_heartbeats(render::heartbeat_file(config_, attempt)), now);
}

util::Result<void> Campaign::watch_running(const AttemptState& a, const slurm::Job& job) {
  const double now = edges_.now();
  if (heartbeat_.running_since <= 0) heartbeat_.running_since = now;
  const auto before = combined(heartbeat_);
  look_at_heartbeat(a.number, now);
  learn(calibration_, before, combined(heartbeat_));
  save_heartbeat(a.number);
  if (a.chain) refresh_chain_fallback(a);
  if (a.cancel_reason) return {};
  auto settings = config_.heartbeat;
  settings.steady_timeout = steady_timeout(config_.heartbeat, calibration_);
  const std::string hung = hang_reason(heartbeat_, settings, now);
  if (hung.empty()) return {};
  // Before giving up on the attempt, keep what evidence there is and find out which nodes still answer.
  std::vector<decide::NodeEvidence> evidence;
  const auto nodes = slurm::expand_hostlist(job.nodes);
  event("hang-detected", {{"attempt", a.number}, {"job_id", job.job_id}, {"reason", hung}, {"probing", nodes},
                          {"steady_timeout", config::format_duration(settings.steady_timeout)},
                          {"calibrated", settings.steady_timeout != config_.heartbeat.steady_timeout}});
  keep_hang_evidence(a, job, nodes);
  const auto stale = stale_first(heartbeat_, stale_margin(settings));
  for (const auto& n : nodes) {
    evidence.push_back({n});
    for (const auto& st : stale) {
      if (st.node != n) continue;
      evidence.back().heartbeat_stale_first = true;
      evidence.back().heartbeat_lead = st.lead;
    }
  }
  if (!stale.empty()) {
    json named = json::array();
    for (const auto& st : stale) named.push_back({{"node", st.node}, {"lead", st.lead}});
    event("heartbeat-stale-first", {{"attempt", a.number}, {"job_id", job.job_id}, {"nodes", named},
                                    {"margin", stale_margin(config_.heartbeat)}});
  }
  const auto silent = edges_.probe ? edges_.probe(job.job_id, nodes, config_.heartbeat.probe_timeout) : std::vector<std::string>{};
  for (auto& e : evidence) e.not_responding = std::find(silent.begin(), silent.end(), e.name) != silent.end();
  if (auto ok = exclude_blamed(replay(records()), a, decide::EndClass::Hang, evidence); !ok) return ok;
  return cancel(a, decide::EndClass::Hang, hung);
}

void Campaign::keep_hang_evidence(const AttemptState& a, const slurm::Job& job, const std::vector<std::string>& nodes) {
  if (config_.heartbeat.hang_command.empty()) return;
  edges::ProcessRequest r;
  r.argv = {"/bin/sh", "-c", config_.heartbeat.hang_command};
  r.env_add = {{"MLSUP_JOB_ID", std::to_string(job.job_id)}, {"MLSUP_NODES", util::join(nodes, ",")},
               {"MLSUP_ATTEMPT", std::to_string(a.number)}, {"MLSUP_STATE_DIR", config_.state_dir}};
  r.working_dir = config_.base_dir;
  r.timeout = config_.heartbeat.hang_command_timeout;
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

void Campaign::load_heartbeat(int attempt) {
  if (heartbeat_attempt_ == attempt) return;
  heartbeat_ = {};
  heartbeat_attempt_ = attempt;
  const auto text = util::read_file(config_.state_dir + "/heartbeat.json");
  if (!text) return;
  const auto j = json::parse(*text, nullptr, false);
  if (!j.is_object()) return;
  // heartbeat.json only spares a restart a fresh look; one with a field of the wrong type is set aside.
  const Calibration pace = calibration_;
  try {
    restore_heartbeat(j, attempt, heartbeat_, calibration_);
  } catch (const json::exception&) {
    heartbeat_ = {};
    calibration_ = pace;
  }
}

void Campaign::save_heartbeat(int attempt) {
  const auto all = combined(heartbeat_);
  json files = json::object();
  for (const auto& [name, f] : heartbeat_.files)
    files[name] = {{"content", f.content}, {"changed_at", f.changed_at}, {"progress_at", f.progress_at}};
  const json j = {{"attempt", attempt}, {"content", all.content}, {"changed_at", all.progress_at},
                  {"running_since", heartbeat_.running_since}, {"files", files},
                  {"calibration", {{"longest", calibration_.longest}, {"steps", calibration_.steps}}}};
  (void)journal::write_atomically(config_.state_dir + "/heartbeat.json", util::dump_json(j) + "\n");
}

}  // namespace mlsup::engine
