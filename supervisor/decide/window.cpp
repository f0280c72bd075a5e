#include "decide/window.h"

namespace mlsup::decide {

bool window_open(const config::Window& w, const util::Zone& z, std::int64_t t) {
  const std::int64_t local = t + util::utc_offset(z, t);
  const std::int64_t day = (local >= 0 ? local : local - 86399) / 86400;
  const int minute = static_cast<int>((local - day * 86400) / 60);
  const auto weekday = [](std::int64_t d) { return static_cast<std::size_t>(((d % 7) + 11) % 7); };  // 1970-01-01 was a Thursday
  if (w.open_minute < w.close_minute) return w.days[weekday(day)] && minute >= w.open_minute && minute < w.close_minute;
  return (w.days[weekday(day)] && minute >= w.open_minute) || (w.days[weekday(day - 1)] && minute < w.close_minute);
}

std::int64_t next_change(const config::Window& w, const util::Zone& z, std::int64_t t, std::int64_t horizon) {
  const bool now = window_open(w, z, t);
  const std::int64_t first = (t / 60 + 1) * 60;  // local changes fall on whole minutes (offsets are whole minutes)
  for (std::int64_t s = first; s <= t + horizon; s += 60)
    if (window_open(w, z, s) != now) return s;
  return t + horizon;
}

}  // namespace mlsup::decide
