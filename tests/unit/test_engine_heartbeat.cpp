#include <doctest/doctest.h>

#include "observe/heartbeat.h"

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
  CHECK(parse_heartbeat("120\n").phase.empty());
  CHECK(parse_heartbeat("121 saving").phase == "saving");
  CHECK(parse_heartbeat("x\x01garbage").step == -1);
  CHECK(parse_heartbeat("-5").step == -1);
  CHECK(parse_heartbeat("").step == -1);
}

TEST_CASE("heartbeat content: the step's compute seconds, the last word, as the helper writes it") {
  CHECK(parse_heartbeat("120").compute == -1);
  CHECK(parse_heartbeat("120 compute=0.2500\n").compute == doctest::Approx(0.25));
  CHECK(parse_heartbeat("120 compute=0.2500\n").step == 120);
  const auto waiting = parse_heartbeat("121 saving waiting 2 compute=1.5000\n");
  CHECK(waiting.phase == "saving");
  CHECK(waiting.waiting);
  CHECK(waiting.compute == doctest::Approx(1.5));
  CHECK(parse_heartbeat("122 eval compute=3").phase == "eval");
  CHECK(parse_heartbeat("122 eval compute=3").compute == doctest::Approx(3.0));
  for (const char* bad : {"1 compute=", "1 compute=-1", "1 compute=x", "1 compute=1.5s", "1 compute=nan", "1 compute=inf"})
    CHECK_MESSAGE(parse_heartbeat(bad).compute == -1, bad);
  CHECK(parse_heartbeat("compute=2").step == -1);  // no step: the word is still no step
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
  CHECK(hang_reason(seen, settings(), 160).find("no heartbeat and no output 1m after the job started") == 0);
  seen = observe(seen, std::string("5 saving"), 150);
  CHECK(hang_reason(seen, settings(), 200).empty());  // a long save is not a hang
  CHECK(hang_reason(seen, settings(), 250).find("heartbeat.save_timeout") != std::string::npos);
  auto off = settings();
  off.enabled = false;
  CHECK(hang_reason(seen, off, 10'000).empty());
  CHECK(hang_reason(HeartbeatSeen{}, settings(), 10'000).empty());  // not running yet
}

TEST_CASE("heartbeat content: extra words are ignored; \"waiting\" marks a rank blocked on its peers") {
  CHECK(parse_heartbeat("120 loss=2.31 lr=3e-4").step == 120);
  CHECK_FALSE(parse_heartbeat("120 loss=2.31").waiting);
  CHECK(parse_heartbeat("120 waiting 3").waiting);
  CHECK(parse_heartbeat("120 waiting 3").step == 120);
  CHECK(parse_heartbeat("120 saving waiting 3").phase == "saving");
  CHECK(parse_heartbeat("120 saving waiting 3").waiting);
}

TEST_CASE("heartbeat content: any lowercase word after the step is a phase with the save timeout (an evaluation pass)") {
  CHECK(parse_heartbeat("120 eval").phase == "eval");
  CHECK(parse_heartbeat("120 data-loading").phase == "data-loading");
  CHECK(parse_heartbeat("120 eval saving").phase == "eval");  // the outer phase names it
  CHECK(parse_heartbeat("120 eval waiting 4").waiting);
  CHECK(parse_heartbeat("120 eval waiting 4").phase == "eval");
  CHECK(parse_heartbeat("120 loss=2.31 eval").phase.empty());  // another shape ends the reading
  CHECK(parse_heartbeat("120 Eval").phase.empty());
  CHECK_FALSE(parse_heartbeat("120 loss=2.31 waiting").waiting);
  HeartbeatSeen seen{.running_since = 100};
  seen = observe(seen, std::string("5"), 100);
  seen = observe(seen, std::string("5 eval"), 105);
  CHECK(hang_reason(seen, settings(), 200).empty());  // an evaluation longer than the steady timeout
  const auto why = hang_reason(seen, settings(), 205);
  CHECK(why.find("at \"5 eval\" (heartbeat.save_timeout") != std::string::npos);
}

TEST_CASE("a heartbeat that changes only by \"waiting\" shows life, not progress") {
  HeartbeatSeen seen{.running_since = 100};
  seen = observe(seen, std::string("3"), 100);
  seen = observe(seen, std::string("4"), 100);
  seen = observe(seen, std::string("4 waiting 1"), 105);
  seen = observe(seen, std::string("4 waiting 2"), 109);
  CHECK(seen.changed_at == 109);
  CHECK(seen.progress_at == 100);
  CHECK(hang_reason(seen, settings(), 110).find("heartbeat without progress for 10s") == 0);
  seen = observe(seen, std::string("5"), 111);
  CHECK(hang_reason(seen, settings(), 115).empty());
}

TEST_CASE("ranks that wait on their peers before the attempt's first step are meeting: the start-up timeout holds") {
  HeartbeatSeen seen{.running_since = 100};
  seen = observe(seen, std::string("0"), 102);
  seen = observe(seen, std::string("0 waiting 1"), 107);
  CHECK(hang_reason(seen, settings(), 130).empty());  // 64 ranks meet for long: not the steady timeout
  CHECK(hang_reason(seen, settings(), 160).find("heartbeat without progress for 58s at \"0 waiting 1\"") == 0);
  seen = observe(seen, std::string("1"), 140);  // the first step: the steady timeout from here
  seen = observe(seen, std::string("1 waiting 1"), 145);
  CHECK(hang_reason(seen, settings(), 150).find("heartbeat without progress for 10s") == 0);
}

TEST_CASE("per-task heartbeats: the attempt progresses while any file does; its step is the highest") {
  HeartbeatSet set{.running_since = 100};
  CHECK(hang_reason(set, settings(), 159).empty());
  CHECK(hang_reason(set, settings(), 160).find("no heartbeat and no output 1m") == 0);
  observe(set, {{"n1.0", "3"}, {"n2.1", "2"}}, 101);
  CHECK(combined(set).step == 3);
  observe(set, {{"n1.0", "3"}, {"n2.1", "4"}}, 108);  // n1 silent, n2 goes on
  CHECK(hang_reason(set, settings(), 117).empty());
  CHECK(combined(set).step == 4);
  observe(set, {{"n1.0", "3"}, {"n2.1", "4 saving"}}, 110);
  CHECK(hang_reason(set, settings(), 150).empty());  // a save under way on any rank: the save timeout
  observe(set, {{"n1.0", "3"}, {"n2.1", "4"}}, 151);
  CHECK(hang_reason(set, settings(), 161).find("in all 2 heartbeat files") != std::string::npos);
  observe(set, {}, 162);  // nothing listed (an NFS hiccup): what was seen stays
  CHECK(set.files.size() == 2);
}

TEST_CASE("per-task heartbeats: the node whose file stopped first by the margin is named, no other") {
  CHECK(heartbeat_node("n1.0") == "n1");
  CHECK(heartbeat_node("gpu-a.rack2.17") == "gpu-a.rack2");
  CHECK(heartbeat_node("attempt-1").empty());
  CHECK(heartbeat_node("n1.x").empty());
  auto s = settings();
  CHECK(stale_margin(s) == 2.5);
  s.steady_timeout = Seconds(4);
  CHECK(stale_margin(s) == 2);

  HeartbeatSet set{.running_since = 100};
  observe(set, {{"", "1"}, {"n1.0", "1"}, {"n1.1", "1"}, {"n2.2", "1"}, {"n2.3", "1"}}, 100);
  observe(set, {{"n1.0", "2"}, {"n1.1", "2"}, {"n2.2", "2"}, {"n2.3", "2"}}, 101);
  // n2 loses power after step 2; n1's ranks write step 3, then wait in the collective.
  observe(set, {{"n1.0", "3"}, {"n1.1", "3"}}, 102);
  CHECK(stale_first(set, 2).empty());  // one second apart: within the margin, nothing is known
  observe(set, {{"n1.0", "3 waiting 1"}, {"n1.1", "3 waiting 1"}}, 104);
  const auto named = stale_first(set, 2);
  REQUIRE(named.size() == 1);
  CHECK(named[0].node == "n2");
  CHECK(named[0].lead == 3);
  HeartbeatSet one{.running_since = 100};  // a single node's files tell nothing about nodes
  observe(one, {{"n1.0", "1"}, {"n1.1", "2"}}, 100);
  observe(one, {{"n1.1", "3"}}, 110);
  CHECK(stale_first(one, 2).empty());
}

TEST_CASE("calibration: the steady timeout follows the campaign's pace, within its bounds") {
  mlsup::config::HeartbeatSettings s;
  s.steady_timeout = Seconds(300);
  s.calibrate_min = Seconds(30);
  s.calibrate_factor = 10;
  Calibration c;
  HeartbeatSeen before, after;
  before.progress_at = 100;
  before.step = 1;
  for (int i = 0; i < 25; ++i) {
    after = before;
    after.step = before.step + 1;
    after.progress_at = before.progress_at + (i == 7 ? 4.5 : 1.0);
    learn(c, before, after);
    before = after;
  }
  CHECK(c.steps == 25);
  CHECK(c.longest == doctest::Approx(4.5));
  s.calibrate = false;
  CHECK(steady_timeout(s, c).count() == 300);  // calibration off
  s.calibrate = true;
  CHECK(steady_timeout(s, c).count() == 45);
  c.longest = 1;
  CHECK(steady_timeout(s, c).count() == 30);  // never below calibrate_min
  c.longest = 100;
  CHECK(steady_timeout(s, c).count() == 300);  // never above steady_timeout
  c = {4.5, 19};
  CHECK(steady_timeout(s, c).count() == 300);  // too few steps seen
}

TEST_CASE("calibration by default: a training that steps every 2 s is hung after at most 30 s of silence") {
  const mlsup::config::HeartbeatSettings s;  // the defaults
  CHECK(s.calibrate);
  Calibration c;
  HeartbeatSeen before, after;
  before.step = 1;
  before.progress_at = 100;
  for (int i = 0; i < 20; ++i) {
    after = before;
    after.step = before.step + 1;
    after.progress_at = before.progress_at + (i % 2 ? 2.0 : 2.5);  // 2 s steps seen through a 500 ms poll
    learn(c, before, after);
    before = after;
  }
  CHECK(steady_timeout(s, c).count() == 25);  // the silences as seen
  // In force: the longest seen less the default 500 ms poll (what polling adds): 10 x 2 s.
  const auto in_force = settings_in_force(s, mlsup::config::Millis(500), c);
  CHECK(in_force.steady_timeout.count() == 20);
  HeartbeatSeen seen{.running_since = 100};
  seen = observe(seen, std::string("41"), 145);  // step 41 written up to one poll before 145
  CHECK(hang_reason(seen, in_force, 164.9).empty());
  CHECK_FALSE(hang_reason(seen, in_force, 165).empty());  // at most 20.5 s after the write: within 30 s
}

TEST_CASE("calibration in force: the longest silence seen less one poll interval, never below the floor") {
  mlsup::config::HeartbeatSettings s;
  s.steady_timeout = Seconds(300);
  s.calibrate_min = Seconds(1);
  s.calibrate_factor = 10;
  const Calibration c{.longest = 3.0, .steps = 20};
  CHECK(settings_in_force(s, mlsup::config::Millis(500), c).steady_timeout.count() == 25);
  CHECK(settings_in_force(s, mlsup::config::Millis(1000), c).steady_timeout.count() == 20);
  // Steps faster than the poll: every pass sees one, the pace is unknown below it; three polls at least.
  const Calibration fast{.longest = 0.5, .steps = 40};
  CHECK(settings_in_force(s, mlsup::config::Millis(500), fast).steady_timeout.count() == 2);
  CHECK(settings_in_force(s, mlsup::config::Millis(500), fast).calibrate_min.count() == 2);
}

TEST_CASE("calibration: a calibrated hang that no heartbeat explains doubles the factor, once per attempt") {
  mlsup::config::HeartbeatSettings s;
  s.steady_timeout = Seconds(300);
  Calibration c{.longest = 2, .steps = 40};
  CHECK(steady_timeout(s, c).count() == 20);
  doubt(c, 3);
  CHECK(steady_timeout(s, c).count() == 40);
  doubt(c, 3);  // the same attempt's hang seen again (its cancel not yet through)
  CHECK(steady_timeout(s, c).count() == 40);
  doubt(c, 4);
  doubt(c, 5);
  CHECK(steady_timeout(s, c).count() == 160);
  doubt(c, 6);
  CHECK(steady_timeout(s, c).count() == 300);  // never above the configured timeout
  for (int attempt = 7; attempt < 200; ++attempt) doubt(c, attempt);
  CHECK(steady_timeout(s, c).count() == 300);
}

TEST_CASE("calibration: start-up and saves are not the pace") {
  Calibration c;
  HeartbeatSeen first, next;
  next.step = 5;
  next.progress_at = 200;
  learn(c, first, next);  // nothing seen before: the job's start-up
  CHECK(c.steps == 0);
  HeartbeatSeen saving = next;
  saving.phase = "saving";
  HeartbeatSeen after = next;
  after.step = 6;
  after.progress_at = 260;
  learn(c, saving, after);
  CHECK(c.steps == 0);
  learn(c, next, after);
  CHECK(c.steps == 1);
  CHECK(c.longest == doctest::Approx(60));
}

TEST_CASE("calibration: the job's output (no heartbeat written) is not the pace") {
  Calibration c;
  HeartbeatSeen before, after;
  before.step = after.step = -1;
  before.content = output_content(10);
  before.progress_at = 100;
  after.content = output_content(20);
  after.progress_at = 101;
  learn(c, before, after);
  CHECK(c.steps == 0);
}

TEST_CASE("per-task heartbeats: ranks that say saving but wait on their peers are not a save under way") {
  HeartbeatSet set;
  set.running_since = 100;
  observe(set, {{"n1.0", "40"}, {"n2.1", "40"}}, 100);
  // Rank 0 entered the save and waits for rank 1 in its collective; rank 1's node froze before it
  // got there: the steady timeout applies, not the save timeout.
  observe(set, {{"n1.0", "40 saving waiting 1"}, {"n2.1", "40"}}, 101);
  observe(set, {{"n1.0", "40 saving waiting 9"}, {"n2.1", "40"}}, 109);
  CHECK(combined(set).phase.empty());
  CHECK(hang_reason(set, settings(), 111).find("heartbeat without progress") == 0);
  // A rank that is writing its shard (saving, not waiting) makes it a save.
  observe(set, {{"n1.0", "40 saving waiting 9"}, {"n2.1", "40 saving"}}, 112);
  CHECK(combined(set).phase == "saving");
  CHECK(hang_reason(set, settings(), 125).empty());
}

TEST_CASE("the job's output shows life until a heartbeat file is written; then the heartbeats rule") {
  HeartbeatSet set;
  set.running_since = 100;
  observe(set, {{kOutputKey, output_content(40)}}, 105);
  CHECK(hang_reason(set, settings(), 114).empty());
  observe(set, {{kOutputKey, output_content(80)}}, 112);  // it printed more
  CHECK(hang_reason(set, settings(), 121).empty());
  CHECK(combined(set).step == -1);  // the output has no step
  CHECK(hang_reason(set, settings(), 122).empty());  // silent past the steady timeout, but within the start-up window
  const auto why = hang_reason(set, settings(), 160);
  CHECK(why.find("the job's output has not grown for 48s at 80 bytes") == 0);
  CHECK_FALSE(heartbeat_written(set));
  observe(set, {{"", "5\n"}}, 123);  // the training writes its first heartbeat: the output no longer counts
  CHECK(heartbeat_written(set));
  CHECK(set.files.count(kOutputKey) == 0);
  observe(set, {{kOutputKey, output_content(9000)}}, 130);  // a read that still carried it is dropped too
  CHECK(set.files.count(kOutputKey) == 0);
  CHECK(hang_reason(set, settings(), 133).find("heartbeat unchanged for 10s at \"5\"") == 0);
}

TEST_CASE("the start-up message names what was awaited: heartbeat, output, or both") {
  HeartbeatSeen seen;
  seen.running_since = 100;
  auto s = settings();
  CHECK(hang_reason(seen, s, 160).find("no heartbeat and no output 1m") == 0);
  s.source = "file";
  CHECK(hang_reason(seen, s, 160).find("no heartbeat 1m") == 0);
  s.source = "output";
  CHECK(hang_reason(seen, s, 160).find("no output 1m") == 0);
}

TEST_CASE("waited_on: the stale node while every rank on the other nodes says it waits") {
  HeartbeatSet set;
  set.running_since = 100;
  observe(set, {{"n1.0", "40"}, {"n1.1", "40"}, {"n2.2", "40"}}, 100);
  observe(set, {{"n1.0", "40 waiting 1"}, {"n1.1", "40 waiting 1"}}, 104);
  REQUIRE(waited_on(set, 3).size() == 1);
  CHECK(waited_on(set, 3)[0].node == "n2");
  CHECK(waited_on(set, 3)[0].lead == doctest::Approx(4));
  CHECK(waited_on(set, 5).empty());  // not yet past the margin
  observe(set, {{"n1.1", "41"}}, 105);  // a rank on n1 still steps: nobody is known to wait on n2
  CHECK(waited_on(set, 3).empty());
  HeartbeatSet alone;
  alone.running_since = 100;
  observe(alone, {{"n1.0", "40"}}, 100);
  observe(alone, {{"n1.0", "40 waiting 1"}}, 110);
  CHECK(waited_on(alone, 3).empty());  // one node: nobody to wait on
}

TEST_CASE("calibration: never below three poll intervals") {
  CHECK(calibrate_floor(std::chrono::milliseconds(500)).count() == 2);
  CHECK(calibrate_floor(std::chrono::milliseconds(60'000)).count() == 180);
}
