#pragma once
// The first-evidence rule and its guard. A failure whose first failing task names one node of a job
// of several gets that node excluded at once; when a later failure ends the same way (same rank, the
// same step give or take a checkpoint interval) on another node, the failure follows the training,
// not the node: the rule's exclusions for it are lifted and the rule no longer applies to it. Pure.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "decide/ledger.h"

namespace mlsup::decide {

// Which task of a failed job ended first, on which node, and how far the training had got.
struct FirstEnd {
  std::string node;
  int rank = -1;        // -1: not known (srun named several tasks at once)
  long long step = 0;   // the step the attempt reached
};

// A failure that follows the training: this rank fails near this step, whatever node it runs on.
struct TrainingFault {
  int rank = -1;
  long long step = 0;
  long long tolerance = 0;  // steps either side: a checkpoint interval
};

// A node the rule excluded, with the failure that named it.
struct RuleExclusion {
  std::size_t entry = 0;  // its entry in the ledger
  FirstEnd failure;
};

// True when e ends as the fault does: the same rank, its step within the tolerance.
bool matches(const TrainingFault& fault, const FirstEnd& e);

// What to make of a failure's first end.
struct FirstEvidence {
  bool apply = false;             // the rule applies: exclude its node now
  bool follows_training = false;  // a known or newly found training fault: its weak evidence names no node
  std::optional<TrainingFault> found;  // newly found: lift the exclusions in `lift`, remember the fault
  std::vector<std::string> lift;       // nodes the rule excluded for failures that match it
};

// Weighs this failure's first end against the training faults known, the rule's exclusions (entries
// of ledger, those unexpired at now) and the checkpoint interval (steps, 0 when unknown).
FirstEvidence weigh_first_end(const FirstEnd& end, const std::vector<TrainingFault>& known,
                              const std::vector<RuleExclusion>& made, const std::vector<Exclusion>& ledger, double now,
                              long long interval);

// The checkpoint interval seen: the gap between the two highest distinct steps (0 with fewer).
long long step_interval(std::vector<long long> steps);

}  // namespace mlsup::decide
