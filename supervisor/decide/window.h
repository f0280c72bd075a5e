#pragma once
// When a campaign's work may run: local hours ("20:00-07:00", across midnight allowed) on the days
// a window opens, in a named time zone. Pure: local time comes from util::Zone.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.h"
#include "util/zone.h"

namespace mlsup::decide {

struct Window {
  int open_minute = 0;   // minutes after local midnight
  int close_minute = 0;  // before open_minute: the window runs past midnight into the next day
  std::array<bool, 7> days{true, true, true, true, true, true, true};  // the days it opens on, [0] = Sunday
};

// "HH:MM-HH:MM" and day names ("mon".."sun", "weekdays", "weekends", "mon-fri"); an error names the part.
util::Result<Window> parse_window(std::string_view hours, const std::vector<std::string>& days);

// True when UTC time t falls inside the window, read in zone z.
bool window_open(const Window& w, const util::Zone& z, std::int64_t t);

// The first UTC time after t (to the minute) at which the window opens or closes; t + horizon when
// none comes sooner.
std::int64_t next_change(const Window& w, const util::Zone& z, std::int64_t t, std::int64_t horizon = 8 * 86400);

}  // namespace mlsup::decide
