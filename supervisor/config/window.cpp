#include "config/window.h"

#include <algorithm>

namespace mlsup::config {
namespace {

constexpr std::array<std::string_view, 7> kDayNames{"sun", "mon", "tue", "wed", "thu", "fri", "sat"};

// "HH:MM" as minutes after midnight (24:00 allowed as a close), or -1.
int minutes(std::string_view text) {
  if (text.size() != 5 || text[2] != ':') return -1;
  for (const std::size_t i : {0u, 1u, 3u, 4u})
    if (text[i] < '0' || text[i] > '9') return -1;
  const int h = (text[0] - '0') * 10 + (text[1] - '0');
  const int m = (text[3] - '0') * 10 + (text[4] - '0');
  if (m > 59 || h > 24 || (h == 24 && m != 0)) return -1;
  return h * 60 + m;
}

int day_index(std::string_view name) {
  const auto it = std::find(kDayNames.begin(), kDayNames.end(), name);
  return it == kDayNames.end() ? -1 : static_cast<int>(it - kDayNames.begin());
}

// One entry of days: a name, a range ("mon-fri", also across the week's end), weekdays or weekends.
bool add_days(std::string_view entry, std::array<bool, 7>& days) {
  if (entry == "weekdays") entry = "mon-fri";
  if (entry == "weekends") {
    days[0] = days[6] = true;
    return true;
  }
  const auto dash = entry.find('-');
  const int from = day_index(entry.substr(0, dash));
  const int to = dash == std::string_view::npos ? from : day_index(entry.substr(dash + 1));
  if (from < 0 || to < 0) return false;
  for (int d = from;; d = (d + 1) % 7) {
    days[static_cast<std::size_t>(d)] = true;
    if (d == to) break;
  }
  return true;
}

}  // namespace

util::Result<Window> parse_window(std::string_view hours, const std::vector<std::string>& days) {
  const auto dash = hours.find('-');
  const int open = dash == std::string_view::npos ? -1 : minutes(hours.substr(0, dash));
  const int close = dash == std::string_view::npos ? -1 : minutes(hours.substr(dash + 1));
  if (open < 0 || close < 0 || open == 24 * 60)
    return util::fail("hours \"" + std::string(hours) + "\": write local opening and closing times as HH:MM-HH:MM (\"20:00-07:00\")");
  if (open == close) return util::fail("hours \"" + std::string(hours) + "\": the window opens and closes at the same time");
  Window w{open, close, {}};
  if (days.empty()) w.days.fill(true);
  for (const auto& d : days)
    if (!add_days(d, w.days))
      return util::fail("days: \"" + d + "\" is not a day (mon, tue, wed, thu, fri, sat, sun), a range (mon-fri), weekdays or weekends");
  return w;
}

}  // namespace mlsup::config
