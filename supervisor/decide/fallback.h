#pragma once
// Falling back to the checkpoint before the newest (pure): when attempts that resumed from the newest
// complete checkpoint keep failing before any step, that checkpoint is quarantined (moved aside, never
// deleted) and the next attempt resumes from the one before it, without counting towards the crash loop.
#include <string>
#include <vector>

#include "decide/classify.h"

namespace mlsup::decide {

// An ended attempt as the fallback rule sees it, oldest first.
struct ResumeOutcome {
  std::string resumed_from;  // "" = a fresh start
  bool before_any_step = false;  // it failed (a crash or a hang, no node blamed) before passing its resume step
};

struct FallbackFacts {
  std::vector<ResumeOutcome> attempts;  // every ended attempt, the one ending now last
  std::string older;                    // the newest complete checkpoint older than the one resumed from ("" = none)
  int quarantined_in_a_row = 0;         // checkpoints quarantined since an attempt last made progress
  int after = 2;                        // checkpoint.fallback_after (0: never)
  int max_quarantined = 2;              // checkpoint.max_quarantined
};

enum class Fallback {
  None,        // go on as the ending's decision says
  Quarantine,  // move the checkpoint aside; the next attempt resumes from `older` (or afresh)
  GiveUp,      // as many in a row quarantined as allowed: stop, and say why
};

// Whether the ending now calls for a fallback: its attempt and the `after - 1` before it all resumed from
// one checkpoint and failed before any step.
Fallback fallback(const FallbackFacts& f);

// The ending classes that may show a broken checkpoint: a crash or a hang (not a node's fault, a limit, a person).
bool may_show_bad_checkpoint(EndClass cls);

}  // namespace mlsup::decide
