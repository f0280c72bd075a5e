#pragma once
// Debug on retry (pure): after a failure or hang that no evidence rule explains, the next attempt runs
// with debug_on_retry.env, and so does each one after it until an attempt makes progress.
#include <optional>
#include <string>

#include "decide/classify.h"

namespace mlsup::decide {

// The newest attempt that ended, as far as debugging the next one goes.
struct DebugLast {
  int number = 0;
  std::optional<EndClass> cls;
  bool explained = false;   // an evidence rule read its failure from its output
  bool progressed = false;  // it got past the step it resumed from
  bool debugged = false;    // it ran with the debug environment itself
};

// Why the next attempt runs with the debug environment, one sentence; "" = it does not.
std::string debug_reason(const DebugLast& last, bool enabled);

}  // namespace mlsup::decide
