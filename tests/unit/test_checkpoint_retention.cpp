#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "checkpoint/retention.h"
#include "support.h"

using namespace mlsup;
using checkpoint::Checkpoint;
using checkpoint::Scan;

namespace {

Checkpoint complete(long long step) { return {"/ckpt/iter_" + std::to_string(step), step, true, "", true}; }
// Complete only by being non-empty: nothing proves the save finished.
Checkpoint unproven(long long step) { return {"/ckpt/iter_" + std::to_string(step), step, true, "", false}; }
Checkpoint incomplete(long long step) { return {"/ckpt/iter_" + std::to_string(step), step, false, "is an empty folder"}; }

Scan five_complete() {
  Scan s;
  for (long long step : {100, 200, 300, 400, 500}) s.checkpoints.push_back(complete(step));
  return s;
}

std::vector<long long> steps(const std::vector<Checkpoint>& checkpoints) {
  std::vector<long long> out;
  for (const auto& c : checkpoints) out.push_back(c.step);
  return out;
}

std::vector<long long> gone_steps(const Scan& scan, int keep, const std::vector<std::string>& protected_paths = {}) {
  return steps(checkpoint::deletable(scan, keep, protected_paths));
}

}  // namespace

TEST_CASE("checkpoint retention: keep 2 of 5 deletes the 3 oldest") {
  CHECK(gone_steps(five_complete(), 2) == std::vector<long long>{100, 200, 300});
  const auto gone = checkpoint::deletable(five_complete(), 2, {});
  REQUIRE(gone.size() == 3);
  CHECK(gone[0].path == "/ckpt/iter_100");
}

TEST_CASE("checkpoint retention: a protected checkpoint is kept on top of keep") {
  CHECK(gone_steps(five_complete(), 2, {"/ckpt/iter_200"}) == std::vector<long long>{100, 300});
  CHECK(gone_steps(five_complete(), 2, {"/ckpt/iter_200/", "/ckpt//iter_300"}) == std::vector<long long>{100});
  CHECK(gone_steps(five_complete(), 2, {"", "/elsewhere/iter_100"}) == std::vector<long long>{100, 200, 300});
}

TEST_CASE("checkpoint retention: the newest complete one stays when keep is 1 and an older one is protected") {
  CHECK(gone_steps(five_complete(), 1, {"/ckpt/iter_100"}) == std::vector<long long>{200, 300, 400});
  CHECK(gone_steps(five_complete(), 1, {"/ckpt/iter_500"}) == std::vector<long long>{100, 200, 300, 400});
}

TEST_CASE("checkpoint retention: an incomplete checkpoint newer than the newest complete one may be a save in progress") {
  Scan s;
  s.checkpoints = {complete(100), complete(200), complete(300), incomplete(400), incomplete(500)};
  CHECK(gone_steps(s, 1) == std::vector<long long>{100, 200});
}

TEST_CASE("checkpoint retention: an incomplete checkpoint older than the newest complete one is a save that failed") {
  Scan s;
  s.checkpoints = {complete(100), incomplete(200), complete(300)};
  CHECK(gone_steps(s, 2) == std::vector<long long>{200});
  CHECK(gone_steps(s, 2, {"/ckpt/iter_200"}).empty());
}

TEST_CASE("checkpoint retention: nothing is deleted with keep 0, without a complete checkpoint, or with fewer than keep") {
  CHECK(gone_steps(five_complete(), 0).empty());
  CHECK(gone_steps(five_complete(), -1).empty());
  CHECK(gone_steps(five_complete(), 5).empty());
  CHECK(gone_steps(five_complete(), 9).empty());
  Scan none;
  none.checkpoints = {incomplete(100), incomplete(200)};
  CHECK(gone_steps(none, 1).empty());
  CHECK(gone_steps(Scan{}, 1).empty());
}

TEST_CASE("checkpoint retention: on a scanned megatron folder") {
  mlsup::test::TempDir dir;
  for (const char* name : {"iter_0000100", "iter_0000200", "iter_0000300", "iter_0000400"}) dir.write(std::string(name) + "/w", "w");
  dir.write("latest_checkpointed_iteration.txt", "300\n");
  config::CheckpointSettings settings;
  settings.dir = dir.path();
  settings.layout = "megatron";
  const auto gone = checkpoint::deletable(checkpoint::scan(settings), 2, {});
  REQUIRE(gone.size() == 1);
  CHECK(gone[0].path == (std::filesystem::path(dir.path()) / "iter_0000100").string());
}

TEST_CASE("checkpoint retention: a checkpoint complete only by being non-empty is never deleted and does not count") {
  Scan s;
  s.checkpoints = {unproven(100), unproven(200), unproven(300)};
  CHECK(gone_steps(s, 1).empty());
  s.checkpoints = {complete(100), unproven(200), complete(300), complete(400)};
  CHECK(gone_steps(s, 1) == std::vector<long long>{100, 300});
}

namespace {

// A checkpoint.dir of the given layout after a save died half way: step 1000 finished, step 2000
// has its first shard and nothing else. Returns the steps retention with keep 1 deletes.
std::vector<long long> after_a_torn_save(const std::string& layout, const std::string& marker = "") {
  mlsup::test::TempDir dir;
  const std::map<std::string, std::pair<std::string, std::string>> names{
      {"hf", {"checkpoint-1000", "checkpoint-2000"}}, {"glob", {"step_1000", "step_2000"}},
      {"megatron", {"iter_0001000", "iter_0002000"}}, {"deepspeed", {"global_step1000", "global_step2000"}}};
  const auto& [good, torn] = names.at(layout);
  for (const char* f : {"model-00001.safetensors", "optimizer.pt", "trainer_state.json", "COMPLETE"}) dir.write(good + "/" + f, "w");
  dir.write(torn + "/model-00001.safetensors", "w");
  if (layout == "megatron") dir.write("latest_checkpointed_iteration.txt", "1000\n");
  if (layout == "deepspeed") dir.write("latest", "global_step1000\n");
  config::CheckpointSettings settings;
  settings.dir = dir.path();
  settings.layout = layout;
  settings.complete_marker = marker;
  const auto scan = checkpoint::scan(settings);
  const auto newest = checkpoint::newest_complete(scan);
  return gone_steps(scan, 1, {newest ? newest->path : ""});
}

}  // namespace

TEST_CASE("checkpoint retention: a save torn half way never costs the good checkpoint before it (keep 1)") {
  CHECK(after_a_torn_save("hf").empty());  // trainer_state.json is the hf layout's proof
  CHECK(after_a_torn_save("glob").empty());  // nothing proves a glob checkpoint complete without a marker
  CHECK(after_a_torn_save("glob", "COMPLETE").empty());
  CHECK(after_a_torn_save("megatron").empty());
  CHECK(after_a_torn_save("deepspeed").empty());
}

TEST_CASE("checkpoint retention: a pointer that cannot be trusted proves nothing, so nothing is deleted") {
  mlsup::test::TempDir dir;
  for (const char* name : {"iter_0000100", "iter_0000200", "iter_0000300"}) dir.write(std::string(name) + "/w", "w");
  dir.write("latest_checkpointed_iteration.txt", "garbage\n");
  config::CheckpointSettings settings;
  settings.dir = dir.path();
  settings.layout = "megatron";
  const auto scan = checkpoint::scan(settings);
  REQUIRE(!scan.pointer_problem.empty());
  CHECK(checkpoint::deletable(scan, 1, {}).empty());
}
