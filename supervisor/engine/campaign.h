#pragma once
// One campaign's reconcile pass: read the journal, look at Slurm, the heartbeat, the switches and
// the checkpoints, decide from the whole picture, act, and record the intent before every act.
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "engine/heartbeat.h"
#include "engine/memory.h"
#include "engine/notify.h"
#include "engine/state.h"
#include "slurm/client.h"
#include "util/error.h"

namespace mlsup::checkpoint {
struct Scan;
}  // namespace mlsup::checkpoint

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
  std::function<util::Result<void>(double seconds)> hold;
  long long epoch = 0;           // the lease's epoch, stamped on every journal record (0 = none)
};

// How long the engine holds the lease for beyond a side effect's start: one Slurm request (libslurm's
// retries included), and an alert (its command, 30 s, or its webhook, 10 s).
inline constexpr double kSlurmCallBound = 60;
inline constexpr double kNotifyBound = 45;

// How a campaign ended.
struct Outcome {
  int exit_code = 0;
  std::string reason;
};

class Campaign {
 public:
  // Opens the campaign's journal (starting it on first use) and claims the checkpoint directory.
  static util::Result<std::unique_ptr<Campaign>> open(config::Config config, Edges edges);
  ~Campaign();

  // One reconcile pass; returns the outcome once the campaign has ended.
  util::Result<std::optional<Outcome>> pass();

  // Applies a new, already validated config from the next pass on.
  void reload(config::Config config);

  const config::Config& config() const { return config_; }

 private:
  Campaign(config::Config config, Edges edges);

  util::Result<void> record(const std::string& type, nlohmann::json fields);
  void event(const std::string& what, nlohmann::json fields);
  void emit(const nlohmann::json& e);
  std::vector<JournalRecord> records() const;

  util::Result<void> act(const CampaignState& s);
  util::Result<void> submit(int number);
  util::Result<void> recover_submission(const AttemptState& a);
  util::Result<void> send(const AttemptState& a);
  // Journals a failed sbatch and decides on it: a retry later, or the campaign's end (engine/submit_retry.cpp).
  util::Result<void> submit_failed(const AttemptState& a, const slurm::Error& e);
  // Looks at the template file and keeps what submissions render from (engine/template_snapshot.cpp);
  // false when no template has ever rendered.
  bool take_template();
  void prune_checkpoints(const checkpoint::Scan& scan, const std::string& resume_from);
  util::Result<void> watch(const CampaignState& s, const AttemptState& a);
  util::Result<void> watch_running(const AttemptState& a, const slurm::Job& job);
  util::Result<void> exclude_blamed(const CampaignState& s, const AttemptState& a, decide::EndClass cls,
                                    const std::vector<decide::NodeEvidence>& evidence);
  std::vector<decide::NodeEvidence> node_states(const std::string& hostlist);
  std::vector<decide::NodeEvidence> ending_evidence(const slurm::Job& job, nlohmann::json& context);
  std::vector<std::string> exclusions_for(const CampaignState& s, int number);
  util::Result<void> watch_pending(const AttemptState& a, const slurm::Job& job);
  util::Result<void> relax_exclusion(const AttemptState& a, const slurm::Job& job);
  util::Result<void> end_attempt(const CampaignState& s, const AttemptState& a, const slurm::Job& job, bool vanished,
                                 bool chain_goes_on = false);

  // Chain mode (engine/chain.cpp).
  slurm::Result<std::optional<slurm::Job>> queued_task(const AttemptState* previous);
  util::Result<void> hand_over(const AttemptState& a, const slurm::Job& queued, const std::vector<std::string>& before);
  // Keeps the nodes excluded from a off the chain's queued tasks (before: the previous attempt's
  // exclusions, the script's own stay); the ExcNodeList read back, or nullopt when nothing changed.
  std::optional<std::string> patch_queued(const AttemptState& a, const slurm::Job& queued,
                                          const std::vector<std::string>& before);
  util::Result<void> watch_chain(const CampaignState& s, const AttemptState& a, const std::vector<slurm::Job>& jobs);
  // next.env for attempt a (with another resume point when given).
  void write_chain_values(const AttemptState& a, const std::string* resume_from = nullptr);
  // While a chain's attempt runs: the newest checkpoint into next.env now and then, so that a task
  // that starts while mlsup is away (its fallback) resumes from it rather than from an older one.
  void refresh_chain_fallback(const AttemptState& a);
  void cancel_rest_of_chain(const CampaignState& s);
  util::Result<void> finish(int code, const std::string& reason);
  util::Result<void> cancel(const AttemptState& a, decide::EndClass why, const std::string& reason);
  void keep_hang_evidence(const AttemptState& a, const slurm::Job& job, const std::vector<std::string>& nodes);

  std::string tag(int attempt) const;
  bool kill_switch() const;
  void look_at_heartbeat(int attempt, double now);
  void report_empty_reads(const AttemptState& a, const HeartbeatSet& before);
  double mono() const;
  util::Result<void> hold(double seconds);
  void load_memory();
  void save_memory();
  bool submit_due(const CampaignState& s);
  void note_suspension(slurm::JobState state);
  util::Result<void> retry_cancel(const AttemptState& a);
  void send_cancel(const AttemptState& a, decide::EndClass why);
  void write_status(const CampaignState& s, const std::optional<slurm::Job>& job);

  config::Config config_;
  Edges edges_;
  std::unique_ptr<journal::Journal> journal_;
  std::unique_ptr<journal::EventLog> events_;
  std::string campaign_id_;
  Memory memory_;             // what passes remember beyond the journal (memory.json)
  std::string memory_saved_;  // memory.json's text as last written
  std::string last_slurm_error_;
  std::optional<std::string> template_;  // what submissions render from: the last template that rendered
  std::string template_problem_;         // why that is not the file as it is now, as last told
  Notifier notifier_;
};

}  // namespace mlsup::engine
