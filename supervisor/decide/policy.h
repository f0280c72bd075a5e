#pragma once
// What to do after an ending: a table from class to action and budget, restart budgets over time
// windows, backoff, and the crash-loop rule. Pure: every input is a value.
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "decide/classes.h"
#include "decide/classify.h"
#include "decide/exit_codes.h"

namespace mlsup::decide {

// One earlier restart, as the journal records it.
struct Restart {
  double time = 0;              // unix seconds
  EndClass cls = EndClass::Failed;
  bool progressed = false;      // the attempt it ended reached a later step than it started from
  bool new_exclusion = false;   // a node was newly excluded for the ending
  bool fell_back = false;       // its checkpoint was quarantined (decide/fallback.h): the crash-loop count starts afresh
};

// Restarts of one class let go of (compact_restarts): how many.
struct RestartCount {
  EndClass cls = EndClass::Failed;
  int count = 0;
};

// Moves the restarts that can no longer weigh in a decision from history into earlier (counted by
// class): those before the newest restart that made progress (no streak of decide() reaches past one;
// a class without a budget, which never runs, aside)
// and older than horizon seconds before now (no budget window reaches so far back).
void compact_restarts(std::vector<Restart>& history, std::vector<RestartCount>& earlier, double now, double horizon);

// The horizon compact_restarts keeps for c: its longest budget window, and a week at least (a window
// made longer later still finds a week of restarts).
double restart_horizon(const config::Config& c);

struct Decision {
  Action action = Action::Stop;
  int exit_code = kCannotGoOn;  // for Finish and Stop
  double delay_seconds = 0;     // for Resubmit: backoff before the next submission
  std::string reason;           // one sentence for the event log and the last line of `mlsup run`
};

// Decides after an attempt ended with cls (progressed: it got past its starting step; new_exclusion: a
// node was newly excluded for it), given the restarts made so far (oldest first) and the config's
// budgets. A class that backs off waits only when its ending made neither progress nor a new
// exclusion, and the wait doubles only across such endings in a row.
Decision decide(EndClass cls, bool progressed, const std::vector<Restart>& history, const config::Config& config,
                double now, bool new_exclusion = false);

// How much of its restart budget a resubmission after cls uses: the restarts of that budget within its
// window, this one included. nullopt for a class that is not restarted or an unlimited budget.
struct BudgetUse {
  std::string budget;  // "failed", "hang", ...
  int used = 0;
  int count = 0;
  config::Seconds window{0};
};
std::optional<BudgetUse> budget_use(EndClass cls, const std::vector<Restart>& history, const config::Config& config,
                                    double now);

// True when use has reached percent of its budget (notify.budget_warn_at).
bool nearly_spent(const BudgetUse& use, int percent);

}  // namespace mlsup::decide
