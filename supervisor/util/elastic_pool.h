#pragma once
// Runs tasks on a few threads, and on one more whenever a task has waited 200 ms with every thread
// busy: a task that blocks for minutes delays no other by more than that, and bursts of quick tasks
// do not multiply threads. Threads beyond the first `core` end after a minute idle.
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace mlsup::util {

class ElasticPool {
 public:
  explicit ElasticPool(std::size_t core = 2);
  ~ElasticPool();  // runs what is queued, then joins every thread
  ElasticPool(const ElasticPool&) = delete;
  ElasticPool& operator=(const ElasticPool&) = delete;

  void post(std::function<void()> task);
  // Threads running tasks or waiting for them now.
  std::size_t threads();

 private:
  using Clock = std::chrono::steady_clock;
  struct Queued {
    std::function<void()> task;
    Clock::time_point at;
  };
  void work();
  void watch();  // adds a thread when the oldest task waits too long
  void spawn();  // with mutex_ held

  std::size_t core_;
  std::mutex mutex_;
  std::condition_variable wake_, stop_;
  std::deque<Queued> queue_;
  std::vector<std::thread> threads_;
  std::size_t idle_ = 0, live_ = 0;
  bool stopping_ = false;
  std::thread watcher_;
};

}  // namespace mlsup::util
