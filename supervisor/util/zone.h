#pragma once
// A named time zone as the system's tz database describes it: UTC offsets over time, read from a
// TZif file (RFC 8536, version 2 or later), and beyond its last transition from its footer's POSIX
// rule ("CET-1CEST,M3.5.0,M10.5.0/3"). Pure except load_zone, which reads the file.
#include <cstdint>
#include <ctime>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.h"

namespace mlsup::util {

// A POSIX TZ rule: standard offset, and when daylight time applies (Mm.w.d[/time] dates only).
struct ZoneRule {
  struct Date {
    int month = 0, week = 0, weekday = 0;  // M3.5.0: March, last week, Sunday
    int seconds = 7200;                    // local time of the change (default 02:00)
  };
  long std_offset = 0;  // seconds east of UTC
  bool has_dst = false;
  long dst_offset = 0;
  Date start, end;
};

struct Zone {
  std::string name;
  std::vector<std::int64_t> transitions;  // UTC seconds, ascending
  std::vector<long> offsets;              // offset after each transition
  long initial_offset = 0;                // before the first transition
  std::optional<ZoneRule> rule;           // after the last transition
};

// Parses a POSIX TZ rule; an error for forms this reader does not take (Jn and n dates).
Result<ZoneRule> parse_zone_rule(std::string_view text);

// Parses TZif bytes (version 2 or later; the 64-bit part).
Result<Zone> parse_tzif(std::string_view bytes, std::string name);

// The zone's UTC offset at UTC time t, in seconds east.
long utc_offset(const Zone& z, std::int64_t t);

// The zone named ("Europe/Berlin", "UTC") from /usr/share/zoneinfo (or $TZDIR); an error that says
// what was looked for when it is missing or unreadable. "" is the machine's own zone: /etc/localtime,
// or UTC where there is none.
Result<Zone> load_zone(const std::string& name);

}  // namespace mlsup::util
