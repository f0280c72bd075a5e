#include <doctest/doctest.h>

#include "config/array_spec.h"
#include "config/duration.h"
#include "config/slurm_time.h"

using namespace mlsup::config;

TEST_CASE("durations need a unit and may be summed") {
  CHECK(parse_duration("90s").value() == Seconds(90));
  CHECK(parse_duration("5m").value() == Seconds(300));
  CHECK(parse_duration("2h").value() == Seconds(7200));
  CHECK(parse_duration("1d").value() == Seconds(86400));
  CHECK(parse_duration("1h30m").value() == Seconds(5400));
  CHECK(parse_duration(" 0s ").value() == Seconds(0));
  for (const char* bad : {"", "5", "5 minutes", "m", "5x", "-5m", "1.5h", "5m3"}) {
    CAPTURE(bad);
    const auto r = parse_duration(bad);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().find("is not a duration (try") != std::string::npos);
  }
  CHECK(parse_duration("999999999999d").error().find("too long") != std::string::npos);
  CHECK(format_duration(Seconds(5400)) == "1h30m");
  CHECK(format_duration(Seconds(0)) == "0s");
  CHECK(format_duration(Seconds(90061)) == "1d1h1m1s");
  CHECK(parse_interval("500ms").value() == Millis(500));
  CHECK(parse_interval("1s250ms").value() == Millis(1250));
  CHECK(parse_interval("2m").value() == Millis(120000));
  CHECK_FALSE(parse_interval("5mss").has_value());
  CHECK_FALSE(parse_interval("ms").has_value());
  CHECK(parse_duration("1000ms").value() == Seconds(1));
  CHECK(format_interval(Millis(1250)) == "1s250ms");
  CHECK(format_interval(Millis(500)) == "500ms");
  CHECK(format_interval(Millis(0)) == "0s");
}

TEST_CASE("Slurm time strings in every form sbatch takes") {
  CHECK(parse_slurm_time("90").value() == Seconds(5400));
  CHECK(parse_slurm_time("10:30").value() == Seconds(630));
  CHECK(parse_slurm_time("20:00:00").value() == Seconds(72000));
  CHECK(parse_slurm_time("1-12").value() == Seconds(86400 + 12 * 3600));
  CHECK(parse_slurm_time("1-12:30").value() == Seconds(86400 + 12 * 3600 + 1800));
  CHECK(parse_slurm_time("2-00:00:10").value() == Seconds(2 * 86400 + 10));
  CHECK(parse_slurm_time("INFINITE").value() == std::nullopt);
  CHECK(parse_slurm_time("UNLIMITED").value() == std::nullopt);
  for (const char* bad : {"", "10 hours", "1:2:3:4", "a-1", "1-1:2:3:4", "x", "0", "00:00:00"}) {
    CAPTURE(bad);
    CHECK_FALSE(parse_slurm_time(bad).has_value());
  }
}

TEST_CASE("array specs: ranges, lists, steps and the running limit") {
  const auto chain = parse_array_spec("1-10%1").value();
  CHECK(chain.task_ids.size() == 10);
  CHECK(chain.task_ids.front() == 1);
  CHECK(chain.max_running == 1u);
  const auto mixed = parse_array_spec("0,4,8-12:2").value();
  CHECK(mixed.task_ids == std::vector<std::uint32_t>{0, 4, 8, 10, 12});
  CHECK_FALSE(mixed.max_running.has_value());
  CHECK(parse_array_spec("3,1,3").value().task_ids == std::vector<std::uint32_t>{1, 3});
  const std::pair<const char*, const char*> bad[] = {
      {"", "is empty"},           {"1-x", "not a task id"},        {"5-1", "ends before it starts"},
      {"1-10%0", "task limit"},   {"1-10%x", "task limit"},        {"1-10:0", "step"},
      {"1-99999999", "limit"},    {"a", "not a task id"},
  };
  for (const auto& [text, why] : bad) {
    CAPTURE(text);
    const auto r = parse_array_spec(text);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().find(why) != std::string::npos);
  }
}

TEST_CASE("a sum of durations too long to hold is refused, not wrapped to a negative one") {
  std::string many;
  for (int i = 0; i < 1100; ++i) many += "99999999d";
  for (const std::string& text : {many, std::string("100000000d1s"), std::string("99999999d99999999d")}) {
    CAPTURE(text.substr(0, 40));
    const auto r = parse_interval(text);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().find("too long a duration") != std::string::npos);
    CHECK_FALSE(parse_duration(text).has_value());
  }
  CHECK(parse_duration("100000000d").value() == Seconds(100'000'000LL * 86400));
}

TEST_CASE("Slurm times whose fields overflow when added up are refused") {
  for (const char* bad : {"9223372036854775807", "1-9223372036854775807", "9223372036854775807-1", "1:9223372036854775807:0"}) {
    CAPTURE(bad);
    CHECK_FALSE(parse_slurm_time(bad).has_value());
  }
  CHECK(parse_slurm_time("1000000000").value() == Seconds(60'000'000'000LL));
}

TEST_CASE("array specs: a step past the last id ends the range, even one that wraps around") {
  CHECK(parse_array_spec("4000000:4294967295").value().task_ids == std::vector<std::uint32_t>{4000000});
  CHECK(parse_array_spec("0-10:4294967295").value().task_ids == std::vector<std::uint32_t>{0});
  CHECK(parse_array_spec("3-10:4294967290").value().task_ids == std::vector<std::uint32_t>{3});
  CHECK(parse_array_spec("3999990-4000000:7").value().task_ids == std::vector<std::uint32_t>{3999990, 3999997});
}

TEST_CASE("array specs that repeat ranges past Slurm's limit are refused before they fill memory") {
  std::string text = "0-4000000";
  for (int i = 0; i < 1000; ++i) text += ",0-4000000";
  const auto r = parse_array_spec(text);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().find("more task ids than Slurm's limit allows") != std::string::npos);
  CHECK(parse_array_spec("0-4000000").value().task_ids.size() == 4000001);
}
