#include "decide/debug_retry.h"

#include "decide/classes.h"

namespace mlsup::decide {

std::string debug_reason(const DebugLast& last, bool enabled) {
  if (!enabled || last.number == 0 || !last.cls) return "";
  const std::string n = std::to_string(last.number);
  // The classes node blame counts (failed, hang) are the training's own failures with nothing else to say.
  if (row(*last.cls).counts_for_blame && !last.explained)
    return "attempt " + n + " ended as " + std::string(class_name(*last.cls)) + " and no evidence rule explains it";
  if (last.debugged && !last.progressed) return "attempt " + n + " ran with it and made no progress";
  return "";
}

}  // namespace mlsup::decide
