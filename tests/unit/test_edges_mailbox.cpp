#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <array>
#include <utility>  // Boost 1.74's asio needs std::exchange declared before it under C++23

#include <boost/asio.hpp>

#include "edges/elastic_pool.h"
#include "edges/mailbox.h"

using namespace mlsup::edges;
using namespace std::chrono_literals;

TEST_CASE("mailbox: handlers put by workers reach the owner together, in order, one post per flush") {
  std::vector<std::function<void()>> posted;  // the owner's queue
  Mailbox box([&](std::function<void()> f) { posted.push_back(std::move(f)); });
  std::vector<int> ran;
  box.flush();
  CHECK(posted.empty());  // nothing to send
  for (int i = 0; i < 5; ++i) box.put([&ran, i] { ran.push_back(i); });
  CHECK(posted.empty());  // put alone sends nothing
  box.flush();
  box.flush();
  REQUIRE(posted.size() == 1);  // one delivery is pending: the second flush adds none
  box.put([&ran] { ran.push_back(5); });
  box.flush();
  CHECK(posted.size() == 1);  // taken by the delivery pending
  posted[0]();
  CHECK(ran == std::vector<int>{0, 1, 2, 3, 4, 5});
  box.put([&ran] { ran.push_back(6); });
  box.flush();
  REQUIRE(posted.size() == 2);  // after a delivery, the next flush sends again
  posted[1]();
  CHECK(ran.back() == 6);
}

// The shape of `mlsup run`: an event loop starts rounds on a timer; each round posts the passes of the
// campaigns due (none of whose pass is under way) to the pool at once; results come back through a
// mailbox flushed when the pool's queue runs empty.
TEST_CASE("a round's passes posted together: each campaign keeps its interval while others' passes block") {
  namespace asio = boost::asio;
  asio::io_context io;
  Mailbox results([&io](std::function<void()> f) { asio::post(io, std::move(f)); });
  ElasticPool pool(2, [&results] { results.flush(); });
  constexpr std::size_t kCampaigns = 12;
  constexpr auto kInterval = 100ms;
  std::array<int, kCampaigns> passes{};                  // per campaign, counted on the loop's thread
  std::array<bool, kCampaigns> in_flight{};
  std::array<std::atomic<int>, kCampaigns> running{};   // its passes under way now
  std::atomic<int> overlapping = 0;                     // passes of one campaign under way together (never)
  std::promise<void> release;
  auto blocked = release.get_future().share();
  asio::steady_timer timer(io);
  const auto began = std::chrono::steady_clock::now();
  std::function<void()> round = [&] {
    std::vector<std::function<void()>> batch;
    for (std::size_t c = 0; c < kCampaigns; ++c) {
      if (in_flight[c]) continue;
      in_flight[c] = true;
      auto work = asio::make_work_guard(io);
      batch.push_back([&, c, work] {
        if (++running[c] > 1) ++overlapping;
        if (c < 2 && passes[c] == 0) blocked.wait();  // two campaigns' first passes block (both core threads)
        --running[c];
        results.put([&, c, work] {
          ++passes[c];
          in_flight[c] = false;
        });
      });
    }
    pool.post_all(std::move(batch));
    if (std::chrono::steady_clock::now() - began > 2s) return release.set_value();
    timer.expires_after(kInterval);
    timer.async_wait([&](const boost::system::error_code& ec) {
      if (!ec) round();
    });
  };
  asio::post(io, round);
  io.run();
  CHECK(overlapping == 0);
  for (std::size_t c = 2; c < kCampaigns; ++c) CHECK(passes[c] >= 8);  // of about 20 rounds, however busy the machine
  CHECK(passes[0] >= 1);
  CHECK(passes[1] >= 1);
}
