#include "decide/fallback.h"

namespace mlsup::decide {

bool may_show_bad_checkpoint(EndClass cls) { return cls == EndClass::Failed || cls == EndClass::Hang; }

Fallback fallback(const FallbackFacts& f) {
  if (f.after <= 0 || f.attempts.empty()) return Fallback::None;
  const auto& last = f.attempts.back();
  if (last.resumed_from.empty() || !last.before_any_step) return Fallback::None;
  int in_a_row = 0;
  for (auto it = f.attempts.rbegin(); it != f.attempts.rend(); ++it) {
    if (it->resumed_from != last.resumed_from || !it->before_any_step) break;
    ++in_a_row;
  }
  if (in_a_row < f.after) return Fallback::None;
  return f.quarantined_in_a_row >= f.max_quarantined ? Fallback::GiveUp : Fallback::Quarantine;
}

}  // namespace mlsup::decide
