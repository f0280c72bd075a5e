#pragma once
// The campaign's state as JSON both ways: what the replay snapshot (<state_dir>/replay.json) keeps, so
// that the next process to open a long journal replays only the records after it.
#include <optional>

#include <nlohmann/json.hpp>

#include "state/state.h"

namespace mlsup::engine {

// Raised whenever CampaignState, AttemptState or a type they hold changes: a snapshot of another
// version is not read (the journal is replayed whole).
inline constexpr int kStateCodecVersion = 5;

// s as JSON (its problems left out: a state that has any is never kept).
nlohmann::json state_to_json(const CampaignState& s);

// The state state_to_json wrote; nullopt when j is not one (a field missing or of another type).
std::optional<CampaignState> state_from_json(const nlohmann::json& j);

}  // namespace mlsup::engine
