#pragma once
// When a campaign's work may run (pure): its window (config/window.h) read in a named time zone;
// local time comes from util::Zone.
#include <cstdint>

#include "config/window.h"
#include "util/zone.h"

namespace mlsup::decide {

// True when UTC time t falls inside the window, read in zone z.
bool window_open(const config::Window& w, const util::Zone& z, std::int64_t t);

// The first UTC time after t (to the minute) at which the window opens or closes; t + horizon when
// none comes sooner.
std::int64_t next_change(const config::Window& w, const util::Zone& z, std::int64_t t, std::int64_t horizon = 8 * 86400);

}  // namespace mlsup::decide
