// Debug on retry through the engine: the attempt after a failure nothing explains is submitted with
// debug_on_retry.env (and MLSUP_DEBUG_ENV naming it), journaled, told and shown by status; it carries
// on while attempts make no progress, is dropped after one that did, and a spare-node or chain
// attempt's values undo an earlier attempt's debugging.
#include <doctest/doctest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "capture.h"
#include "cli/campaign_verbs.h"
#include "cli/exit_codes.h"
#include "engine_fixture.h"
#include "reconcile/reconcile.h"
#include "reconcile_rows.h"
#include "render/chain.h"
#include "render/contract.h"

namespace mlsup::test {
namespace {

using Env = std::vector<std::pair<std::string, std::string>>;

// The value of name in env; nullopt when it is not there.
std::optional<std::string> value_of(const Env& env, const std::string& name) {
  for (const auto& [n, v] : env)
    if (n == name) return v;
  return std::nullopt;
}

// The fixture's campaign whose first job failed with nothing but Slurm's word for it.
EngineFixture::Opened failed_once(EngineFixture& f, const std::string& output) {
  auto c = f.open();
  f.pass(*c);
  const auto id = f.last_job();
  f.fake.table[id].std_out = f.dir.write("job.out", output);
  f.fake.set_state(id, slurm::JobState::Failed, 1, "n1");
  f.pass(*c);
  f.clock += 6;  // the backoff
  f.pass(*c);
  return c;
}

// What sh prints of the listed variables after sourcing each text in turn.
std::string sourced(const std::vector<std::string>& texts, const std::string& names) {
  TempDir dir;
  std::string script;
  for (std::size_t i = 0; i < texts.size(); ++i) script += ". " + dir.write("v" + std::to_string(i), texts[i]) + "\n";
  script += "echo \"" + names + "\"\n";
  const std::string path = dir.write("s.sh", script);
  FILE* p = popen(("sh " + path).c_str(), "r");
  std::string out;
  char buf[256];
  while (p && fgets(buf, sizeof buf, p)) out += buf;
  if (p) pclose(p);
  return out;
}

}  // namespace

TEST_CASE("debug on retry: the attempt after a failure nothing explains gets the debug environment, told and shown") {
  EngineFixture f;
  auto c = failed_once(f, "srun: error: n1: task 0: Exited with exit code 1\n");
  REQUIRE(f.submits() == 2);
  const auto& first = f.fake.submitted[0].environment;
  const auto& second = f.fake.submitted[1].environment;
  CHECK(value_of(first, "MLSUP_DEBUG_ENV") == "");
  CHECK_FALSE(value_of(first, "NCCL_DEBUG"));
  CHECK(value_of(second, "NCCL_DEBUG") == "INFO");
  CHECK(value_of(second, "TORCH_DISTRIBUTED_DEBUG") == "DETAIL");
  CHECK(value_of(second, "TORCH_NCCL_DUMP_ON_TIMEOUT") == "1");
  CHECK(value_of(second, "TORCH_NCCL_DEBUG_INFO_TEMP_FILE") == f.config.state_dir + "/attempts/2/nccl_trace_rank_");
  const auto names = value_of(second, "MLSUP_DEBUG_ENV").value_or("");
  CHECK(names.find("NCCL_DEBUG") != std::string::npos);
  CHECK(names.find("TORCH_NCCL_TRACE_BUFFER_SIZE") != std::string::npos);
  const auto submitted = f.events_of("submitted");
  REQUIRE(submitted.size() == 2);
  CHECK_FALSE(submitted[0].contains("debug"));
  CHECK(submitted[1].value("debug", "").find("attempt 1 ended as failed and no evidence rule explains it") != std::string::npos);
  const auto printed = capture([&] { return cli::status_verb(f.config.source_file, true); });
  REQUIRE(printed.code == cli::kOk);
  const auto status = nlohmann::json::parse(printed.out);
  REQUIRE(status.contains("debug"));
  CHECK(status["debug"]["env"]["NCCL_DEBUG"] == "INFO");
  CHECK(status["history"][1]["debug"].is_string());
  CHECK(status["history"][0]["debug"].is_null());
  const auto text = capture([&] { return cli::status_verb(f.config.source_file, false); }).out;
  CHECK(text.find("debug: the attempt runs with NCCL_DEBUG ") != std::string::npos);
}

TEST_CASE("debug on retry: not after a failure an evidence rule explains, nor when disabled") {
  SUBCASE("a Python traceback explains it") {
    EngineFixture f;
    auto c = failed_once(f, "Traceback (most recent call last):\n  File \"train.py\", line 3\nValueError: bad\n");
    REQUIRE(f.submits() == 2);
    CHECK(value_of(f.fake.submitted[1].environment, "MLSUP_DEBUG_ENV") == "");
    CHECK_FALSE(value_of(f.fake.submitted[1].environment, "NCCL_DEBUG"));
  }
  SUBCASE("debug_on_retry.enabled: false") {
    EngineFixture f("", "debug_on_retry: {enabled: false}\n");
    auto c = failed_once(f, "srun: error: n1: task 0: Exited with exit code 1\n");
    REQUIRE(f.submits() == 2);
    CHECK_FALSE(value_of(f.fake.submitted[1].environment, "NCCL_DEBUG"));
  }
  SUBCASE("a config's own env replaces the list") {
    EngineFixture f("", "debug_on_retry: {env: {NCCL_DEBUG: TRACE, NCCL_DEBUG_SUBSYS: ALL}}\n");
    auto c = failed_once(f, "srun: error: n1: task 0: Exited with exit code 1\n");
    REQUIRE(f.submits() == 2);
    const auto& env = f.fake.submitted[1].environment;
    CHECK(value_of(env, "NCCL_DEBUG") == "TRACE");
    CHECK(value_of(env, "NCCL_DEBUG_SUBSYS") == "ALL");
    CHECK_FALSE(value_of(env, "TORCH_DISTRIBUTED_DEBUG"));
    CHECK(value_of(env, "MLSUP_DEBUG_ENV") == "NCCL_DEBUG NCCL_DEBUG_SUBSYS");
  }
}

TEST_CASE("debug on retry: the next submission carries it on without progress and drops it after progress") {
  EngineFixture f;
  auto failed = [](int number, bool debugged, long long resume_step, long long end_step, bool explained) {
    auto a = rows::attempt(true);
    a.number = number;
    a.end_class = decide::EndClass::Failed;
    a.debug = debugged ? "attempt 1 ended as failed and no evidence rule explains it" : "";
    a.resume_step = resume_step;
    a.end_step = end_step;
    a.progressed = end_step > resume_step;
    a.explained = explained;
    return a;
  };
  const auto next_debug = [&](const engine::AttemptState& last) {
    auto s = rows::campaign({last}, true);
    const auto sub = engine::next_submission(s, rows::world(), f.config);
    REQUIRE(sub);
    return sub->debug;
  };
  CHECK(next_debug(failed(1, false, 0, 0, false)).find("attempt 1 ended as failed") != std::string::npos);
  CHECK(next_debug(failed(2, true, 100, 100, true)).find("attempt 2 ran with it and made no progress") != std::string::npos);
  CHECK(next_debug(failed(2, true, 100, 180, true)).empty());
  CHECK(next_debug(failed(2, false, 100, 180, true)).empty());
}

TEST_CASE("debug on retry: an attempt's values, sourced after a debugging one's in the same shell, undo its variables") {
  EngineFixture f;
  render::Attempt debugging{.number = 2, .debug = true};
  render::Attempt plain{.number = 3};
  const auto on = render::chain_values(f.config, debugging);
  const auto off = render::chain_values(f.config, plain);
  CHECK(on.find("export NCCL_DEBUG=") != std::string::npos);
  CHECK(sourced({on}, "${NCCL_DEBUG-unset}:${MLSUP_DEBUG_ENV}") .find("INFO:") == 0);
  CHECK(sourced({on, off}, "${NCCL_DEBUG-unset}:${TORCH_DISTRIBUTED_DEBUG-unset}:${MLSUP_DEBUG_ENV}") == "unset:unset:\n");
  CHECK(sourced({off, on, on}, "${NCCL_DEBUG-unset}").find("INFO") == 0);
}

}  // namespace mlsup::test
