// Liveness of a running attempt: its heartbeat files judged on mlsup's clock (and kept in
// memory.json so that ticks judge hangs too), the campaign's pace for calibration, and what is
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
// Names and contents come back as valid UTF-8 (other bytes spelled "\xNN"), as memory.json keeps them.
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

}  // namespace

void Campaign::look_at_heartbeat(int attempt, double now) {
  observe(memory_.heartbeat, read_heartbeats(render::heartbeat_file(config_, attempt)), now);
}

util::Result<void> Campaign::watch_running(const AttemptState& a, const slurm::Job& job) {
  const double now = mono();
  auto& seen = memory_.heartbeat;
  if (seen.running_since <= 0) seen.running_since = now;
  const HeartbeatSet before = seen;
  look_at_heartbeat(a.number, now);
  report_empty_reads(a, before);
  learn(memory_.calibration, combined(before), combined(seen));
  if (a.chain) refresh_chain_fallback(a);
  auto settings = config_.heartbeat;
  settings.steady_timeout = steady_timeout(config_.heartbeat, memory_.calibration);
  const std::string hung = hang_reason(seen, settings, now);
  if (hung.empty()) return {};
  // Before giving up on the attempt, keep what evidence there is and find out which nodes still answer.
  const auto nodes = slurm::expand_hostlist(job.nodes);
  event("hang-detected", {{"attempt", a.number}, {"job_id", job.job_id}, {"reason", hung}, {"probing", nodes},
                          {"steady_timeout", config::format_duration(settings.steady_timeout)},
                          {"calibrated", settings.steady_timeout != config_.heartbeat.steady_timeout}});
  keep_hang_evidence(a, job, nodes);
  std::vector<decide::StaleNode> stale;
  for (const auto& st : stale_first(seen, stale_margin(settings))) stale.push_back({st.node, st.lead});
  if (!stale.empty()) {
    json named = json::array();
    for (const auto& st : stale) named.push_back({{"node", st.node}, {"lead", st.lead}});
    event("heartbeat-stale-first", {{"attempt", a.number}, {"job_id", job.job_id}, {"nodes", named},
                                    {"margin", stale_margin(config_.heartbeat)}});
  }
  if (auto held = hold(static_cast<double>(config_.heartbeat.probe_timeout.count()) + 5); !held) return held;
  const auto silent = edges_.probe ? edges_.probe(job.job_id, nodes, config_.heartbeat.probe_timeout) : std::vector<std::string>{};
  const auto evidence = decide::hang_evidence(nodes, stale, silent);
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

void Campaign::load_memory() {
  auto text = util::read_file(config_.state_dir + "/memory.json");
  if (!text) text = util::read_file(config_.state_dir + "/heartbeat.json");  // an older mlsup's
  if (!text) return;
  memory_ = memory_from_json(json::parse(*text, nullptr, false));
  memory_.clock_id = memory_.clock_id.empty() ? "?" : memory_.clock_id;
  rebase(memory_, {edges_.now(), mono(), edges_.clock_id});
}

void Campaign::save_memory() {
  memory_.clock_id = edges_.clock_id;
  const std::string before = memory_saved_;
  auto j = to_json(memory_);
  j["clock"]["wall"] = nullptr;  // compared without the save times, written with them
  j["clock"]["mono"] = nullptr;
  const std::string text = util::dump_json(j);
  if (text == before) return;
  memory_.saved_wall = edges_.now();
  memory_.saved_mono = mono();
  const std::string file = util::dump_json(to_json(memory_)) + "\n";
  if (journal::write_atomically(config_.state_dir + "/memory.json", file)) memory_saved_ = text;
}

void Campaign::note_suspension(slurm::JobState state) {
  const double now = mono();
  if (state == slurm::JobState::Suspended) {
    // Suspended since the last pass that saw it run, at the latest.
    if (memory_.suspended_at <= 0) memory_.suspended_at = memory_.running_seen_at > 0 ? memory_.running_seen_at : now;
    return;
  }
  if (state != slurm::JobState::Running) return;
  if (memory_.suspended_at > 0) {  // resumed: the time it spent suspended was no silence
    shift(memory_.heartbeat, now - memory_.suspended_at);
    event("resumed", {{"attempt", memory_.attempt}, {"suspended_for", now - memory_.suspended_at},
                      {"reason", "the job was suspended; its heartbeat's silence counts from now on"}});
    memory_.suspended_at = 0;
  }
  memory_.running_seen_at = now;
}

void Campaign::report_empty_reads(const AttemptState& a, const HeartbeatSet& before) {
  for (const auto& [name, f] : memory_.heartbeat.files) {
    const auto was = before.files.find(name);
    if (f.empty_reads == 0 || (was != before.files.end() && was->second.empty_reads > 0)) continue;
    event("heartbeat-empty-read",
          {{"attempt", a.number}, {"file", name.empty() ? render::heartbeat_file(config_, a.number) : name},
           {"detail", "the heartbeat file was empty after it had content (a writer between truncating and writing it); "
                      "the read is ignored: write the file atomically (a temporary file, then rename)"}});
  }
}

}  // namespace mlsup::engine
