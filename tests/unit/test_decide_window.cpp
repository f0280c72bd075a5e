// Work windows: hours and days as written, open or closed at known instants in Europe/Berlin
// (across midnight, the days a window opens on, the spring change to summer time), and the next change.
#include <doctest/doctest.h>

#include "decide/window.h"

namespace mlsup::test {

TEST_CASE("window: hours and days that cannot be read are errors that say how to write them") {
  for (const char* hours : {"20:00", "25:00-07:00", "20:00-07:60", "8:00-17:00", "20:00-20:00", "24:00-07:00"}) {
    CAPTURE(hours);
    CHECK(!config::parse_window(hours, {}));
  }
  const auto bad_day = config::parse_window("20:00-07:00", {"funday"});
  REQUIRE(!bad_day);
  CHECK(bad_day.error().message.find("\"funday\"") != std::string::npos);
  const auto w = config::parse_window("20:00-07:00", {"weekdays"});
  REQUIRE(w);
  CHECK(w->open_minute == 20 * 60);
  CHECK(w->close_minute == 7 * 60);
  CHECK(w->days == std::array<bool, 7>{false, true, true, true, true, true, false});
  const auto around = config::parse_window("09:00-24:00", {"fri-mon"});
  REQUIRE(around);
  CHECK(around->days == std::array<bool, 7>{true, true, false, false, false, true, true});
}

TEST_CASE("window: open or closed in Europe/Berlin, a night window belonging to the day it opens") {
  const auto z = util::load_zone("Europe/Berlin");
  REQUIRE(z);
  const auto nights = config::parse_window("20:00-07:00", {"mon-fri"});
  REQUIRE(nights);
  struct Row {
    const char* what;
    std::int64_t t;
    bool open;
  };
  const Row rows[] = {
      {"Friday 20:30 CET", 1774639800, true},
      {"Saturday 06:30 CET, the night Friday opened", 1774675800, true},
      {"Saturday 20:30 CET: Saturday opens no window", 1774726200, false},
      {"Monday 06:00 CEST: Sunday opened none", 1774843200, false},
  };
  for (const auto& row : rows) {
    CAPTURE(row.what);
    CHECK(decide::window_open(*nights, *z, row.t) == row.open);
  }
}

TEST_CASE("window: the night the clocks go forward closes at 07:00 summer time, an hour earlier in UTC") {
  const auto z = util::load_zone("Europe/Berlin");
  REQUIRE(z);
  const auto every_night = config::parse_window("20:00-07:00", {});
  REQUIRE(every_night);
  const std::int64_t saturday_2030_utc = 1774726200;  // 2026-03-28 19:30 UTC, 20:30 CET
  CHECK(decide::window_open(*every_night, *z, saturday_2030_utc));
  CHECK(decide::window_open(*every_night, *z, 1774760340));   // Sunday 04:59 UTC, 06:59 CEST
  CHECK(!decide::window_open(*every_night, *z, 1774760400));  // 05:00 UTC, 07:00 CEST
  CHECK(decide::next_change(*every_night, *z, saturday_2030_utc) == 1774760400);
  CHECK(decide::next_change(*every_night, *z, 1774760400) == 1774760400 + 13 * 3600);  // Sunday 20:00 CEST
  const auto sundays = config::parse_window("20:00-07:00", {"sun"});
  REQUIRE(sundays);
  const std::int64_t sunday_2001 = 1774807260;  // 2026-03-29 20:01 CEST
  CHECK(decide::next_change(*sundays, *z, sunday_2001) == 1774846800);  // Monday 07:00 CEST
  CHECK(decide::next_change(*sundays, *z, 1774846800, 3 * 86400) == 1774846800 + 3 * 86400);  // none within 3 days
}

}  // namespace mlsup::test
