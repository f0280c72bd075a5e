#pragma once
// The engine's intents by name, for tests that check what reconcile decided.
#include <iterator>
#include <string>
#include <variant>
#include <vector>

#include "reconcile/intents.h"

namespace mlsup::test {

inline constexpr const char* kIntentNames[] = {
    "Report", "Prune",        "Submit",      "Send",   "Adopt",          "Exclude",     "End",         "Finish",
    "Hang",   "Cancel",       "ResendCancel", "Relax", "PendingAlert",   "Claimed",     "PatchQueued", "ChainExhausted",
    "ChainValues", "Status",  "TakeRequest", "Hold",   "Release",        "AskToStop",   "Lift", "ClearSwitch",
    "StepClaimed", "SpareValues", "AwaitSbatch", "EndSbatch", "CancelDuplicate", "DropSpares", "Quarantine", "MoveExclusion"};
static_assert(std::size(kIntentNames) == std::variant_size_v<engine::Intent>);

// The intents' kinds, in order, as one string: "Status Hang".
inline std::string kinds(const std::vector<engine::Intent>& intents) {
  std::string out;
  for (const auto& i : intents) out += (out.empty() ? "" : " ") + std::string(kIntentNames[i.index()]);
  return out;
}

}  // namespace mlsup::test
