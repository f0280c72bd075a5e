#pragma once
// What to do after an ending: a table from class to action and budget, restart budgets over time
// windows, backoff, and the crash-loop rule. Pure: every input is a value.
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
};

struct Decision {
  Action action = Action::Stop;
  int exit_code = kCannotGoOn;  // for Finish and Stop
  double delay_seconds = 0;     // for Resubmit: backoff before the next submission
  std::string reason;           // one sentence for the event log and the last line of `mlsup run`
};

// Decides after an attempt ended with cls (progressed: it got past its starting step), given the
// restarts made so far (oldest first) and the config's budgets.
Decision decide(EndClass cls, bool progressed, const std::vector<Restart>& history, const config::Config& config,
                double now);

}  // namespace mlsup::decide
