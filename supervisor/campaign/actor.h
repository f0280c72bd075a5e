#pragma once
// What acts for a campaign's pass: each intent reconcile returns carried out as intent record -> side
// effect -> fact record (campaign/act*.cpp), and the campaign's books: its journal, the state replayed
// from it, its event log and alerts, the lease every write is made under (campaign/actor.cpp).
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "campaign/edges.h"
#include "campaign/notify.h"
#include "campaign/template_snapshot.h"
#include "config/config.h"
#include "decide/hang_stacks.h"
#include "events/kinds.h"
#include "events/act.h"
#include "events/facts.h"
#include "events/outside.h"
#include "reconcile/intents.h"
#include "render/contract.h"
#include "state/memory.h"
#include "state/records.h"
#include "state/state.h"
#include "util/error.h"

namespace mlsup::journal {
class Journal;
class EventLog;
}  // namespace mlsup::journal

namespace mlsup::engine {

// How long the engine holds the lease for beyond a side effect's start: one Slurm request (libslurm's
// retries included), and an alert (its command, 30 s, or its webhook, 10 s).
inline constexpr double kSlurmCallBound = 60;
inline constexpr double kNotifyBound = 45;

// The lifecycle verbs' requests in their folder (campaign/act_lifecycle.cpp).
std::vector<Request> read_requests(const std::string& dir);

class Actor {
 public:
  // The campaign's config, edges, memory, id and template, which outlive the actor and change under it.
  Actor(const config::Config& config, const Edges& edges, Memory& memory, const std::string& campaign_id,
        TemplateKeeper& templates);
  ~Actor();

  // Opens the campaign's journal (starting it on first use, its records replayed into the state) and
  // its event log; tells the repairs the journal needed.
  util::Result<void> open();
  // Each intent as intent record -> side effect -> fact record.
  util::Result<void> carry_out(const CampaignState& s, const Intent& i);
  // Journals the requests waiting in the requests folder, oldest first (campaign/act_lifecycle.cpp).
  util::Result<void> take_requests();
  // Alerts go where a reloaded config says.
  void reload();
  // Looks at the template again (campaign/template_snapshot.h), its problems told as events; false
  // when none has ever rendered.
  bool take_template();

  // A record of R's type (state/records.h) appended to the journal.
  template <class R>
  util::Result<void> record(const R& r) {
    return append(std::string(R::kType), nlohmann::json(r));
  }
  // A fact: the record appended, then told as event E (events/facts.h: the record's fields and E's).
  template <class R, class E>
  util::Result<void> fact(const R& r, const E& told) {
    return append_fact(std::string(R::kType), nlohmann::json(r), E::kKind, nlohmann::json(told));
  }
  // An event (events/act.h) told: the event log, the console, and an alert where notify.on asks.
  template <class E>
  void event(const E& e) {
    tell(E::kKind, nlohmann::json(e));
  }
  // tell() as a function, for what tells through the actor (the observer, the template keeper).
  Tell teller() {
    return [this](events::EventKind what, nlohmann::json fields) { tell(what, std::move(fields)); };
  }
  // The campaign as its journal tells it now: the records the journal gained since the last call
  // applied to the state kept (a reference to it, which later calls update).
  const CampaignState& state();
  // keep_lease() found another supervisor holding the campaign: nothing more is written.
  bool lease_lost() const { return lease_lost_; }
  // True when this supervisor still holds the campaign's lease (read from its file).
  bool holds_lease() { return !lease_lost_ && keep_lease(0).has_value(); }
  // Writes status.json when a step it has not said yet waits (a step alone is not written at once).
  void flush_status();
  // When the turn reserved for a submission that waits comes (monotonic seconds; nullopt: none waits).
  std::optional<double> submit_turn_at() const { return turn_at_; }

 private:
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
  // The evidence rules over a hung job's output as it is before the cancel: a finding that names a node or
  // a software cause weighs evidence (decide::weigh_hang_output) and is told (hang-explained); what the
  // cancel records of it.
  std::optional<CancelEvidence> explain_hang(const AttemptState& a, const slurm::Job& job, const std::vector<std::string>& nodes,
                                              std::vector<decide::NodeEvidence>& evidence);
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
  // A request that goes ahead journaled as its verb's record, told with why.
  util::Result<void> take(const records::Asked& asked, const Request& r, const std::string& reason);
  util::Result<void> act(const CampaignState& s, const intent::Hold& i);
  util::Result<void> act(const CampaignState& s, const intent::Release& i);
  util::Result<void> act(const CampaignState& s, const intent::ClearSwitch& i);
  util::Result<void> act(const CampaignState& s, const intent::AskToStop& i);
  util::Result<void> act(const CampaignState& s, const intent::Lift& i);
  util::Result<void> act(const CampaignState& s, const intent::MoveExclusion& i);
  // Spare nodes (campaign/act_spares.cpp): a job's claim of an attempt, its values written again.
  util::Result<void> act(const CampaignState& s, const intent::StepClaimed& i);
  util::Result<void> act(const CampaignState& s, const intent::SpareValues& i);
  util::Result<void> act(const CampaignState& s, const intent::AwaitSbatch& i);
  util::Result<void> act(const CampaignState& s, const intent::EndSbatch& i);
  util::Result<void> act(const CampaignState& s, const intent::CancelDuplicate& i);
  util::Result<void> act(const CampaignState& s, const intent::DropSpares& i);
  util::Result<void> act(const CampaignState& s, const intent::Quarantine& i);

  util::Result<void> append(const std::string& type, nlohmann::json fields);
  util::Result<void> append_fact(const std::string& type, const nlohmann::json& fields, events::EventKind what,
                                 nlohmann::json extra);
  // An event of kind what with these fields told (event() and intent::Report come here).
  void tell(events::EventKind what, nlohmann::json fields);
  void emit(const nlohmann::json& e);
  // Attempt a's values as the renderer takes them: resume_from overrides a's; the signal lead sized for
  // it only for a job of its own (a chain's task and a spare-node run keep their job's --signal).
  render::Attempt rendered(const AttemptState& a, bool own_job, const std::string* resume_from = nullptr) const;
  // sbatch for attempt a, whose intent is journaled (its turn to call sbatch waited for unless taken).
  util::Result<void> send(const AttemptState& a, bool turn_taken = false);
  // True when a new submission for attempt may call sbatch now: edges_.reserve_submit's turn came
  // (reserved on the first call, told when it is a second or more away); always without it.
  bool submit_turn(int attempt);
  // The sbatch for attempt that runs as pid, journaled; the job id a submission got, released.
  util::Result<void> sbatch_started(int attempt, int pid);
  util::Result<void> release_submission(int attempt, slurm::JobId id);
  // A failed release, told once while its reason stays the same.
  void release_failed(int attempt, slurm::JobId id, const slurm::Error& error, const std::string& decision);
  // Journals a failed sbatch and tells what follows (campaign/act_submit_retry.cpp).
  util::Result<void> submit_failed(const AttemptState& a, const slurm::Error& e);
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
  // At a hang without the helper's files, what the job's processes do on each node that answered the
  // probe (campaign/act_node_dump.cpp): one step, a file per node in the hang folder, told (hang-dump).
  void dump_nodes(const AttemptState& a, const slurm::Job& job, const std::vector<std::string>& nodes,
                  const std::vector<std::string>& silent);
  // At a hang, every rank's Python stacks (campaign/act_stacks.cpp): asked for with stacks_signal where the
  // helper made the ranks' files, waited for, judged and told (hang-stacks); nullopt when none was asked.
  std::optional<decide::StacksVerdict> gather_stacks(const AttemptState& a, const slurm::Job& job);
  void send_cancel(const AttemptState& a, decide::EndClass why);

  // Keeps the replay snapshot (store/replay_snapshot.h) when the journal gained enough records since.
  void keep_snapshot();
  double mono() const { return edges_.monotonic(); }
  Clocks clocks() const { return edges_.clocks(); }
  util::Result<void> keep_lease(double seconds);

  const config::Config& config_;
  const Edges& edges_;
  Memory& memory_;
  const std::string& campaign_id_;
  TemplateKeeper& templates_;
  std::unique_ptr<journal::Journal> journal_;
  std::unique_ptr<journal::EventLog> events_;
  CampaignState state_;         // the journal replayed, record after record as the journal hands them over
  bool lease_lost_ = false;
  std::optional<double> turn_at_;  // submit_turn(): the sbatch turn reserved, on the monotonic clock
  std::size_t snapshot_count_ = 0; // the journal's records when the replay snapshot was last kept (or read)
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
  std::optional<StatusSaid> status_due_;   // a newer step, not written yet
  // What status.json says now (nullopt: nothing readable).
  std::optional<StatusSaid> status_in_file() const;
  // Writes status.json saying said (false when it cannot, or the lease is another's now).
  bool write_status(const StatusSaid& said);
  Notifier notifier_;
};

}  // namespace mlsup::engine
