#pragma once
// An attempt's ending judged whole: what was observed when its job ended in, its class, how far it
// got and what follows out. Pure: the engine gathers the facts, records the verdict and acts on it.
#include <optional>
#include <vector>

#include "config/config.h"
#include "decide/classify.h"
#include "decide/policy.h"
#include "slurm_model/types.h"

namespace mlsup::decide {

// What was seen when the attempt's job ended.
struct EndingFacts {
  slurm::JobState state = slurm::JobState::Unknown;
  int exit_code = 0;
  int exit_signal = 0;
  bool vanished = false;                   // Slurm forgot the job and no other source knows its end
  std::optional<EndClass> cancel_reason;   // mlsup had cancelled it, and why
  bool kill_switch = false;                // the kill switch file exists
  long long heartbeat_step = -1;           // the step its heartbeat said last (-1: none)
  long long checkpoint_step = 0;           // the newest complete checkpoint's step (0: none)
  long long resume_step = 0;               // the step of the checkpoint it resumed from
  bool chain_goes_on = false;              // chain mode: the next task is queued already
  bool new_exclusion = false;              // a node was newly excluded for this ending
  bool gone = false;                       // vanished, and it never started or its processes are shown gone
  bool never_ran = false;                  // Slurm ended the job without starting it (no batch host)
};

struct EndingVerdict {
  EndClass cls = EndClass::Failed;
  long long step = 0;       // how far it got: the heartbeat's step or the newest checkpoint's
  bool progressed = false;  // a newer complete checkpoint than it resumed from (what a resume keeps)
  Decision decision;
};

// The verdict on an ending, given the restarts so far (oldest first), the config and now (wall time).
EndingVerdict judge_ending(const EndingFacts& f, const std::vector<Restart>& restarts, const config::Config& config,
                           double now);

}  // namespace mlsup::decide
