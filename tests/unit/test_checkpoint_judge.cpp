#include <doctest/doctest.h>

#include <set>
#include <string>

#include "checkpoint/judge.h"

using namespace mlsup;
using checkpoint::Entry;
using checkpoint::Listing;

namespace {

// A listing of /ckpt that no file system stands behind: what exists is the set given.
Listing listing(std::vector<std::string> folders, std::set<std::string> existing, std::string pointer) {
  Listing l;
  for (const auto& name : folders) l.entries.push_back(Entry{name, "/ckpt/" + name, true, false});
  l.pointer_exists = !pointer.empty();
  l.pointer_text = pointer;
  l.exists = [existing](const std::filesystem::path& p) { return existing.count(p.string()) > 0; };
  l.emptiness = [](const Entry&) { return std::string(); };
  return l;
}

}  // namespace

TEST_CASE("checkpoint judge: a listing alone decides, no file read (megatron: the pointer's folder and older are complete)") {
  config::CheckpointSettings s;
  s.dir = "/ckpt";
  s.layout = "megatron";
  const auto scan = checkpoint::judge(s, listing({"iter_0000100", "iter_0000200", "iter_0000300"}, {}, "200\n"));
  REQUIRE(scan.checkpoints.size() == 3);
  CHECK(scan.checkpoints[0].complete);
  CHECK(scan.checkpoints[1].proven);
  CHECK_FALSE(scan.checkpoints[2].complete);
  CHECK(scan.checkpoints[2].why_incomplete.find("newer than latest_checkpointed_iteration.txt") != std::string::npos);
  CHECK(scan.pointer_step == 200);
  CHECK(scan.pointer_problem.empty());
}

TEST_CASE("checkpoint judge: a complete_marker is asked of the listing's exists()") {
  config::CheckpointSettings s;
  s.dir = "/ckpt";
  s.layout = "hf";
  s.complete_marker = "done";
  const auto scan = checkpoint::judge(s, listing({"checkpoint-10", "checkpoint-20"}, {"/ckpt/checkpoint-10/done"}, ""));
  REQUIRE(scan.checkpoints.size() == 2);
  CHECK(scan.checkpoints[0].complete);
  CHECK_FALSE(scan.checkpoints[1].complete);
  CHECK(scan.checkpoints[1].why_incomplete == "has no done inside");
}

TEST_CASE("checkpoint judge: settings that cannot name a checkpoint are the scan's problem") {
  config::CheckpointSettings s;
  s.layout = "nemo";
  CHECK(checkpoint::settings_problem(s).find("is not one of megatron") != std::string::npos);
  CHECK(checkpoint::judge(s, listing({"x"}, {}, "")).dir_problem == checkpoint::settings_problem(s));
}
