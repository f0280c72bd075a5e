// `mlsup events`: the filters (--kind, --since) and the log followed as it grows, is cut or is replaced.
#include <doctest/doctest.h>

#include <cstdio>
#include <ctime>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/campaign_verbs.h"
#include "cli/events_view.h"
#include "cli/exit_codes.h"
#include "capture.h"
#include "engine_fixture.h"
#include "support.h"

using namespace mlsup;
using nlohmann::json;

namespace {

void append(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::app) << text; }

std::string line(const char* event, double time) { return json{{"event", event}, {"time", time}}.dump() + "\n"; }

std::vector<std::string> names(const std::vector<json>& events) {
  std::vector<std::string> out;
  for (const auto& e : events) out.push_back(e.value("event", "?"));
  return out;
}

}  // namespace

TEST_CASE("events --follow: each poll gives the complete lines appended since; a cut or replaced log is read from its start") {
  test::TempDir dir;
  const std::string path = dir.path() + "/events.jsonl";
  cli::LogFollower log(path);
  CHECK(log.poll().empty());  // no log yet
  append(path, line("submitted", 1) + line("pending", 2));
  CHECK(names(log.poll()) == std::vector<std::string>{"submitted", "pending"});
  CHECK(log.poll().empty());  // nothing new
  append(path, line("running", 3) + R"({"event": "ended", "ti)");
  CHECK(names(log.poll()) == std::vector<std::string>{"running"});  // the line being written waits for its end
  append(path, "me\": 4}\n");
  CHECK(names(log.poll()) == std::vector<std::string>{"ended"});
  std::ofstream(path, std::ios::trunc) << line("after-cut", 5);  // cut shorter than what was read
  CHECK(names(log.poll()) == std::vector<std::string>{"after-cut"});
  std::rename(path.c_str(), (path + ".1").c_str());  // rotated: a new file of the same name
  CHECK(log.poll().empty());
  append(path, line("new-file", 6) + line("again", 7) + line("and-more", 8));
  CHECK(names(log.poll()) == std::vector<std::string>{"new-file", "again", "and-more"});
}

TEST_CASE("events filters: --kind keeps the kinds named, --since a duration back, a local time or unix seconds") {
  cli::EventFilter f;
  f.kinds = {"attempt-ended", "excluded"};
  CHECK(f.keep(json{{"event", "attempt-ended"}, {"time", 10}}));
  CHECK(!f.keep(json{{"event", "submitted"}, {"time", 10}}));
  f.since = 10;
  CHECK(f.keep(json{{"event", "excluded"}, {"time", 10}}));
  CHECK(!f.keep(json{{"event", "excluded"}, {"time", 9.5}}));

  CHECK(cli::parse_since("90s", 1000).value() == 910);
  CHECK(cli::parse_since("1h", 10000).value() == 6400);
  CHECK(cli::parse_since("@1764650000", 0).value() == 1764650000);
  std::tm tm{};
  tm.tm_year = 2026 - 1900, tm.tm_mon = 11, tm.tm_mday = 2, tm.tm_hour = 4, tm.tm_min = 30, tm.tm_sec = 15, tm.tm_isdst = -1;
  const double at = static_cast<double>(std::mktime(&tm));
  CHECK(cli::parse_since("2026-12-02 04:30:15", 0).value() == at);
  CHECK(cli::parse_since("2026-12-02T04:30:15", 0).value() == at);
  CHECK(cli::parse_since("2026-12-02 04:30", 0).value() == at - 15);
  const auto bad = cli::parse_since("yesterday", 0);
  REQUIRE(!bad);
  CHECK(bad.error().str().find("--since: \"yesterday\" is neither a duration") != std::string::npos);
}

TEST_CASE("events of a campaign with --kind and --since: only those printed") {
  test::EngineFixture f;
  auto c = f.open();
  f.pass(*c);  // submitted at 1000
  f.clock = 1100;
  f.fake.set_state(f.last_job(), slurm::JobState::Failed, 1);
  f.pass(*c);  // ended at 1100
  cli::EventsOptions o;
  o.filter.kinds = {"submitted"};
  const auto submitted = test::capture([&] { return cli::events_verb(std::vector<std::string>{f.config.source_file}, o); });
  CHECK(submitted.code == cli::kOk);
  CHECK(submitted.out.find(" submitted ") != std::string::npos);
  CHECK(submitted.out.find("attempt-ended") == std::string::npos);
  o.filter.kinds.clear();
  o.filter.since = 1050;
  o.json = true;
  const auto late = test::capture([&] { return cli::events_verb(std::vector<std::string>{f.config.source_file}, o); });
  CHECK(late.out.find("\"attempt-ended\"") != std::string::npos);
  CHECK(late.out.find("\"submitted\"") == std::string::npos);
}

TEST_CASE("events --kind: a kind no event has is an error naming the nearest; a kind's older name is taken") {
  test::EngineFixture f;
  auto c = f.open();
  f.pass(*c);
  cli::EventsOptions o;
  o.filter.kinds = {"submitted", "attempt-end"};
  const auto typo = test::capture([&] { return cli::events_verb(std::vector<std::string>{f.config.source_file}, o); });
  CHECK(typo.code == cli::kUsage);
  CHECK(typo.out.empty());
  CHECK(typo.err.find("--kind attempt-end: no event has this kind; did you mean attempt-ended?") != std::string::npos);
  o.filter.kinds = {"resumed"};  // what a suspended job's running again was called before
  CHECK(test::capture([&] { return cli::events_verb(std::vector<std::string>{f.config.source_file}, o); }).code == cli::kOk);

  cli::EventFilter old_name{.kinds = {"suspension-ended"}};
  CHECK(old_name.keep(json{{"event", "resumed"}, {"time", 1}}));  // a log written before the renaming
  CHECK(old_name.keep(json{{"event", "suspension-ended"}, {"time", 1}}));
  CHECK(!old_name.keep(json{{"event", "submitted"}, {"time", 1}}));
}
