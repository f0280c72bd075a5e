#pragma once
// A campaign's window as the config spells it (window.hours, window.days), parsed: local hours
// ("20:00-07:00", across midnight allowed) and the days it opens on. decide/window.h says when it is open.
#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.h"

namespace mlsup::config {

struct Window {
  int open_minute = 0;   // minutes after local midnight
  int close_minute = 0;  // before open_minute: the window runs past midnight into the next day
  std::array<bool, 7> days{true, true, true, true, true, true, true};  // the days it opens on, [0] = Sunday
};

// "HH:MM-HH:MM" and day names ("mon".."sun", "weekdays", "weekends", "mon-fri"); an error names the part.
util::Result<Window> parse_window(std::string_view hours, const std::vector<std::string>& days);

}  // namespace mlsup::config
