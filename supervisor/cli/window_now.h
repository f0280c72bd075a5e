#pragma once
// The campaign's window now, for the verbs that look once: its zone loaded from the system.
#include <optional>

#include "config/config.h"
#include "reconcile/world.h"

namespace mlsup::cli {

// The window of c at UTC time t (reconcile/window_now.h's window_in); nullopt when c has none or its
// zone cannot be loaded.
std::optional<engine::WindowNow> window_now(const config::Config& c, double t);

}  // namespace mlsup::cli
