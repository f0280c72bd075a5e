// observe: what the reconcile pass needs of the world, each source read at most once per round and
// only when needs() asks for it: the job query (or the lookup by tag), the kill switch, the template,
// the checkpoints, the node states, the heartbeat files, a chain's claim, a finished job's output
// and the SPANK plugin's records.
#include <algorithm>
#include <chrono>
#include <charconv>
#include <filesystem>
#include <ios>
#include <map>

#include "decide/window.h"
#include "edges/disk_use.h"
#include "edges/process.h"
#include "journal/lease.h"
#include "observe/output_tail.h"
#include "observe/rank_layout.h"
#include "campaign/disk_facts.h"
#include "campaign/observer.h"
#include "reconcile/reconcile.h"
#include "reconcile/window_now.h"
#include "render/chain.h"
#include "render/contract.h"
#include "render/end_record.h"
#include "render/spares.h"
#include "slurm_model/srun_messages.h"
#include "util/files.h"
#include "util/strings.h"

namespace mlsup::engine {
namespace fs = std::filesystem;

namespace {

// One look at an attempt's heartbeat files: P itself (key "") and every P.d/<name> the SPANK plugin's
// per-task paths give (hidden files, such as a writer's temporary ones, are skipped). One listing.
// Names and contents come back as valid UTF-8 (other bytes spelled "\xNN"), as memory.json keeps them.
// A heartbeat's first bytes are all it says (a step, phase words); a file that grows is read no further.
constexpr std::size_t kHeartbeatBytes = 256;

// newest: the latest write time among the files read (unix seconds; 0: none). heads reads a file
// again only when it changed, and forgets the files this look did not find.
std::map<std::string, std::string> read_heartbeats(const std::string& path, edges::FileHeads& heads, double& newest) {
  std::map<std::string, std::string> out;
  auto read = [&](const std::string& file, const std::string& name) {
    if (const auto head = heads.read(file, kHeartbeatBytes)) {
      out[name] = util::valid_utf8(head->text);
      newest = std::max(newest, head->written);
    }
  };
  read(path, "");
  std::error_code ec;
  std::size_t seen = 0;
  for (fs::directory_iterator it(path + ".d", ec), end; !ec && it != end && seen < 4096; it.increment(ec), ++seen) {
    const std::string name = util::valid_utf8(it->path().filename().string());
    std::error_code gone;  // a file renamed away meanwhile is skipped; the listing goes on
    if (name.empty() || name[0] == '.' || !it->is_regular_file(gone)) continue;
    read(it->path().string(), name);
  }
  heads.forget_unread();
  return out;
}

// The bytes of the lines mlsup's own preamble wrote ("mlsup: ...") among the first of a file: they
// show the batch script started, not that the training lives (at width its ranks start long after).
constexpr std::size_t kPreambleBytes = 64 * 1024;

unsigned long long preamble_bytes(const std::string& path) {
  const auto head = util::read_head(path, kPreambleBytes);
  if (!head) return 0;
  unsigned long long bytes = 0;
  for (std::size_t at = 0, end; (end = head->find('\n', at)) != std::string::npos; at = end + 1)
    if (head->compare(at, 7, "mlsup: ") == 0) bytes += end + 1 - at;
  return bytes;
}

// The size of the job's output (and its error file when separate), less mlsup's own lines, as the
// set's output entry, when it has any: what shows a training's life before, or without, a heartbeat.
void read_output(const slurm::Job& job, std::map<std::string, std::string>& out) {
  std::error_code ec;
  unsigned long long bytes = 0;
  for (const auto& path : {job.std_out, job.std_err == job.std_out ? std::string() : job.std_err})
    if (!path.empty())
      if (const auto n = fs::file_size(path, ec); !ec && n > 0) bytes += n - std::min<unsigned long long>(n, preamble_bytes(path));
  if (bytes > 0) out[kOutputKey] = output_content(bytes);
}

// What a finished job left about its nodes: srun's reports in its output, the plugin's records, and
// the output's tail the evidence rules read.
EndingOutput ending_output(const slurm::Job& job, const config::Config& c, int attempt) {
  auto output = observe::output_tail(job.std_out, job.std_err);
  auto first = slurm::first_task_end(slurm::srun_task_reports(output));
  return {std::move(first), observe::read_node_records(c.state_dir, job.job_id), std::move(output),
          observe::rank_layout(c.dir().hang(attempt))};
}

// The job whose ending is judged: the watched one as the query showed it, or only its id.
slurm::Job ended_job(const AttemptState& a, const World& w) {
  if (w.jobs && *w.jobs)
    if (const auto* job = watched_job(a, **w.jobs)) return *job;
  return slurm::Job{.job_id = a.task_job_id.value_or(a.job_id.value_or(0))};
}

// An exit status as a spare-node job's loop writes it ("137\n"); nullopt while incomplete.
std::optional<int> parse_status(const std::string& text) {
  if (text.empty() || text.back() != '\n') return std::nullopt;
  const auto t = util::trim(text);
  int v = 0;
  const auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || ptr != t.data() + t.size()) return std::nullopt;
  return v;
}

}  // namespace

Observer::Observer(const config::Config& config, const Edges& edges, const Memory& memory, const std::string& campaign_id,
                   TemplateKeeper& templates, Tell tell)
    : config_(config), edges_(edges), memory_(memory), campaign_id_(campaign_id), templates_(templates), tell_(std::move(tell)) {}

util::Result<void> Observer::window_zone() {
  zone_.reset();
  window_ = {};
  if (config_.window.hours.empty()) return {};
  auto z = util::load_zone(config_.window.zone);
  if (z) {
    zone_ = std::move(*z);
    return {};
  }
  zone_ = util::Zone{"UTC", {}, {}, 0, std::nullopt};
  return std::unexpected(util::Error{.kind = util::ErrorKind::Config, .file = config_.source_file, .subject = "window.zone", .message = z.error().message});
}

slurm::Result<slurm::Accounting> Observer::accounting(const AttemptState& a) {
  if (a.job_id) return edges_.slurm->accounted({a.task_job_id.value_or(*a.job_id)});
  const auto since = a.submit_failures.empty() ? 0.0 : a.submit_failures.front().time - 3600;  // clocks may differ
  return edges_.slurm->accounted_by_tag(a.tag, static_cast<std::time_t>(since));
}

std::vector<std::string> Observer::started_signs(const AttemptState& a, slurm::JobId id) const {
  std::vector<std::string> signs;
  std::error_code ec;
  const std::string ending = "-" + std::to_string(id) + ".out";  // mlsup's default output, logs/%x-%j.out
  for (fs::directory_iterator it(config_.dir().logs(), ec), end; !ec && it != end; it.increment(ec))
    if (it->path().filename().string().ends_with(ending)) signs.push_back("its output " + it->path().string());
  const std::string heartbeat = render::heartbeat_file(config_, a.number);
  if (fs::exists(heartbeat, ec)) signs.push_back("its heartbeat file " + heartbeat);
  if (fs::is_directory(heartbeat + ".d", ec) && !fs::is_empty(heartbeat + ".d", ec))
    signs.push_back("its per-task heartbeat files in " + heartbeat + ".d");
  return signs;
}

void Observer::look_at_sbatch(const SbatchRun& run, World& w) const {
  const auto me = journal::current_identity();
  if (run.host == me.host && run.boot_id == me.boot_id && !me.boot_id.empty()) {
    const auto started = edges_.process_start ? edges_.process_start(run.pid) : edges::process_start_ticks(run.pid);
    w.sbatch_running = started && *started == run.start_ticks;
    return;
  }
  w.server_now = edges_.server_now ? edges_.server_now() : std::nullopt;
}

bool switch_set_by_mlsup(std::string_view text) {
  for (const char* why : {"pause requested", "cancel requested", "window requested"})
    if (text.starts_with(why)) return true;
  return false;
}

bool Observer::kill_switch() const {
  std::error_code ec;
  return fs::exists(config_.switches.kill, ec);
}

World Observer::observe(const CampaignState& s) {
  World w;
  w.now = edges_.clocks();
  w.kill_switch = kill_switch();
  w.kill_switch_ours = w.kill_switch && switch_set_by_mlsup(util::read_file(config_.switches.kill).value_or(""));
  w.window = window_at(w.now.wall);
  w.disk = look_at_disk(s);
  if (w.disk) look_at_runway(w);
  for (int round = 0; round < 4 && read_sources(s, needs(s, w, memory_, config_), w); ++round) {
  }
  return w;
}

std::optional<WindowNow> Observer::window_at(double now) {
  const auto& cw = config_.window;
  if (cw.hours.empty() || !zone_) return std::nullopt;
  const auto window = config::parse_window(cw.hours, cw.days);
  if (!window) return std::nullopt;  // refused when the config was loaded
  const auto t = static_cast<std::int64_t>(now);
  const bool open = decide::window_open(*window, *zone_, t);
  if (window_.changes_at == 0 || open != window_.open || t >= window_.changes_at)  // also after a clock step
    window_ = *window_in(config_, *zone_, now);  // the minute-by-minute search, only when the answer changes
  return window_;
}

std::optional<decide::DiskUse> Observer::look_at_disk(const CampaignState& s) {
  const double now = edges_.monotonic();
  if (s.finished_code || (disk_looked_at_ != 0 && now - disk_looked_at_ < kDiskLookEvery)) return std::nullopt;
  disk_looked_at_ = now;
  if (edges_.disk) return edges_.disk(config_.checkpoint.dir);
  const auto use = edges::disk_usage(config_.checkpoint.dir);
  if (!use) return std::nullopt;
  return decide::DiskUse{use->path, use->bytes_percent, use->inodes_percent, use->free_bytes, use->free_inodes, use->device};
}

void Observer::look_at_runway(World& w) const {
  DiskFacts facts;
  checkpoint_facts(config_, memory_, facts, w.runway_sized);
  w.runway = runway_inputs(config_, pace_figures(memory_.pace), facts);
}

std::map<std::string, std::string> Observer::read_liveness(const AttemptState& a, World& w) {
  const auto& source = config_.heartbeat.source;
  std::map<std::string, std::string> out;
  if (source != "output") out = read_heartbeats(render::heartbeat_file(config_, a.number), heads_, w.heartbeat_written_at);
  const bool written = heartbeat_written(memory_.heartbeat) ||
                       std::any_of(out.begin(), out.end(), [](const auto& f) { return !util::trim(f.second).empty(); });
  const bool output = source == "output" || (source == "auto" && !written);
  if (output && w.jobs && *w.jobs)
    if (const auto* job = watched_job(a, **w.jobs)) read_output(*job, out);
  return out;
}

bool Observer::read_sources(const CampaignState& s, const Needs& n, World& w) {
  const AttemptState* a = s.current();
  bool read = false;
  auto want = [&read](bool needed, bool have) { return needed && !have && (read = true); };
  if (want(n.jobs, w.jobs.has_value())) w.jobs = edges_.slurm->jobs({*a->job_id});
  if (want(n.by_tag, w.by_tag.has_value())) w.by_tag = edges_.slurm->find_by_tag(a->tag);
  if (want(n.tagged, w.tagged.has_value()))  // the same load of the user's jobs answers it (slurm/shared_query.h)
    w.tagged = edges_.slurm->find_by_tag(render::campaign_tag_prefix(config_.name, campaign_id_));
  if (want(n.sbatch, w.sbatch_read)) {
    look_at_sbatch(*a->sbatch, w);
    w.sbatch_read = true;
  }
  if (want(n.chain, w.chain.has_value())) w.chain = edges_.slurm->jobs({*a->job_id});
  if (want(n.template_text, w.template_read)) {
    templates_.take(config_, tell_);
    w.template_text = templates_.text();
    w.template_nodes = templates_.nodes();
    w.template_read = true;
  }
  if (want(n.checkpoints, w.checkpoints.has_value())) {
    w.checkpoints = checkpoint::scan(config_.checkpoint);
    if (!config_.slurm.array.empty()) w.handed = util::read_file(config_.dir().chain() + "/next.env").value_or("");
  }
  if (want(n.nodes, w.nodes.has_value())) w.nodes = edges_.slurm->nodes();
  if (want(n.heartbeat, w.heartbeat.has_value())) w.heartbeat = read_liveness(*a, w);
  if (want(n.ending, w.ending.has_value())) w.ending = ending_output(ended_job(*a, w), config_, a->number);
  if (want(n.accounting, w.accounting.has_value())) w.accounting = accounting(*a);
  if (want(n.end_record, w.end_record_read)) {
    const auto id = ended_job(*a, w).job_id;
    w.end_record = util::read_file(config_.dir().ends() + "/" + std::to_string(id));
    w.started_signs = started_signs(*a, id);
    w.end_record_read = true;
  }
  if (want(n.claim, w.claim_read)) {
    const auto text = util::read_file(config_.dir().chain() + "/claims/" + std::to_string(a->number) + "/task");
    w.claim = parse_claim(text.value_or(""));
    w.claim_read = true;
  }
  if (want(n.spare, w.spare_read)) {
    const std::string at = config_.dir().spares() + "/claims/" + std::to_string(a->number);
    w.spare_claim = render::parse_spare_claim(util::read_file(at + "/task").value_or(""));
    w.spare_end = parse_status(util::read_file(at + "/end").value_or(""));
    w.spare_read = true;
  }
  return read;
}

}  // namespace mlsup::engine
