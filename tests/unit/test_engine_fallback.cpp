// A newest checkpoint the training cannot use: attempts resuming from it fail before any step, so after
// checkpoint.fallback_after of them it is moved into .quarantine/ (never deleted) and the next attempt
// resumes from the one before it, at once and without counting towards the crash loop; after
// checkpoint.max_quarantined in a row the campaign stops.
#include <doctest/doctest.h>

#include <filesystem>
#include <map>

#include "decide/exit_codes.h"
#include "decide/fallback.h"
#include "engine_fixture.h"
#include "store/read_campaign.h"

using namespace mlsup;
using mlsup::test::EngineFixture;
using slurm::JobState;

namespace {

// Checkpoints step-10 and step-20 in the campaign's checkpoint folder.
struct Broken : EngineFixture {
  explicit Broken(const std::string& policy = "", const std::string& extra = "") : EngineFixture(policy, extra) {
    for (int step : {10, 20}) dir.write(".mlsup/t/checkpoints/step-" + std::to_string(step) + "/model.bin", "weights");
  }
  std::string ckpt(const std::string& name) const { return config.checkpoint.dir + "/" + name; }
  std::string resumed(std::size_t submission) const {
    const auto& env = fake.submitted.at(submission).environment;
    return std::map<std::string, std::string>(env.begin(), env.end()).at("MLSUP_RESUME_FROM");
  }
  // The newest job fails at its start (exit 1, no heartbeat); passes until the next is submitted or the campaign ends.
  std::optional<engine::Outcome> fail_at_start(engine::Campaign& c) {
    const auto before = submits();
    fake.set_state(last_job(), JobState::Failed, 1, "n1");
    for (int i = 0; i < 4 && submits() == before; ++i) {
      if (auto out = pass(c)) return out;
      clock += 6;
    }
    return std::nullopt;
  }
};

}  // namespace

TEST_CASE("fallback: the rule on attempts that resumed from one checkpoint and failed before any step") {
  using decide::Fallback;
  const decide::ResumeOutcome bad{"/c/20", true}, ran{"/c/20", false}, other{"/c/10", true}, fresh{"", true};
  CHECK(decide::fallback({.attempts = {bad}}) == Fallback::None);
  CHECK(decide::fallback({.attempts = {bad, bad}}) == Fallback::Quarantine);
  CHECK(decide::fallback({.attempts = {ran, bad}}) == Fallback::None);    // the one before got past its step
  CHECK(decide::fallback({.attempts = {other, bad}}) == Fallback::None);  // another checkpoint
  CHECK(decide::fallback({.attempts = {fresh, fresh}}) == Fallback::None);  // nothing to fall back from
  CHECK(decide::fallback({.attempts = {bad, bad}, .after = 0}) == Fallback::None);
  CHECK(decide::fallback({.attempts = {bad, bad}, .after = 3}) == Fallback::None);
  CHECK(decide::fallback({.attempts = {bad, bad}, .quarantined_in_a_row = 2}) == Fallback::GiveUp);
  CHECK(decide::may_show_bad_checkpoint(decide::EndClass::Failed));
  CHECK_FALSE(decide::may_show_bad_checkpoint(decide::EndClass::NodeFail));
}

TEST_CASE("fallback: two failures before any step from the newest -> quarantined (moved, not deleted), the next resumes from the one before") {
  Broken f;
  auto c = f.open();
  f.pass(*c);
  CHECK(f.resumed(0) == f.ckpt("step-20"));
  CHECK_FALSE(f.fail_at_start(*c));
  CHECK(f.resumed(1) == f.ckpt("step-20"));
  CHECK_FALSE(f.fail_at_start(*c));  // the second from step-20: quarantined
  REQUIRE(f.submits() == 3);
  CHECK(f.resumed(2) == f.ckpt("step-10"));
  CHECK_FALSE(std::filesystem::exists(f.ckpt("step-20")));
  CHECK(std::filesystem::exists(f.ckpt(".quarantine/step-20/model.bin")));
  CHECK(store::read_journal(f.config).state.quarantined == std::vector<std::string>{f.ckpt("step-20")});
  // The crash-loop count (3 in a row) started afresh at the quarantine: one more failure goes on.
  CHECK_FALSE(f.fail_at_start(*c));
  CHECK(f.submits() == 4);
}

TEST_CASE("fallback: checkpoint.max_quarantined in a row reached -> the campaign stops and says why") {
  Broken f(", crash_loop_restarts: 10", "checkpoint: {max_quarantined: 1}\n");
  auto c = f.open();
  f.pass(*c);
  CHECK_FALSE(f.fail_at_start(*c));
  CHECK_FALSE(f.fail_at_start(*c));  // step-20 quarantined
  CHECK(f.resumed(2) == f.ckpt("step-10"));
  CHECK_FALSE(f.fail_at_start(*c));
  const auto out = f.fail_at_start(*c);  // the second from step-10: one in a row is all that is allowed
  REQUIRE(out.has_value());
  CHECK(out->exit_code == decide::kBudgetSpent);
  CHECK(out->reason.find("checkpoint.max_quarantined") != std::string::npos);
  CHECK(std::filesystem::exists(f.ckpt("step-10")));  // never moved nor deleted
}
