#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "checkpoint/checkpoints.h"
#include "support.h"

using namespace mlsup;
using checkpoint::Scan;
namespace fs = std::filesystem;

namespace {

constexpr const char* kMegatronPointer = "latest_checkpointed_iteration.txt";

// A checkpoint folder with something in it.
struct Dir {
  mlsup::test::TempDir temp;
  config::CheckpointSettings settings;

  explicit Dir(const std::string& layout) {
    settings.dir = temp.path();
    settings.layout = layout;
  }
  void folder(const std::string& name) const { temp.write(name + "/model.pt", "weights"); }
  void empty_folder(const std::string& name) const { fs::create_directories(fs::path(temp.path()) / name); }
  void file(const std::string& name, const std::string& text) const { temp.write(name, text); }
  std::string path(const std::string& name) const { return (fs::path(temp.path()) / name).string(); }
  Scan scan() const { return checkpoint::scan(settings); }
};

std::vector<long long> steps(const Scan& scan) {
  std::vector<long long> out;
  for (const auto& c : scan.checkpoints) out.push_back(c.step);
  return out;
}

std::vector<bool> completeness(const Scan& scan) {
  std::vector<bool> out;
  for (const auto& c : scan.checkpoints) out.push_back(c.complete);
  return out;
}

// The file name of the newest complete checkpoint, or "" for a fresh start.
std::string newest(const Scan& scan) {
  const auto found = checkpoint::newest_complete(scan);
  return found ? fs::path(found->path).filename().string() : "";
}

}  // namespace

TEST_CASE("checkpoint megatron: the pointer names the newest folder") {
  Dir d("megatron");
  for (const char* name : {"iter_0000100", "iter_0000200", "iter_0000300"}) d.folder(name);
  d.file(kMegatronPointer, "300\n");
  const auto s = d.scan();
  CHECK(steps(s) == std::vector<long long>{100, 200, 300});
  CHECK(completeness(s) == std::vector<bool>{true, true, true});
  CHECK(s.pointer_step == 300);
  CHECK(s.pointer_problem == "");
  CHECK(s.dir_problem == "");
  REQUIRE(checkpoint::newest_complete(s));
  CHECK(checkpoint::newest_complete(s)->path == d.path("iter_0000300"));
  CHECK(checkpoint::newest_complete(s)->step == 300);
}

TEST_CASE("checkpoint megatron: a pointer to a missing folder falls back to the newest complete one") {
  Dir d("megatron");
  d.folder("iter_0000100");
  d.folder("iter_0000200");
  d.file(kMegatronPointer, "300");
  const auto s = d.scan();
  CHECK(newest(s) == "iter_0000200");
  CHECK(s.pointer_step == 300);
  CHECK(s.pointer_problem == "latest_checkpointed_iteration.txt names iter_0000300, which does not exist");
}

TEST_CASE("checkpoint megatron: a pointer to an incomplete folder falls back to the previous one") {
  Dir d("megatron");
  SUBCASE("the complete marker is missing") {
    d.settings.complete_marker = "done";
    d.folder("iter_0000100");
    d.file("iter_0000100/done", "");
    d.folder("iter_0000200");
    d.file("iter_0000200/done", "");
    d.folder("iter_0000300");
    d.file(kMegatronPointer, "300");
    const auto s = d.scan();
    CHECK(newest(s) == "iter_0000200");
    CHECK(s.checkpoints.back().why_incomplete == "has no done inside");
    CHECK(s.pointer_problem == "latest_checkpointed_iteration.txt names iter_0000300, which is incomplete (has no done inside)");
  }
  SUBCASE("the folder is empty") {
    d.folder("iter_0000100");
    d.empty_folder("iter_0000200");
    d.file(kMegatronPointer, "200");
    const auto s = d.scan();
    CHECK(newest(s) == "iter_0000100");
    CHECK(s.pointer_problem == "latest_checkpointed_iteration.txt names iter_0000200, which is incomplete (is an empty folder)");
  }
}

TEST_CASE("checkpoint megatron: a folder newer than the pointer is a save in progress") {
  Dir d("megatron");
  for (const char* name : {"iter_0000100", "iter_0000200", "iter_0000300"}) d.folder(name);
  d.file(kMegatronPointer, "200");
  const auto s = d.scan();
  CHECK(completeness(s) == std::vector<bool>{true, true, false});
  CHECK(s.checkpoints[2].why_incomplete ==
        "is newer than latest_checkpointed_iteration.txt (step 200): a save in progress, or one that did not finish");
  CHECK(newest(s) == "iter_0000200");
  CHECK(s.pointer_problem == "");
}

TEST_CASE("checkpoint megatron: with a complete marker, the marker alone decides") {
  Dir d("megatron");
  d.settings.complete_marker = "done";
  d.folder("iter_0000100");
  d.file("iter_0000100/done", "");
  d.file("iter_0000200/done", "");
  d.file(kMegatronPointer, "100");
  const auto s = d.scan();
  CHECK(completeness(s) == std::vector<bool>{true, true});
  CHECK(newest(s) == "iter_0000200");
}

TEST_CASE("checkpoint megatron: a pointer that holds garbage is not trusted") {
  Dir d("megatron");
  d.folder("iter_0000100");
  d.folder("iter_0000200");
  d.empty_folder("iter_0000300");
  SUBCASE("binary") {
    d.file(kMegatronPointer, std::string("\x00\x01\xff\x7f", 4));
    const auto s = d.scan();
    CHECK(s.pointer_problem ==
          "latest_checkpointed_iteration.txt is not one line of text; checkpoints are judged by their content");
    CHECK(!s.pointer_step);
    CHECK(newest(s) == "iter_0000200");
    CHECK(completeness(s) == std::vector<bool>{true, true, false});
  }
  SUBCASE("empty") {
    d.file(kMegatronPointer, " \n");
    const auto s = d.scan();
    CHECK(s.pointer_problem == "latest_checkpointed_iteration.txt is empty; checkpoints are judged by their content");
    CHECK(newest(s) == "iter_0000200");
  }
  SUBCASE("words") {
    d.file(kMegatronPointer, "step 200\n");
    const auto s = d.scan();
    CHECK(s.pointer_problem ==
          "latest_checkpointed_iteration.txt holds \"step 200\", which is neither a step number nor \"release\"; "
          "checkpoints are judged by their content");
    CHECK(newest(s) == "iter_0000200");
  }
  SUBCASE("two lines") {
    d.file(kMegatronPointer, "100\n200\n");
    const auto s = d.scan();
    CHECK(s.pointer_problem ==
          "latest_checkpointed_iteration.txt is not one line of text; checkpoints are judged by their content");
  }
  SUBCASE("a number with spaces and a newline is fine") {
    d.file(kMegatronPointer, "  100 \r\n");
    const auto s = d.scan();
    CHECK(s.pointer_problem == "");
    CHECK(s.pointer_step == 100);
    CHECK(newest(s) == "iter_0000100");
  }
  SUBCASE("a number too large for a step") {
    d.file(kMegatronPointer, "99999999999999999999999");
    CHECK(d.scan().pointer_problem ==
          "latest_checkpointed_iteration.txt holds \"99999999999999999999999\", which is neither a step number nor "
          "\"release\"; checkpoints are judged by their content");
  }
}

TEST_CASE("checkpoint megatron: without a pointer file no save has finished") {
  Dir d("megatron");
  d.folder("iter_0000100");
  const auto s = d.scan();
  CHECK(completeness(s) == std::vector<bool>{false});
  CHECK(s.checkpoints[0].why_incomplete == "there is no latest_checkpointed_iteration.txt yet: no save has finished");
  CHECK(s.pointer_problem == "latest_checkpointed_iteration.txt does not exist: no save has finished");
  CHECK(newest(s) == "");
}

TEST_CASE("checkpoint megatron: release") {
  Dir d("megatron");
  d.file(kMegatronPointer, "release\n");
  SUBCASE("the release folder is the checkpoint, at step 0") {
    d.folder("release");
    d.folder("iter_0000100");
    const auto s = d.scan();
    CHECK(steps(s) == std::vector<long long>{0, 100});
    CHECK(completeness(s) == std::vector<bool>{true, false});
    CHECK(s.pointer_step == 0);
    CHECK(newest(s) == "release");
  }
  SUBCASE("a missing release folder is a fresh start") {
    const auto s = d.scan();
    CHECK(s.pointer_problem == "latest_checkpointed_iteration.txt names release, which does not exist");
    CHECK(newest(s) == "");
  }
  SUBCASE("release is a checkpoint only when the pointer names it") {
    d.folder("release");
    d.folder("iter_0000100");
    d.file(kMegatronPointer, "100");
    CHECK(steps(d.scan()) == std::vector<long long>{100});
  }
}

TEST_CASE("checkpoint megatron: work in progress and other names are never checkpoints") {
  Dir d("megatron");
  d.folder("iter_0000100");
  for (const char* name : {".iter_0000200", ".tmp_iter_0000200", "iter_0000200.tmp", "iter_0000200_partial",
                           "iter_0000200.saving", "iter_0000200-TMP", "iter_200", "iter_abcdefg", "release"})
    d.folder(name);
  d.file("iter_0000300", "a file, not a folder");
  d.file(kMegatronPointer, "100");
  const auto s = d.scan();
  CHECK(steps(s) == std::vector<long long>{100});
  CHECK(newest(s) == "iter_0000100");
}

TEST_CASE("checkpoint megatron: steps of more than seven digits sort by number") {
  Dir d("megatron");
  d.folder("iter_9000000");
  d.folder("iter_12000000");
  d.file(kMegatronPointer, "12000000");
  const auto s = d.scan();
  CHECK(steps(s) == std::vector<long long>{9000000, 12000000});
  CHECK(newest(s) == "iter_12000000");
}

TEST_CASE("checkpoint: an empty or missing checkpoint.dir is a fresh start") {
  Dir d("megatron");
  SUBCASE("empty") {
    const auto s = d.scan();
    CHECK(s.checkpoints.empty());
    CHECK(s.dir_problem == "");
    CHECK(s.pointer_problem == "");
    CHECK(newest(s) == "");
  }
  SUBCASE("missing") {
    d.settings.dir = d.path("not-yet");
    const auto s = d.scan();
    CHECK(s.checkpoints.empty());
    CHECK(s.dir_problem == "checkpoint.dir " + d.path("not-yet") + " does not exist (no checkpoint yet)");
    CHECK(newest(s) == "");
  }
  SUBCASE("a file") {
    d.file("f", "x");
    d.settings.dir = d.path("f");
    CHECK(d.scan().dir_problem == "checkpoint.dir " + d.path("f") + " is not a folder");
  }
  SUBCASE("not set") {
    d.settings.dir = "";
    CHECK(d.scan().dir_problem == "checkpoint.dir is not set");
  }
  SUBCASE("an unknown layout") {
    d.settings.layout = "orbax";
    CHECK(d.scan().dir_problem == "checkpoint.layout \"orbax\" is not one of megatron, deepspeed, hf, glob");
  }
}

TEST_CASE("checkpoint deepspeed: the latest file names the tag folder") {
  Dir d("deepspeed");
  d.folder("global_step100");
  d.folder("global_step1200");
  d.file("zero_to_fp32.py", "# script");
  d.file("latest", "global_step1200");
  const auto s = d.scan();
  CHECK(steps(s) == std::vector<long long>{100, 1200});
  CHECK(s.pointer_step == 1200);
  CHECK(s.pointer_problem == "");
  CHECK(newest(s) == "global_step1200");
}

TEST_CASE("checkpoint deepspeed: an untrustworthy tag falls back") {
  Dir d("deepspeed");
  d.folder("global_step100");
  d.folder("global_step200");
  SUBCASE("missing") {
    d.file("latest", "global_step300\n");
    const auto s = d.scan();
    CHECK(s.pointer_problem == "latest names global_step300, which does not exist");
    CHECK(newest(s) == "global_step200");
  }
  SUBCASE("incomplete") {
    d.settings.complete_marker = "mp_rank_00_model_states.pt";
    d.file("global_step100/mp_rank_00_model_states.pt", "w");
    d.file("global_step200/mp_rank_00_model_states.pt", "w");
    d.folder("global_step300");
    d.file("latest", "global_step300");
    const auto s = d.scan();
    CHECK(s.pointer_problem ==
          "latest names global_step300, which is incomplete (has no mp_rank_00_model_states.pt inside)");
    CHECK(newest(s) == "global_step200");
  }
  SUBCASE("newer than the tag") {
    d.folder("global_step300");
    d.file("latest", "global_step200");
    const auto s = d.scan();
    CHECK(completeness(s) == std::vector<bool>{true, true, false});
    CHECK(s.checkpoints[2].why_incomplete == "is newer than latest (step 200): a save in progress, or one that did not finish");
    CHECK(newest(s) == "global_step200");
  }
  SUBCASE("not a folder name") {
    d.file("latest", "../elsewhere/global_step900");
    const auto s = d.scan();
    CHECK(s.pointer_problem ==
          "latest holds \"../elsewhere/global_step900\", which is not a folder name; checkpoints are judged by their content");
    CHECK(newest(s) == "global_step200");
  }
}

TEST_CASE("checkpoint deepspeed: tags of any name") {
  Dir d("deepspeed");
  SUBCASE("the step is the tag's trailing digits") {
    d.folder("run-a_epoch3_step1500");
    d.folder("run-a_epoch3_step900");
    d.file("latest", "run-a_epoch3_step1500");
    const auto s = d.scan();
    CHECK(steps(s) == std::vector<long long>{900, 1500});
    CHECK(newest(s) == "run-a_epoch3_step1500");
  }
  SUBCASE("a tag without digits counts as step 0") {
    d.folder("final");
    d.folder("global_step100");
    d.file("latest", "final");
    const auto s = d.scan();
    CHECK(steps(s) == std::vector<long long>{0, 100});
    CHECK(s.pointer_step == 0);
    CHECK(completeness(s) == std::vector<bool>{true, false});
    CHECK(newest(s) == "final");
  }
  SUBCASE("folders without trailing digits are not tags unless named") {
    d.folder("global_step100");
    d.folder("logs");
    d.file("latest", "global_step100");
    CHECK(steps(d.scan()) == std::vector<long long>{100});
  }
}

TEST_CASE("checkpoint hf: checkpoint-N folders") {
  Dir d("hf");
  d.folder("checkpoint-500");
  d.file("checkpoint-500/trainer_state.json", "{}");
  d.folder("checkpoint-1000");
  d.file("checkpoint-1000/trainer_state.json", "{}");
  d.empty_folder("checkpoint-1500");
  d.folder("checkpoint-2000.tmp");
  d.folder(".checkpoint-2500");
  d.folder("checkpoint-");
  d.folder("checkpoint-final");
  d.folder("runs");
  const auto s = d.scan();
  CHECK(steps(s) == std::vector<long long>{500, 1000, 1500});
  CHECK(completeness(s) == std::vector<bool>{true, true, false});
  CHECK(s.checkpoints[2].why_incomplete == "has no trainer_state.json inside");
  CHECK(s.pointer_problem == "");
  CHECK(!s.pointer_step);
  CHECK(newest(s) == "checkpoint-1000");
}

TEST_CASE("checkpoint hf: a save that died before trainer_state.json is not complete") {
  Dir d("hf");
  d.folder("checkpoint-1000");
  d.file("checkpoint-1000/trainer_state.json", "{}");
  d.folder("checkpoint-2000");  // model shards written, the trainer state (written last) not yet
  const auto s = d.scan();
  CHECK(completeness(s) == std::vector<bool>{true, false});
  CHECK(s.checkpoints[0].proven);
  CHECK(newest(s) == "checkpoint-1000");
}

TEST_CASE("checkpoint glob: complete by content only, which proves nothing; a marker does") {
  Dir d("glob");
  d.folder("step_1000");
  const auto plain = d.scan();
  CHECK(completeness(plain) == std::vector<bool>{true});
  CHECK(!plain.checkpoints[0].proven);
  d.settings.complete_marker = "model.pt";
  CHECK(d.scan().checkpoints[0].proven);
}

TEST_CASE("checkpoint hf: the complete marker") {
  Dir d("hf");
  d.settings.complete_marker = "trainer_state.json";
  d.folder("checkpoint-500");
  d.file("checkpoint-500/trainer_state.json", "{}");
  d.folder("checkpoint-1000");
  const auto s = d.scan();
  CHECK(completeness(s) == std::vector<bool>{true, false});
  CHECK(s.checkpoints[1].why_incomplete == "has no trainer_state.json inside");
  CHECK(newest(s) == "checkpoint-500");
}

TEST_CASE("checkpoint glob: files with a custom step regex") {
  Dir d("glob");
  d.settings.glob = "model_*.pt";
  d.settings.step_regex = "^model_(\\d+)\\.pt$";
  d.file("model_100.pt", "w");
  d.file("model_20.pt", "w");
  d.file("model_300.pt", "");
  d.file("model_x.pt", "w");
  d.file(".model_400.pt", "w");
  d.file("model_500.pt.tmp", "w");
  d.file("notes_600.txt", "w");
  const auto s = d.scan();
  CHECK(steps(s) == std::vector<long long>{20, 100, 300});
  CHECK(completeness(s) == std::vector<bool>{true, true, false});
  CHECK(s.checkpoints[2].why_incomplete == "is an empty file");
  CHECK(newest(s) == "model_100.pt");
}

TEST_CASE("checkpoint glob: folders with the default regex") {
  Dir d("glob");
  d.folder("run-2");
  d.folder("run-10");
  d.folder("run-x");
  const auto s = d.scan();
  CHECK(steps(s) == std::vector<long long>{2, 10});
  CHECK(newest(s) == "run-10");
}

TEST_CASE("checkpoint glob: the step is the regex's first group") {
  Dir d("glob");
  d.settings.step_regex = "ep(\\d+)-step(\\d+)";
  d.folder("ep9-step100");
  d.folder("ep10-step50");
  CHECK(steps(d.scan()) == std::vector<long long>{9, 10});
}

TEST_CASE("checkpoint glob: work in progress is never a checkpoint, whatever the regex") {
  Dir d("glob");
  d.settings.step_regex = "(\\d+)";
  d.folder("ckpt_100");
  for (const char* name : {"ckpt_200.tmp", "ckpt_300.saving", "ckpt_400.partial", "tmp_ckpt_500", ".ckpt_600", "ckpt_700.TMP"})
    d.folder(name);
  const auto s = d.scan();
  CHECK(steps(s) == std::vector<long long>{100});
  CHECK(newest(s) == "ckpt_100");
}

TEST_CASE("checkpoint deepspeed: a tag folder being written under a temporary name is not a checkpoint") {
  Dir d("deepspeed");
  d.folder("global_step100");
  d.folder("tmp_global_step200");
  d.folder(".global_step200");
  d.folder("partial_global_step200");
  d.file("latest", "global_step100");
  CHECK(steps(d.scan()) == std::vector<long long>{100});
}

TEST_CASE("checkpoint glob: a complete marker cannot be inside a file") {
  Dir d("glob");
  d.settings.complete_marker = "done";
  d.file("ckpt_100", "w");
  d.folder("ckpt_200");
  d.file("ckpt_200/done", "");
  const auto s = d.scan();
  CHECK(completeness(s) == std::vector<bool>{false, true});
  CHECK(s.checkpoints[0].why_incomplete == "is a file, so it cannot hold done");
}

TEST_CASE("checkpoint glob: a step regex that does not compile is reported, not thrown") {
  Dir d("glob");
  d.folder("ckpt_100");
  d.settings.step_regex = "(\\d+";
  const auto s = d.scan();
  CHECK(s.checkpoints.empty());
  CHECK(s.dir_problem.starts_with("checkpoint.step_regex \"(\\d+\" is not a valid regular expression"));
  d.settings.step_regex = "\\d+";
  CHECK(d.scan().dir_problem == "checkpoint.step_regex \"\\d+\" has no group for the step number");
}

TEST_CASE("checkpoint: newest_complete of nothing is a fresh start") {
  CHECK(!checkpoint::newest_complete(Scan{}));
  Scan s;
  s.checkpoints = {{"/c/a", 1, true, ""}, {"/c/b", 2, false, "is an empty folder"}};
  CHECK(checkpoint::newest_complete(s)->path == "/c/a");
}
