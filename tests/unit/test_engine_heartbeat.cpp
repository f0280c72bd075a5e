#include <doctest/doctest.h>

#include "engine/heartbeat.h"

using namespace mlsup::engine;
using mlsup::config::Seconds;

namespace {

mlsup::config::HeartbeatSettings settings() {
  mlsup::config::HeartbeatSettings s;
  s.startup_timeout = Seconds(60);
  s.steady_timeout = Seconds(10);
  s.save_timeout = Seconds(100);
  return s;
}

}  // namespace

TEST_CASE("heartbeat content: a step, an optional saving flag, garbage tolerated") {
  CHECK(parse_heartbeat("120\n").step == 120);
  CHECK_FALSE(parse_heartbeat("120\n").saving);
  CHECK(parse_heartbeat("121 saving").saving);
  CHECK(parse_heartbeat("x\x01garbage").step == -1);
  CHECK(parse_heartbeat("-5").step == -1);
  CHECK(parse_heartbeat("").step == -1);
}

TEST_CASE("liveness is a change seen on mlsup's clock, whatever the file's own times") {
  HeartbeatSeen seen{.running_since = 100};
  seen = observe(seen, std::string("1"), 100);
  CHECK(seen.changed_at == 100);
  seen = observe(seen, std::string("1"), 109);  // same content: no news
  CHECK(seen.changed_at == 100);
  CHECK(hang_reason(seen, settings(), 109).empty());
  CHECK(hang_reason(seen, settings(), 110).find("heartbeat unchanged for 10s at \"1\"") == 0);
  seen = observe(seen, std::string("2"), 110);
  CHECK(hang_reason(seen, settings(), 115).empty());
  seen = observe(seen, std::nullopt, 116);  // the file vanished (NFS hiccup): keep what was seen
  CHECK(seen.step == 2);
  CHECK(seen.running_since == 100);
}

TEST_CASE("startup and save timeouts") {
  HeartbeatSeen seen{.running_since = 100};
  CHECK(hang_reason(seen, settings(), 159).empty());
  CHECK(hang_reason(seen, settings(), 160).find("no heartbeat 1m after the job started") == 0);
  seen = observe(seen, std::string("5 saving"), 150);
  CHECK(hang_reason(seen, settings(), 200).empty());  // a long save is not a hang
  CHECK(hang_reason(seen, settings(), 250).find("heartbeat.save_timeout") != std::string::npos);
  auto off = settings();
  off.enabled = false;
  CHECK(hang_reason(seen, off, 10'000).empty());
  CHECK(hang_reason(HeartbeatSeen{}, settings(), 10'000).empty());  // not running yet
}
