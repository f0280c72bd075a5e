#pragma once
// One campaign's reconcile pass: replay the journal, observe what the pass needs (campaign/observe.cpp),
// decide (reconcile/reconcile.h, pure), act on each intent with its record before it (campaign/act*.cpp).
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "decide/event_kinds.h"
#include "observe/heartbeat.h"
#include "reconcile/intents.h"
#include "state/memory.h"
#include "campaign/notify.h"
#include "state/state.h"
#include "reconcile/world.h"
#include "slurm/client.h"
#include "util/error.h"
#include "util/zone.h"

namespace mlsup::journal {
class Journal;
class EventLog;
}  // namespace mlsup::journal

namespace mlsup::engine {

// The world outside the core, injected so tests can replace it.
struct Edges {
  slurm::Client* slurm = nullptr;
  std::function<double()> now;  // unix seconds
  std::function<void(const nlohmann::json&)> on_event;  // also told of every event; may be empty
  // The nodes of a running job that do not answer a probe; empty function = no probing.
  std::function<std::vector<std::string>(slurm::JobId, const std::vector<std::string>&, std::chrono::seconds)> probe;
  std::function<double()> mono;  // seconds on a clock that never steps; empty function = now
  std::string clock_id;          // which monotonic clock mono reads (host and boot)
  // Confirms that this supervisor still holds the campaign and will for seconds more (renewing the
  // lease as needed); an error of kind Superseded when another took over. Empty function = always.
  std::function<util::Result<void>(double seconds)> keep_lease;
  long long epoch = 0;           // the lease's epoch, stamped on every journal record (0 = none)
  // Waits for the supervisor's turn to call sbatch (its submit rate), returning the seconds waited;
  // empty function = no wait.
  std::function<double()> pace_submit;
  // How full the file system holding a folder is; empty function = statvfs (edges/disk_use.h).
  std::function<std::optional<decide::DiskUse>(const std::string& folder)> disk;
  // The file server's clock, as the lease reads it (nullopt: it cannot be read); empty function = now.
  std::function<std::optional<double>()> server_now;
  // When process pid of this host started (edges::process_start_ticks); empty function = that one.
  std::function<std::optional<long long>(int pid)> process_start;
  // Ends the process group of a process of this host (an earlier supervisor's sbatch past its deadline).
  std::function<void(int pid)> kill_group;
};

// How often a supervisor looks at the checkpoint folder's file system (statvfs may be an RPC to the
// servers of a parallel file system): once a minute at most, at the first pass of each process.
inline constexpr double kDiskLookEvery = 60;

// How long the engine holds the lease for beyond a side effect's start: one Slurm request (libslurm's
// retries included), and an alert (its command, 30 s, or its webhook, 10 s).
inline constexpr double kSlurmCallBound = 60;
inline constexpr double kNotifyBound = 45;

// How a campaign ended.
struct Outcome {
  int exit_code = 0;
  std::string reason;
};

// True for the kill switch's text when mlsup wrote it (a pause --now, a cancel, the window's end: what
// AskToStop writes), false for a person's `mlsup stop` ("stop requested ...") or a file of their own.
bool switch_set_by_mlsup(std::string_view text);

// The lifecycle verbs' requests in their folder (campaign/act_lifecycle.cpp).
std::vector<Request> read_requests(const std::string& dir);

class Campaign {
 public:
  // Opens the campaign's journal (starting it on first use) and claims the checkpoint directory.
  static util::Result<std::unique_ptr<Campaign>> open(config::Config config, Edges edges);
  ~Campaign();

  // One reconcile pass; returns the outcome once the campaign has ended.
  util::Result<std::optional<Outcome>> pass();

  // Takes the lifecycle verbs' requests waiting in <state_dir>/requests (state/lifecycle.h) and
  // journals them, without a reconcile round (a pass does this first).
  util::Result<void> requests();

  // Applies a new, already validated config from the next pass on.
  void reload(config::Config config);

  const config::Config& config() const { return config_; }

  // The last pass saw only its job waiting in the queue (reconcile/reconcile.h): the next may wait
  // pending_poll_interval.
  bool queued() const { return queued_; }

 private:
  Campaign(config::Config config, Edges edges);

  // One round of a pass: observe, reconcile, act (a pass runs a second one when an ending's
  // resubmission, or a failed sbatch's last word, is due at once).
  util::Result<void> round(const CampaignState& s);

  // observe (campaign/observe.cpp): what reconcile needs of the world, each source read once.
  World observe(const CampaignState& s);
  // Reads the sources n asks for that w lacks; false when it read none.
  bool read_sources(const CampaignState& s, const Needs& n, World& w);
  // The attempt's liveness files (heartbeat.source): its heartbeat files, and its output's size while
  // that is what shows life.
  std::map<std::string, std::string> read_liveness(const AttemptState& a, const World& w) const;
  // The window at wall time now (nullopt: none), worked out again only once the last change it named has come.
  std::optional<WindowNow> window_at(double now);
  // Loads the window's time zone (nothing without a window); UTC, and the error, when it cannot be.
  util::Result<void> window_zone();
  bool kill_switch() const;
  // Whether an earlier supervisor's sbatch still runs (this host), or the file server's clock (another).
  void look_at_sbatch(const SbatchRun& run, World& w) const;
  // The files a job the controller forgot left that show it started: its output (mlsup's default
  // path), its attempt's heartbeat files.
  std::vector<std::string> started_signs(const AttemptState& a, slurm::JobId id) const;
  // The checkpoint folder's file system, when a look is due (kDiskLookEvery) and the campaign has not ended.
  std::optional<decide::DiskUse> look_at_disk(const CampaignState& s);
  // Accounting's records of the attempt's job (by id), or of its tag when it has no job yet.
  slurm::Result<slurm::Accounting> accounting(const AttemptState& a);

  // act (campaign/act*.cpp): each intent as intent record -> side effect -> fact record.
  util::Result<void> carry_out(const CampaignState& s, const Intent& i);
  util::Result<void> act(const CampaignState& s, const intent::Report& i);
  util::Result<void> act(const CampaignState& s, const intent::Prune& i);
  util::Result<void> act(const CampaignState& s, const intent::Submit& i);
  util::Result<void> act(const CampaignState& s, const intent::Send& i);
  util::Result<void> act(const CampaignState& s, const intent::Adopt& i);
  util::Result<void> act(const CampaignState& s, const intent::Exclude& i);
  util::Result<void> act(const CampaignState& s, const intent::End& i);
  util::Result<void> act(const CampaignState& s, const intent::Finish& i);
  util::Result<void> act(const CampaignState& s, const intent::Hang& i);
  // The hang itself (reason as told); silent: the nodes already proven silent (nullopt: probe them all).
  util::Result<void> hang(const CampaignState& s, const intent::Hang& i, const std::string& reason,
                          std::optional<std::vector<std::string>> silent);
  // The nodes of job that do not answer a probe step, under the lease.
  util::Result<std::vector<std::string>> probe_nodes(const slurm::Job& job, const std::vector<std::string>& nodes);
  // Of nodes, those a probe shows silent, weighed with the control node and Slurm's own view
  // (decide/probe.h); a silence that proves nothing is told (probe-doubted).
  util::Result<std::vector<std::string>> proven_silent(const intent::Hang& i, const std::vector<std::string>& nodes,
                                                       const std::optional<std::string>& control);
  std::vector<std::string> slurm_silent_nodes();
  util::Result<void> act(const CampaignState& s, const intent::Cancel& i);
  util::Result<void> act(const CampaignState& s, const intent::ResendCancel& i);
  util::Result<void> act(const CampaignState& s, const intent::Relax& i);
  util::Result<void> act(const CampaignState& s, const intent::PendingAlert& i);
  util::Result<void> act(const CampaignState& s, const intent::Claimed& i);
  util::Result<void> act(const CampaignState& s, const intent::PatchQueued& i);
  util::Result<void> act(const CampaignState& s, const intent::ChainExhausted& i);
  util::Result<void> act(const CampaignState& s, const intent::ChainValues& i);
  util::Result<void> act(const CampaignState& s, const intent::Status& i);
  util::Result<void> act(const CampaignState& s, const intent::TakeRequest& i);
  util::Result<void> act(const CampaignState& s, const intent::Hold& i);
  util::Result<void> act(const CampaignState& s, const intent::Release& i);
  util::Result<void> act(const CampaignState& s, const intent::ClearSwitch& i);
  util::Result<void> act(const CampaignState& s, const intent::AskToStop& i);
  // Journals the requests waiting in the requests folder, oldest first (campaign/act_lifecycle.cpp).
  util::Result<void> take_requests();
  util::Result<void> act(const CampaignState& s, const intent::Lift& i);
  // Spare nodes (campaign/act_spares.cpp): a job's claim of an attempt, its values written again.
  util::Result<void> act(const CampaignState& s, const intent::StepClaimed& i);
  util::Result<void> act(const CampaignState& s, const intent::SpareValues& i);
  util::Result<void> act(const CampaignState& s, const intent::AwaitSbatch& i);
  util::Result<void> act(const CampaignState& s, const intent::EndSbatch& i);
  util::Result<void> act(const CampaignState& s, const intent::CancelDuplicate& i);
  util::Result<void> act(const CampaignState& s, const intent::DropSpares& i);

  // A fact: the record appended, then told as the event (the record's fields and extra).
  util::Result<void> fact(const std::string& type, const nlohmann::json& fields, decide::EventKind what,
                          nlohmann::json extra = nlohmann::json::object());
  util::Result<void> record(const std::string& type, nlohmann::json fields);
  void event(decide::EventKind what, nlohmann::json fields);
  void emit(const nlohmann::json& e);
  // The campaign as its journal tells it now: the records the journal gained since the last call
  // applied to the state kept (a reference to it, which later calls update).
  const CampaignState& state();

  // sbatch for attempt a, whose intent is journaled.
  util::Result<void> send(const AttemptState& a);
  // The sbatch for attempt that runs as pid, journaled; the job id a submission got, released.
  util::Result<void> sbatch_started(int attempt, int pid);
  util::Result<void> release_submission(int attempt, slurm::JobId id);
  // A failed release, told once while its reason stays the same.
  void release_failed(int attempt, slurm::JobId id, const slurm::Error& error, const std::string& decision);
  // Journals a failed sbatch and tells what follows (campaign/act_submit_retry.cpp).
  util::Result<void> submit_failed(const AttemptState& a, const slurm::Error& e);
  // Looks at the template file and keeps what submissions render from (campaign/template_snapshot.cpp);
  // false when no template has ever rendered.
  bool take_template();
  // Spare nodes (campaign/act_spares.cpp): attempt a's values for the job that runs it on nodes (number 0:
  // none comes, the job ends); the hand-over of a to the running job (its old run's steps killed first).
  void write_spare_values(const AttemptState& a, slurm::JobId job, const std::vector<std::string>& nodes);
  util::Result<void> hand_over_in_job(const AttemptState& a, slurm::JobId job, const std::vector<std::string>& nodes);
  // Chain mode (campaign/act_chain.cpp): the next attempt's values for the queued task, and its exclusions.
  void write_chain_values(const AttemptState& a, const std::string& resume_from);
  util::Result<void> hand_over(const AttemptState& a, const slurm::Job& queued, const std::vector<std::string>& before);
  // Keeps the nodes excluded from a off the chain's queued tasks (before: the previous attempt's
  // exclusions, the script's own stay); the ExcNodeList read back, or nullopt when nothing changed.
  std::optional<std::string> patch_queued(const AttemptState& a, const slurm::Job& queued,
                                          const std::vector<std::string>& before);
  void keep_hang_evidence(const AttemptState& a, const slurm::Job& job, const std::vector<std::string>& nodes);
  void send_cancel(const AttemptState& a, decide::EndClass why);

  double mono() const;
  Clocks clocks() const;
  util::Result<void> keep_lease(double seconds);
  void load_memory();
  void save_memory();
  // True when the memory is as when it was last saved, or last found to be (by its text), but for
  // the save times and running_seen_at: then its text is too.
  bool memory_unchanged();

  config::Config config_;
  Edges edges_;
  std::unique_ptr<journal::Journal> journal_;
  std::unique_ptr<journal::EventLog> events_;
  std::string campaign_id_;
  CampaignState state_;         // the journal replayed, record after record as the journal hands them over
  bool queued_ = false;
  bool lease_lost_ = false;     // keep_lease() found another supervisor holding the campaign: nothing more is written
  Memory memory_;             // what passes remember beyond the journal (memory.json)
  std::string memory_saved_;  // memory.json's text as last written
  // What status.json says, but for its time: compared before any JSON is built.
  struct StatusSaid {
    int attempts = 0;
    slurm::JobId job_id = 0;
    slurm::JobState state = slurm::JobState::Unknown;
    std::string nodes, reason;
    long long step = -1;
    bool operator==(const StatusSaid&) const = default;
  };
  std::optional<StatusSaid> status_said_;  // as last written
  double seen_saved_ = 0;     // memory.json's running_seen_at as last written
  std::optional<Memory> memory_checked_;  // the memory whose text was last written or found unchanged
  std::optional<std::string> template_;  // what submissions render from: the last template that rendered
  int template_nodes_ = 1;               // its job's node count
  std::optional<util::Zone> zone_;       // the window's time zone, once loaded
  WindowNow window_;                     // the window as last worked out: open, and until when (UTC s)
  std::string template_problem_;         // why that is not the file as it is now, as last told
  double disk_looked_at_ = 0;            // mono: when look_at_disk last looked (0: not yet)
  Notifier notifier_;
};

}  // namespace mlsup::engine
