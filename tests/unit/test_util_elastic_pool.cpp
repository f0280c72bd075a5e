#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <future>

#include "util/elastic_pool.h"

using namespace mlsup::util;
using namespace std::chrono_literals;

TEST_CASE("elastic pool: a task that blocks delays no other; a few threads serve many quick tasks") {
  ElasticPool pool(2);
  std::promise<void> release;
  auto blocked = release.get_future().share();
  for (int i = 0; i < 2; ++i) pool.post([blocked] { blocked.wait(); });  // both core threads blocked
  std::promise<void> ran;
  pool.post([&ran] { ran.set_value(); });
  CHECK(ran.get_future().wait_for(5s) == std::future_status::ready);  // after 200 ms, on a third thread
  CHECK(pool.threads() == 3);
  release.set_value();
  std::atomic<int> done = 0;
  for (int round = 0; round < 20; ++round) {
    for (int i = 0; i < 50; ++i) pool.post([&done] { ++done; });
    while (done < (round + 1) * 50) std::this_thread::sleep_for(1ms);
  }
  CHECK(done == 1000);
  CHECK(pool.threads() <= 4);  // bursts of quick tasks are served by the threads there are
}
