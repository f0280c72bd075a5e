#pragma once
// The campaign's window at a moment, for the verbs that look once (status, check, report): its hours
// and days read in its zone (loaded by cli/window_now.h). The supervisor's own passes keep theirs
// (Observer::window_at).
#include <optional>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "reconcile/world.h"
#include "util/zone.h"

namespace mlsup::engine {

// The window in zone z at UTC time t; nullopt when c has none (or its hours do not read).
std::optional<WindowNow> window_in(const config::Config& c, const util::Zone& z, double t);

// What status and check say of it: {"open", "until", "hours", "days", "zone", "at_end"} (null without one).
nlohmann::json window_json(const config::Config& c, const std::optional<WindowNow>& w);

}  // namespace mlsup::engine
