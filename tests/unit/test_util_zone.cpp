// Time zones from the tz database's TZif files and their POSIX footer rules: offsets at known
// instants, the rule's arithmetic against the file's own transitions, and files that are not TZif.
#include <doctest/doctest.h>

#include <string>

#include "util/files.h"
#include "util/zone.h"

namespace mlsup::test {

TEST_CASE("zone: POSIX rules are read, and forms not taken are errors naming the rule") {
  const auto cet = util::parse_zone_rule("CET-1CEST,M3.5.0,M10.5.0/3");
  REQUIRE(cet);
  CHECK(cet->std_offset == 3600);
  CHECK(cet->dst_offset == 7200);
  CHECK((cet->start.month == 3 && cet->start.week == 5 && cet->start.weekday == 0 && cet->start.seconds == 7200));
  CHECK((cet->end.month == 10 && cet->end.seconds == 3 * 3600));
  const auto fixed = util::parse_zone_rule("<+0530>-5:30");
  REQUIRE(fixed);
  CHECK(fixed->std_offset == 5 * 3600 + 1800);
  CHECK(!fixed->has_dst);
  for (const char* bad : {"", "CET", "CET-1CEST", "EST5EDT,J60,J300", "CET-1CEST,M3.5.0", "CET-1CEST,M13.5.0,M10.5.0"}) {
    CAPTURE(bad);
    const auto r = util::parse_zone_rule(bad);
    REQUIRE(!r);
    CHECK(r.error().message.find(std::string("\"") + bad + "\"") != std::string::npos);
  }
}

TEST_CASE("zone: Europe/Berlin's offsets at known instants, within the file and beyond its last transition") {
  const auto z = util::load_zone("Europe/Berlin");
  REQUIRE_MESSAGE(z, (z ? "" : z.error().message));
  CHECK(util::utc_offset(*z, 1768478400) == 3600);  // 2026-01-15 12:00 UTC
  CHECK(util::utc_offset(*z, 1782907200) == 7200);  // 2026-07-01
  CHECK(util::utc_offset(*z, 1774745999) == 3600);  // 2026-03-29 00:59:59 UTC
  CHECK(util::utc_offset(*z, 1774746000) == 7200);  // 01:00 UTC: summer time
  CHECK(util::utc_offset(*z, 1792889999) == 7200);  // 2026-10-25 00:59:59 UTC
  CHECK(util::utc_offset(*z, 1792890000) == 3600);
  CHECK(util::utc_offset(*z, 2382523200) == 7200);  // 2045-07-01: past the file's transitions, from its rule
  CHECK(util::utc_offset(*z, 2366884800) == 3600);  // 2045-01-01
}

TEST_CASE("zone: the footer rule gives, hour by hour over a year, the offsets of the file's own transitions") {
  for (const char* name : {"Europe/Berlin", "America/New_York", "Australia/Sydney", "Asia/Kolkata"}) {
    CAPTURE(name);
    const auto file = util::load_zone(name);
    REQUIRE(file);
    REQUIRE(file->rule);
    util::Zone rule_only;
    rule_only.rule = file->rule;
    int differ = 0;
    for (std::int64_t t = 1893456000; t < 1893456000 + 366 * 86400; t += 3600)  // 2030
      differ += util::utc_offset(*file, t) != util::utc_offset(rule_only, t);
    CHECK(differ == 0);
  }
}

TEST_CASE("zone: a name outside the database, a missing zone and bytes that are not TZif are errors") {
  for (const char* bad : {"../etc/passwd", "/etc/localtime", "Europe/Berlin;rm"}) {
    const auto z = util::load_zone(bad);
    REQUIRE(!z);
    CHECK(z.error().message.find("tz database name") != std::string::npos);
  }
  const auto missing = util::load_zone("Nowhere/Atlantis");
  REQUIRE(!missing);
  CHECK(missing.error().message.find("not found") != std::string::npos);
  CHECK(!util::parse_tzif("not a zone file at all", "x"));
  const auto bytes = util::read_file("/usr/share/zoneinfo/Europe/Berlin");
  REQUIRE(bytes);
  for (const std::size_t cut : {10u, 44u, 100u, 1200u}) {
    CAPTURE(cut);
    CHECK(!util::parse_tzif(bytes->substr(0, cut), "cut"));
  }
}

TEST_CASE("zone: \"\" is the machine's own zone, /etc/localtime, or UTC where there is none") {
  const auto own = util::load_zone("");
  REQUIRE(own);
  if (const auto bytes = util::read_file("/etc/localtime")) {
    const auto same = util::parse_tzif(*bytes, "localtime");
    REQUIRE(same);
    for (const std::int64_t t : {0LL, 1700000000LL, 4102444800LL}) CHECK(util::utc_offset(*own, t) == util::utc_offset(*same, t));
  } else {
    CHECK(util::utc_offset(*own, 1700000000) == 0);
  }
}

}  // namespace mlsup::test
