// The disk runway (decide/runway.h): a checkpoint's size, the save cadence and retention against what is free.
#include <doctest/doctest.h>

#include "decide/runway.h"

using namespace mlsup::decide;
using doctest::Approx;

namespace {

DiskUse fs(double free_bytes, std::optional<double> free_inodes) {
  return DiskUse{"/scratch", 50, 10, free_bytes, free_inodes, 1};
}

}  // namespace

TEST_CASE("runway: keeping every checkpoint, the file system fills at one checkpoint per save") {
  // 10 GB free, 1 GB every 30 minutes: 10 saves, 5 hours.
  const RunwayInputs in{.checkpoint = CheckpointSize{1e9, 100}, .cadence = 1800, .keep = 0, .complete = 3};
  const auto r = runway(fs(10e9, 1e6), in);
  CHECK(r.state == RunwayState::Filling);
  CHECK(*r.seconds == Approx(5 * 3600));
  CHECK_FALSE(r.inodes);
  CHECK(runway_short(r, 24 * 3600));
  CHECK_FALSE(runway_short(r, 3600));
  CHECK(runway_text(r, fs(10e9, 1e6), in) == "runway 5h00m on /scratch at a 1.0 GB checkpoint every 30m");
}

TEST_CASE("runway: the inodes can run out first") {
  // 100 GB free, but 5,000 inodes for checkpoints of 1,000 files: 5 saves of 10 minutes.
  const RunwayInputs in{.checkpoint = CheckpointSize{1e9, 1000}, .cadence = 600, .keep = 0, .complete = 1};
  const auto r = runway(fs(100e9, 5000), in);
  CHECK(r.state == RunwayState::Filling);
  CHECK(*r.seconds == Approx(3000));
  CHECK(r.inodes);
}

TEST_CASE("runway: retention that holds its checkpoints in the room free is steady; one that cannot, fills") {
  const RunwayInputs in{.checkpoint = CheckpointSize{1e9, 10}, .cadence = 1800, .keep = 3, .complete = 1};
  // Two more to keep and the one written before each prune: 3 GB needed.
  CHECK(runway(fs(3.5e9, std::nullopt), in).state == RunwayState::Steady);
  const auto tight = runway(fs(2.5e9, std::nullopt), in);
  CHECK(tight.state == RunwayState::Filling);
  CHECK(*tight.seconds == Approx(2.5 * 1800));
  const RunwayInputs full{.checkpoint = CheckpointSize{1e9, 10}, .cadence = 1800, .keep = 3, .complete = 3};
  CHECK(runway(fs(1.5e9, std::nullopt), full).state == RunwayState::Steady);
}

TEST_CASE("runway: no room for the next save is short whatever the alert; nothing known is never short") {
  const RunwayInputs in{.checkpoint = CheckpointSize{1e9, 10}, .cadence = 1800, .keep = 2, .complete = 2};
  const auto r = runway(fs(0.5e9, std::nullopt), in);
  CHECK(r.state == RunwayState::NoRoom);
  CHECK(*r.seconds == 0);
  CHECK(runway_short(r, 0));
  const auto inodes = runway(fs(5e9, 4), in);
  CHECK(inodes.state == RunwayState::NoRoom);
  CHECK(inodes.inodes);
  CHECK(runway(fs(1e12, 1e6), RunwayInputs{}).state == RunwayState::Unknown);  // no checkpoint yet
  const RunwayInputs no_cadence{.checkpoint = CheckpointSize{1e9, 10}, .keep = 0};
  const auto unknown = runway(fs(1e12, 1e6), no_cadence);
  CHECK(unknown.state == RunwayState::Unknown);
  CHECK_FALSE(runway_short(unknown, 1e9));
  CHECK(runway(DiskUse{"/x", 50, 10}, in).state == RunwayState::Unknown);  // free bytes not measured
}

TEST_CASE("runway: bytes for people") {
  CHECK(human_bytes(512) == "512 B");
  CHECK(human_bytes(12345) == "12.3 kB");
  CHECK(human_bytes(340e6) == "340 MB");
  CHECK(human_bytes(1.2e9) == "1.2 GB");
  CHECK(human_bytes(3e15) == "3.0 PB");
}
