#pragma once
// Every kind of event mlsup tells (events.jsonl, the console, notifications), in one table. An event
// is made only from a name in it (checked when the code compiles: EventKind), `events --kind` takes
// only these, and README's list of event kinds is checked against it.

#include <string>
#include <string_view>
#include <utility>

namespace mlsup::events {

struct EventKindRow {
  std::string_view name;
  std::string_view tells;  // what happened, in a few words (README's list)
};

inline constexpr EventKindRow kEventKinds[] = {
    {"accounting-unavailable", "Slurm's accounting could not be asked about an ending; read from the other sources"},
    {"adopted", "a job found by its tag after an sbatch of unknown outcome is taken as the attempt's"},
    {"attempt-ended", "an attempt ended: its class, blame, exit code, output tail and what was decided"},
    {"budget-nearly-spent", "a restart budget is nearly used up"},
    {"campaign-paused", "`mlsup pause` was carried out"},
    {"campaign-resumed", "`mlsup resume` was carried out"},
    {"cancel-failed", "scancel of a job failed; tried again"},
    {"cancel-requested", "`mlsup cancel` was carried out"},
    {"cancelling", "a job is being cancelled, and why"},
    {"capacity-restored", "the nodes a job waited for are back"},
    {"capacity-short", "fewer usable nodes than the job needs: it waits, and for what"},
    {"chain-cancelled", "the rest of a job array's chain was cancelled"},
    {"chain-excluded", "the chain's queued task was given the nodes excluded since"},
    {"chain-exhausted", "a chain's tasks are used up; a new array is submitted"},
    {"chain-task-unclaimed", "a chain task started without taking its turn"},
    {"chain-values-failed", "the chain's next.env could not be written"},
    {"checkpoint-deleted", "retention deleted a checkpoint no longer needed"},
    {"checkpoint-pointer-ignored", "the checkpoint folder's pointer to the newest is wrong and was not followed"},
    {"checkpoint-quarantined", "attempts failed before any step from a checkpoint: it was moved aside, and the next resumes from the one before"},
    {"claimed", "a chain task took its turn"},
    {"completed", "the campaign reached its target (exit 0)"},
    {"config-reloaded", "the config changed on disk and was loaded again"},
    {"disk-nearly-full", "the checkpoint file system is nearly full"},
    {"disk-runway-short", "the checkpoint file system fills sooner than disk.runway_alert at the campaign's pace"},
    {"duplicate-cancel-failed", "a second job of one attempt could not be cancelled; tried again"},
    {"duplicate-cancelled", "a second job of one attempt was cancelled before it ran"},
    {"excluded", "a node is excluded from the next jobs, and why"},
    {"exclusion-lifted", "a node's exclusion ended"},
    {"exclusion-moved", "an excluded node's GPUs were found in another node: the exclusion followed them"},
    {"exclusions-relaxed", "an exclusion was lifted early so that a waiting job can start"},
    {"forgotten-waiting", "Slurm forgot a job; mlsup waits before it takes the job for lost"},
    {"handed-over", "the next attempt is handed to the chain's queued task"},
    {"hang-detected", "a job made no progress for the hang timeout"},
    {"hang-dump", "a hang without the helper's stacks: what the job's processes did on each node (state, wait channel, stacks)"},
    {"hang-evidence", "the hang command's output was saved before the job was ended"},
    {"hang-explained", "a hung job's output matched an evidence rule: the node its line names is blamed, or none"},
    {"hang-stacks", "every rank's Python stacks at a hang: where each stopped, which ranks the others wait on"},
    {"heartbeat-empty-read", "a heartbeat file read empty after it had content; the read is ignored"},
    {"heartbeat-stale-first", "one node's heartbeat stopped before the others'"},
    {"hold-failed", "a job could not be held in the queue"},
    {"job-held", "a job is held in Slurm's queue (a pause, a closed window)"},
    {"job-released", "a held job was released"},
    {"journal-repaired", "a torn last journal line was set aside when the journal was opened"},
    {"kill-switch-cleared", "mlsup removed the kill switch it had set"},
    {"kill-switch-set", "mlsup set the kill switch: the training is asked to save and exit"},
    {"node-records-problems", "the plugin's node records of a job could not all be read"},
    {"notified", "an alert was sent, or failed to be"},
    {"pass-failed", "a supervisor's pass failed; the next pass tries again"},
    {"pending", "Slurm's reason why a job waits"},
    {"pending-stuck", "a job waits for something waiting does not end"},
    {"probe-answered", "the nodes a hang was blamed on answered a probe step"},
    {"probe-doubted", "nodes did not answer a probe step"},
    {"relax-failed", "an exclusion could not be lifted from a waiting job"},
    {"release-failed", "a held job could not be released"},
    {"report", "the morning report was sent"},
    {"request-failed", "a lifecycle request could not be carried out"},
    {"request-refused", "a lifecycle request was refused, and why"},
    {"save-requested", "`mlsup save` set the save switch"},
    {"sbatch-awaited", "an sbatch left by a supervisor that died is waited for"},
    {"sbatch-ended", "that sbatch ended (or was killed)"},
    {"slurm-unavailable", "Slurm could not be asked about a job this pass"},
    {"slurm-unreachable", "Slurm has not answered for notify.unreachable_after"},
    {"spare-values-failed", "the spare nodes' values for the job could not be written"},
    {"spares-drop-failed", "the spare nodes could not be given back"},
    {"spares-dropped", "the spare nodes were given back to Slurm"},
    {"spares-used-up", "a job has no spare node left"},
    {"steps-kill-failed", "a job's steps could not be killed"},
    {"stop-requested", "`mlsup stop` set the kill switch"},
    {"stopped", "the campaign stopped with a non-zero exit, and why"},
    {"straggler", "a rank slower than the others in its own compute per step for stragglers.for"},
    {"submit-failed", "sbatch failed; retried or the campaign ends"},
    {"submit-paced", "a submission waited for its turn"},
    {"submitted", "a job was submitted"},
    {"suspension-ended", "a suspended job runs again; its heartbeat's silence counts from now"},
    {"switch-failed", "a switch file could not be written or removed"},
    {"template-snapshot-failed", "the template's stored copy could not be updated"},
    {"template-unusable", "the template does not render with this attempt's values; nothing submitted"},
    {"unexcluded", "`mlsup unexclude` lifted a node's exclusion: who, and why"},
    {"window-closed", "the campaign's time window closed"},
    {"window-opened", "the campaign's time window opened"},
};

// Kinds an older mlsup wrote under another name: {old, now}. Logs written before still filter by either.
inline constexpr std::pair<std::string_view, std::string_view> kEventKindsRenamed[] = {
    {"resumed", "suspension-ended"},
};

// Whether name is a kind of the table (a bool, not a pointer: GCC 12 with UBSan cannot compare a
// pointer into the table with null while it evaluates a constant).
constexpr bool is_event_kind(std::string_view name) {
  for (const auto& row : kEventKinds)
    if (row.name == name) return true;
  return false;
}

// The kind's name today: an older name mapped to the new one; anything else as it is.
constexpr std::string_view current_event_kind(std::string_view name) {
  for (const auto& [old, now] : kEventKindsRenamed)
    if (old == name) return now;
  return name;
}

// An event's kind: made only from a name in kEventKinds (an unknown name does not compile).
class EventKind {
 public:
  consteval EventKind(const char* name) : name_(name) {  // NOLINT: implicit, so event("name", ...) reads as before
    if (!is_event_kind(name_)) throw "not an event kind: add it to kEventKinds (events/kinds.h)";
  }
  constexpr std::string_view name() const { return name_; }
  std::string str() const { return std::string(name_); }
  constexpr bool operator==(std::string_view name) const { return name_ == name; }

 private:
  std::string_view name_;
};

}  // namespace mlsup::events
