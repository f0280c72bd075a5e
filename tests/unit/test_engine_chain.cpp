#include <doctest/doctest.h>

#include "engine_fixture.h"
#include "render/chain.h"

using namespace mlsup;
using mlsup::test::EngineFixture;
using mlsup::test::slurp;
using slurm::JobState;

TEST_CASE("chain mode: a task that runs long past its first lines without a claim is watched as the attempt") {
  EngineFixture f("", "slurm: {array: \"1-4%1\", nodes: 2, chain_start_wait: 10s}\n");
  auto c = f.open();
  f.pass(*c);
  const slurm::JobId array = f.last_job();
  auto& rest = f.fake.table[array];
  rest.array_job_id = array;
  rest.array_task_pending = "2-4%1";
  rest.state = JobState::Pending;
  auto& task = f.fake.table[200];  // task 1 runs, and its claim never appears
  task = {.job_id = 200, .array_job_id = array, .array_task_id = 1u, .state = JobState::Running, .nodes = "n[1-2]"};
  task.start_time = static_cast<std::time_t>(f.clock);
  f.pass(*c);
  f.clock += 10 + 2 * render::kStrandedClaimSeconds - 1;  // its first lines may still be claiming
  f.pass(*c);
  CHECK(f.events_of("claimed").empty());
  f.clock += 2;
  f.pass(*c);
  CHECK(f.told("chain-task-unclaimed"));
  const std::string journal = slurp(f.config.state_dir + "/journal.jsonl");
  CHECK(journal.find("\"type\":\"claimed\"") != std::string::npos);
  CHECK(journal.find("\"how\":\"unclaimed\"") != std::string::npos);
  f.pass(*c);  // watched from now on: no heartbeat of attempt 1 within the startup timeout is a hang
  f.clock += 61;
  f.pass(*c);
  CHECK(f.calls("cancel 200") == 1);
  CHECK(f.calls("cancel " + std::to_string(array)) == 0);
}
