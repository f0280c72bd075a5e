#pragma once
// The morning report's facts (pure): what each campaign did over a window of wall time, from its journal
// records: every attempt that overlaps the window (what ran, how it ended, the steps it gained, the time its
// failure lost), the nodes excluded in the window and why, and where the campaign stands now. Goodput and the
// time figures are status's own (views/status_view.h), over the same records at the same time.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "state/state.h"

namespace mlsup::report {

// The report's span of wall time, unix seconds: from since to until (the time the report is made).
struct Window {
  double since = 0;
  double until = 0;
};

// What is known of one campaign when the report is made (read by the edge, as `mlsup status` reads it).
struct RunInput {
  std::string run;      // the campaign's name
  std::string config;   // the file it came from (SET:RUN for a set's run)
  const engine::CampaignState& state;
  const std::vector<engine::JournalRecord>& records;  // the whole journal, oldest first
  long long current_step = -1;  // status's "step" (-1: null)
  std::string state_name;       // engine::state_name of state
  std::string job_state;        // the current job's state as the last pass saw it ("": unknown)
  std::string gate;             // a set's gate on the run, in words ("": none holds it back)
  std::vector<std::string> advice;  // `mlsup plan`'s advice for it now
  std::string runway;               // its checkpoint file system's runway in words ("": not measured)
};

// One attempt as the report tells it.
struct AttemptFacts {
  int number = 0;
  std::optional<long long> job_id;
  std::string nodes;        // the nodes its ending recorded ("": not known)
  double start = 0;         // its submission (the decision, when it was never submitted)
  double end = 0;           // its ending, or the report's time while it is open
  bool open = false;        // not ended yet
  std::string ending;       // its ending class ("failed", "completed", ...); while open: "running", "pending", "not_submitted"
  std::string action;       // what its ending decided: resubmit, finish, stop, pause ("": none yet)
  std::string reason;       // why, as the ending recorded it
  std::string evidence_rule, evidence_quote;  // the evidence rule that explained its failure, and its line ("": none)
  bool failure = false;     // it ended in a failure class (status's "lost_to_failures" counts it)
  long long from_step = 0;  // the step it resumed from
  long long to_step = 0;    // the step it reached (its resume step when none is known)
  long long kept = 0;       // of its steps, those the campaign keeps
  double lost = 0;          // seconds its failure lost: its span not kept, plus the wait to the next submission
};

// One node exclusion recorded in the window.
struct ExclusionFacts {
  std::string node;
  int attempt = 0;  // the attempt whose ending recorded it (0: not said)
  std::string reason;
  double since = 0;
  double until = 0;
  std::vector<std::string> gpus;  // the UUIDs of the GPUs it holds responsible
  std::string ended_by;           // what ended it early ("" = nothing)
};

// The exclusion's reason for people, with its GPUs and how it ended early, where it has them.
std::string exclusion_text(const ExclusionFacts& e);

// One campaign over the window.
struct RunFacts {
  std::string run, config, state, now;  // now: what runs now, in words
  std::vector<AttemptFacts> attempts;    // those overlapping the window, oldest first
  std::vector<ExclusionFacts> exclusions;
  long long step = -1;            // where it stands (-1: not started)
  long long steps_gained = 0;     // the kept steps of the attempts shown
  long long recomputed = 0;       // their steps done again by a later attempt
  int failures = 0;               // the attempts shown that ended in a failure class
  double lost = 0;                // the seconds their failures lost
  nlohmann::json time;            // status's "time" figures (the whole campaign): began, elapsed, useful, goodput, ...
  std::vector<std::string> advice;  // `mlsup plan`'s advice (the checkpoint interval, the time limit, the disk runway)
  std::string runway;               // the checkpoint file system's runway in words ("": not measured)
};

struct Report {
  Window window;
  std::vector<RunFacts> runs;
};

// One campaign's facts over the window.
RunFacts run_facts(const RunInput& in, const Window& w);

// The report as JSON (`mlsup report --json`): since, until, runs[] with their attempts[] and exclusions[].
nlohmann::json to_json(const Report& r);

}  // namespace mlsup::report
