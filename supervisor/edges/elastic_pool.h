#pragma once
// Runs tasks on a few threads, and on one more whenever a task has waited 200 ms with every thread
// busy: a task that blocks for minutes delays no other by more than that, and bursts of quick tasks
// do not multiply threads. A thread beyond the first `core` ends when nothing is queued and another
// thread already waits (so one stays ready while the core is blocked). A batch posted at once wakes
// no more threads than it has tasks. on_drained, when given, runs on a worker whenever the queue runs
// empty: as the last queued task starts, and as a task ends with nothing queued.
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace mlsup::edges {

class ElasticPool {
 public:
  explicit ElasticPool(std::size_t core = 2, std::function<void()> on_drained = {});
  ~ElasticPool();  // runs what is queued, then joins every thread
  ElasticPool(const ElasticPool&) = delete;
  ElasticPool& operator=(const ElasticPool&) = delete;

  void post(std::function<void()> task);
  // Queues every task at once (one lock, one wake-up per thread needed).
  void post_all(std::vector<std::function<void()>> tasks);
  // Threads running tasks or waiting for them now.
  std::size_t threads();

 private:
  using Clock = std::chrono::steady_clock;
  struct Queued {
    std::function<void()> task;
    Clock::time_point at;
  };
  void work();
  void watch();   // adds a thread when the oldest task waits too long
  void spawn();   // with mutex_ held
  void reap();    // with mutex_ held: joins the threads that ended
  void wake(std::size_t tasks, bool was_empty);  // with mutex_ held: threads for tasks just queued

  std::size_t core_;
  std::function<void()> on_drained_;
  std::mutex mutex_;
  std::condition_variable wake_, watch_;
  std::deque<Queued> queue_;
  std::vector<std::thread> threads_;
  std::vector<std::thread::id> ended_;  // threads that left work(), to be joined
  std::size_t idle_ = 0, live_ = 0;
  bool stopping_ = false;
  std::thread watcher_;
};

}  // namespace mlsup::edges
