// The Slurm client against the live local cluster (SLURM_CONF), with the backend named by
// MLSUP_SLURM_BACKEND (libslurm or cli). A missing cluster is a failure, never a skip.
#include <doctest/doctest.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>
#include <unistd.h>

#include "../unit/support.h"
#include "slurm/client.h"

using namespace mlsup::slurm;
using namespace std::chrono_literals;

namespace {

std::string backend_name() {
  const char* b = std::getenv("MLSUP_SLURM_BACKEND");
  return b ? b : "libslurm";
}

Client& client() {
  static std::unique_ptr<Client> c = [] {
    REQUIRE_MESSAGE(std::getenv("SLURM_CONF") != nullptr, "SLURM_CONF must name the live test cluster");
    return make_client(backend_name());
  }();
  return *c;
}

// A unique tag for the jobs of one test.
std::string tag(const std::string& what) {
  return "mlsup-live:" + std::to_string(::getpid()) + ":" + backend_name() + ":" + what;
}

JobId submit(const mlsup::test::TempDir& dir, const std::string& body, std::vector<std::string> options,
             const std::string& what) {
  const std::string script = dir.write(what + ".sbatch", "#!/bin/bash\n" + body + "\n");
  options.insert(options.begin(), {"--parsable", "--comment=" + tag(what), "--output=" + dir.path() + "/%j.out"});
  const auto id = client().submit({.options = options, .script_path = script, .working_dir = dir.path()});
  REQUIRE_MESSAGE(id.has_value(), (id ? std::string() : id.error().message));
  return *id;
}

// The job with id, polled until pred holds (or the timeout passes, which fails the test).
Job wait_for(JobId id, const std::function<bool(const Job&)>& pred, std::chrono::seconds timeout = 60s) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  Job last;
  while (std::chrono::steady_clock::now() < deadline) {
    const auto jobs = client().jobs({id});
    REQUIRE_MESSAGE(jobs.has_value(), (jobs ? std::string() : jobs.error().message));
    for (const auto& j : *jobs)
      if (j.job_id == id) last = j;
    if (last.job_id == id && pred(last)) return last;
    std::this_thread::sleep_for(200ms);
  }
  FAIL("job " << id << " did not reach the expected state; last seen " << state_name(last.state));
  return last;
}

bool ended(const Job& j) { return is_final(j.state) && !j.completing; }
bool live_or_queued(const Job& j) { return j.state == JobState::Pending || j.state == JobState::Running; }

}  // namespace

TEST_CASE("nodes: every node of the cluster, idle") {
  const auto nodes = client().nodes();
  REQUIRE(nodes.has_value());
  CHECK(nodes->size() >= 4);
  for (const auto& n : *nodes) CHECK_FALSE(n.name.empty());
}

TEST_CASE("a job is seen RUNNING, then COMPLETED with exit 0, and found by its tag") {
  mlsup::test::TempDir dir;
  // The job runs until the test has seen it running, however slow a poll is.
  const std::string go = dir.path() + "/go";
  const JobId id = submit(dir, "while [ ! -e " + go + " ]; do sleep 0.1; done", {"-N1"}, "ok");
  const Job running = wait_for(id, [](const Job& j) { return j.state == JobState::Running; });
  { std::ofstream touch(go); }
  CHECK_FALSE(running.nodes.empty());
  CHECK(running.start_time >= running.submit_time);
  const auto tagged = client().find_by_tag(tag("ok"));
  REQUIRE(tagged.has_value());
  REQUIRE(tagged->size() == 1);
  CHECK(tagged->front().job_id == id);
  const Job done = wait_for(id, ended);
  CHECK(done.state == JobState::Completed);
  CHECK(done.exit_code == 0);
  CHECK(done.comment == tag("ok"));
  CHECK(done.std_out == dir.path() + "/" + std::to_string(id) + ".out");
  CHECK(done.std_err == done.std_out);  // no separate error file: Slurm names the output file
}

TEST_CASE("a failing job is FAILED with its exit code, a killed one with its signal") {
  mlsup::test::TempDir dir;
  const JobId failed = submit(dir, "exit 3", {"-N1"}, "fail");
  const JobId killed = submit(dir, "kill -9 $$", {"-N1"}, "kill");
  const Job f = wait_for(failed, ended);
  CHECK(f.state == JobState::Failed);
  CHECK(f.exit_code == 3);
  const Job k = wait_for(killed, ended);
  CHECK(k.state == JobState::Failed);
  CHECK(k.exit_signal == SIGKILL);
}

TEST_CASE("array tasks are seen one by one under their array id") {
  mlsup::test::TempDir dir;
  const JobId id = submit(dir, "exit $((SLURM_ARRAY_TASK_ID == 2 ? 5 : 0))", {"-N1", "--array=1-3"}, "array");
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  std::vector<Job> tasks;
  while (std::chrono::steady_clock::now() < deadline) {
    auto jobs = client().jobs({id});
    REQUIRE(jobs.has_value());
    tasks = *jobs;
    if (tasks.size() == 3 && std::all_of(tasks.begin(), tasks.end(), ended)) break;
    std::this_thread::sleep_for(200ms);
  }
  REQUIRE(tasks.size() == 3);
  for (const auto& t : tasks) {
    CAPTURE(t.job_id);
    CHECK(t.array_job_id == id);
    REQUIRE(t.array_task_id.has_value());
    CHECK(t.state == (*t.array_task_id == 2 ? JobState::Failed : JobState::Completed));
  }
}

// The running task of a chain (an array run one task at a time), once Slurm has split it off.
Job running_task(JobId array, std::uint32_t task) {
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (std::chrono::steady_clock::now() < deadline) {
    const auto jobs = client().jobs({array});
    REQUIRE(jobs.has_value());
    for (const auto& j : *jobs)
      if (j.array_task_id == task && j.state == JobState::Running) return j;
    std::this_thread::sleep_for(200ms);
  }
  FAIL("task " << task << " of " << array << " did not run");
  return {};
}

TEST_CASE("a running task of a chain is killed and cancelled by its own job id; the queued tasks stay") {
  mlsup::test::TempDir dir;
  const JobId array = submit(dir, "srun bash -c 'touch " + dir.path() + "/step-$SLURM_ARRAY_TASK_ID; sleep 300'",
                            {"-N1", "--array=1-3%1"}, "chain");
  const Job first = running_task(array, 1);
  CHECK(first.job_id != array);
  wait_for(first.job_id, [&](const Job&) { return std::filesystem::exists(dir.path() + "/step-1"); });  // its step runs
  const auto killed = client().kill_steps(first.job_id);
  REQUIRE_MESSAGE(killed.has_value(), (killed ? std::string() : killed.error().message));
  CHECK(wait_for(first.job_id, ended, 20s).state == JobState::Failed);
  const Job second = running_task(array, 2);
  REQUIRE(client().cancel(second.job_id).has_value());
  CHECK(wait_for(second.job_id, ended, 20s).state == JobState::Cancelled);
  const auto rest = client().jobs({array});
  REQUIRE(rest.has_value());
  CHECK(std::any_of(rest->begin(), rest->end(), [](const Job& j) { return live_or_queued(j); }));
  REQUIRE(client().cancel(array).has_value());
}

TEST_CASE("cancel ends a running job as CANCELLED") {
  mlsup::test::TempDir dir;
  const JobId id = submit(dir, "sleep 300", {"-N1"}, "cancel");
  wait_for(id, [](const Job& j) { return j.state == JobState::Running; });
  REQUIRE(client().cancel(id).has_value());
  CHECK(wait_for(id, ended).state == JobState::Cancelled);
}

TEST_CASE("kill_steps ends tasks that ignore SIGTERM at once, without Slurm's grace") {
  mlsup::test::TempDir dir;
  const JobId id = submit(dir, "srun bash -c 'trap \"\" TERM; touch " + dir.path() + "/started; while :; do sleep 0.1; done'",
                          {"-N2"}, "stubborn");
  wait_for(id, [&](const Job& j) { return j.state == JobState::Running && std::filesystem::exists(dir.path() + "/started"); });
  const auto t0 = std::chrono::steady_clock::now();
  REQUIRE(client().kill_steps(id).has_value());
  const Job done = wait_for(id, ended, 40s);
  const auto took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  MESSAGE("ended " << state_name(done.state) << " " << took << " s after kill_steps");
  CHECK(took < 20.0);  // KillWait is 30 s: a cancel would take that long
  CHECK(done.state == JobState::Failed);
}

TEST_CASE("signal_steps reaches every task of the job's steps on every node, and not the batch shell") {
  mlsup::test::TempDir dir;
  const std::string d = dir.path();
  const JobId id = submit(dir, "trap 'touch " + d + "/batch-got' USR2\nsrun bash -c 'trap \"touch " + d +
                                   "/task-$SLURM_PROCID\" USR2; touch " + d + "/ready-$SLURM_PROCID; while :; do sleep 0.1; done' &\n"
                                   "wait $!; wait $!",
                          {"-N2"}, "steps");
  const auto ready = [&] { return std::filesystem::exists(d + "/ready-0") && std::filesystem::exists(d + "/ready-1"); };
  wait_for(id, [&](const Job& j) { return j.state == JobState::Running && ready(); });
  REQUIRE(client().signal_steps(id, SIGUSR2).has_value());
  const auto both = [&] { return std::filesystem::exists(d + "/task-0") && std::filesystem::exists(d + "/task-1"); };
  for (int i = 0; i < 100 && !both(); ++i) std::this_thread::sleep_for(100ms);
  CHECK(both());
  std::this_thread::sleep_for(500ms);
  CHECK_FALSE(std::filesystem::exists(d + "/batch-got"));
  CHECK(wait_for(id, live_or_queued, 1s).state == JobState::Running);  // the tasks caught it and go on
  REQUIRE(client().cancel(id).has_value());
  wait_for(id, ended, 40s);
}

TEST_CASE("a signal reaches the batch shell") {
  mlsup::test::TempDir dir;
  const std::string mark = dir.path() + "/got-usr1";
  const std::string ready = dir.path() + "/trap-set";  // RUNNING comes before the script starts
  const JobId id = submit(dir, "trap 'touch " + mark + "; exit 0' USR1\ntouch " + ready +
                                   "\nfor i in $(seq 600); do sleep 0.1; done\nexit 9",
                          {"-N1"}, "signal");
  wait_for(id, [&](const Job& j) { return j.state == JobState::Running && std::filesystem::exists(ready); });
  REQUIRE(client().signal(id, SIGUSR1, true).has_value());
  const Job done = wait_for(id, ended);
  CHECK(done.state == JobState::Completed);
  CHECK(std::filesystem::exists(mark));
}

TEST_CASE("excluded nodes of a pending job are updated in place and honoured by the scheduler") {
  const auto nodes = client().nodes();
  REQUIRE(nodes.has_value());
  REQUIRE(nodes->size() >= 4);
  std::vector<std::string> names;
  for (const auto& n : *nodes) names.push_back(n.name);
  const std::string keep = names.back();
  std::string exclude;
  for (std::size_t i = 0; i + 1 < names.size(); ++i) exclude += (i ? "," : "") + names[i];
  mlsup::test::TempDir dir;
  const JobId id = submit(dir, "sleep 1", {"-N1", "--hold"}, "exclude");
  REQUIRE(client().set_excluded(id, exclude).has_value());
  const Job pending = wait_for(id, [](const Job& j) { return j.state == JobState::Pending; });
  CHECK_FALSE(pending.excluded_nodes.empty());
  REQUIRE(client().release(id).has_value());
  const Job done = wait_for(id, ended);
  CHECK(done.state == JobState::Completed);
  CHECK(done.nodes == keep);
}

TEST_CASE("a job Slurm does not know is simply absent; a bad request is rejected, not transient") {
  const auto jobs = client().jobs({4'000'000'000u});
  REQUIRE(jobs.has_value());
  CHECK(jobs->empty());
  mlsup::test::TempDir dir;
  const std::string script = dir.write("x.sbatch", "#!/bin/bash\ntrue\n");
  const auto bad = client().submit({.options = {"--parsable", "--partition=nosuchpartition"}, .script_path = script,
                                    .working_dir = dir.path()});
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().kind == ErrorKind::Rejected);
  CHECK_FALSE(bad.error().transient());
  CHECK(client().cancel(4'000'000'000u).error().kind == ErrorKind::UnknownJob);
}

TEST_CASE("a job larger than the partition is accepted and stays pending with the reason Slurm gives") {
  mlsup::test::TempDir dir;
  const JobId id = submit(dir, "true", {"-N", "50"}, "too-big");
  const Job pending = wait_for(id, [](const Job& j) { return j.state == JobState::Pending && j.reason != "None"; });
  CHECK(pending.reason == "PartitionConfig");
  REQUIRE(client().cancel(id).has_value());
  CHECK(wait_for(id, ended).state == JobState::Cancelled);
}

namespace {

// Accounting's record of job id, polled until it shows an end (slurmctld hands it to slurmdbd soon after).
AccountedJob accounted_end(JobId id) {
  const auto deadline = std::chrono::steady_clock::now() + 90s;
  AccountedJob last;
  while (std::chrono::steady_clock::now() < deadline) {
    const auto a = client().accounted({id});
    REQUIRE_MESSAGE(a.has_value(), (a ? std::string() : a.error().message));
    for (const auto& j : a->jobs)
      if (j.job_id == id) last = j;
    if (last.job_id == id && is_final(last.state)) return last;
    std::this_thread::sleep_for(250ms);
  }
  FAIL("accounting never showed the end of job " << id);
  return last;
}

}  // namespace

TEST_CASE("accounting: a site without it says so at once; with it, a job's end, a person's cancel and the tag") {
  mlsup::test::TempDir dir;
  const JobId failed = submit(dir, "exit 3", {"-N1"}, "acct-fail");
  const JobId cancelled = submit(dir, "sleep 300", {"-N1"}, "acct-cancel");
  wait_for(failed, ended);
  const auto t0 = std::chrono::steady_clock::now();
  const auto first = client().accounted({failed});
  REQUIRE_MESSAGE(first.has_value(), (first ? std::string() : first.error().message));
  if (!first->available) {  // accounting_storage/none
    CHECK(first->jobs.empty());
    CHECK(std::chrono::steady_clock::now() - t0 < 3s);
    REQUIRE(client().cancel(cancelled).has_value());
    return;
  }
  const auto f = accounted_end(failed);
  CHECK(f.state == JobState::Failed);
  CHECK(f.exit_code == 3);
  CHECK_FALSE(f.cancelled_by.has_value());
  wait_for(cancelled, [](const Job& j) { return j.state == JobState::Running; });
  REQUIRE(client().cancel(cancelled).has_value());
  const auto c = accounted_end(cancelled);
  CHECK(c.state == JobState::Cancelled);
  CHECK(c.cancelled_by == static_cast<std::uint32_t>(::getuid()));
  // The comment may reach accounting after the end state: asked until it shows.
  std::vector<AccountedJob> found;
  for (int i = 0; i < 60 && found.empty(); ++i, std::this_thread::sleep_for(500ms)) {
    const auto by_tag = client().accounted_by_tag(tag("acct-cancel"), std::time(nullptr) - 600);
    REQUIRE(by_tag.has_value());
    found = by_tag->jobs;
  }
  REQUIRE(found.size() == 1);
  CHECK(found[0].job_id == cancelled);
}
