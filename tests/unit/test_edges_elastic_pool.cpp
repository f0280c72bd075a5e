#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <vector>

#include "edges/elastic_pool.h"

using namespace mlsup::edges;
using namespace std::chrono_literals;

namespace {

// Waits up to 5 s for done() to hold.
template <typename Fn>
bool eventually(Fn done) {
  for (int i = 0; i < 500 && !done(); ++i) std::this_thread::sleep_for(10ms);
  return done();
}

}  // namespace

TEST_CASE("elastic pool: a task that blocks delays no other; a few threads serve many quick tasks") {
  ElasticPool pool(2);
  std::promise<void> release;
  auto blocked = release.get_future().share();
  for (int i = 0; i < 2; ++i) pool.post([blocked] { blocked.wait(); });  // both core threads blocked
  thread_local int served = 0;  // tasks run by the thread that runs this one
  std::promise<int> ran;
  pool.post([&ran] { ran.set_value(++served); });
  auto first = ran.get_future();
  CHECK(first.wait_for(5s) == std::future_status::ready);  // after 200 ms, on a third thread
  CHECK(first.get() == 1);
  CHECK(pool.threads() == 3);
  std::promise<int> again;
  pool.post([&again] { again.set_value(++served); });
  CHECK(again.get_future().get() == 2);  // the third thread waited for it: no 200 ms again, no fourth thread
  release.set_value();
  CHECK(eventually([&] { return pool.threads() == 2; }));  // the core is free: the thread added ends
  std::atomic<int> done = 0;
  for (int round = 0; round < 20; ++round) {
    for (int i = 0; i < 50; ++i) pool.post([&done] { ++done; });
    while (done < (round + 1) * 50) std::this_thread::sleep_for(1ms);
  }
  CHECK(done == 1000);
  CHECK(pool.threads() <= 4);  // bursts of quick tasks are served by the threads there are
}

TEST_CASE("elastic pool: a batch posted at once runs every task, a blocking one delaying none of the others") {
  ElasticPool pool(2);
  std::promise<void> release;
  auto blocked = release.get_future().share();
  std::atomic<int> done = 0;
  std::vector<std::function<void()>> batch;
  for (int i = 0; i < 2; ++i) batch.push_back([blocked] { blocked.wait(); });  // first in the batch, both core threads
  for (int i = 0; i < 40; ++i) batch.push_back([&done] { ++done; });
  const auto posted = std::chrono::steady_clock::now();
  pool.post_all(std::move(batch));
  CHECK(eventually([&] { return done == 40; }));
  CHECK(std::chrono::steady_clock::now() - posted < 3s);  // 200 ms, then a third thread (slack for a busy machine)
  CHECK(pool.threads() == 3);
  release.set_value();
  CHECK(eventually([&] { return pool.threads() == 2; }));
  pool.post_all({});  // nothing to do
  CHECK(pool.threads() == 2);
}

TEST_CASE("elastic pool: on_drained follows every task's end, also while another task blocks") {
  std::mutex m;
  std::vector<int> seen;  // the tasks done at each on_drained call
  std::atomic<int> done = 0;
  ElasticPool pool(1, [&] {
    std::lock_guard lock(m);
    seen.push_back(done);
  });
  const auto drained_after = [&](int n) {
    std::lock_guard lock(m);
    return !seen.empty() && seen.back() >= n;
  };

  SUBCASE("a burst: once the last task is done") {
    std::vector<std::function<void()>> batch;
    for (int i = 0; i < 20; ++i) batch.push_back([&done] { ++done; });
    pool.post_all(std::move(batch));
    CHECK(eventually([&] { return drained_after(20); }));
  }
  SUBCASE("the last queued task blocks: what ran before it is drained as it starts") {
    std::promise<void> release;
    auto blocked = release.get_future().share();
    pool.post_all({[&done] { ++done; }, [blocked] { blocked.wait(); }});
    CHECK(eventually([&] { return drained_after(1); }));
    release.set_value();
  }
}
