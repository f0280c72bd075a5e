#include "edges/elastic_pool.h"

#include <algorithm>

namespace mlsup::edges {
namespace {

constexpr auto kLongestWait = std::chrono::milliseconds(200);  // a queued task waits no longer for a thread

}  // namespace

ElasticPool::ElasticPool(std::size_t core, std::function<void()> on_drained)
    : core_(core == 0 ? 1 : core), on_drained_(std::move(on_drained)) {
  watcher_ = std::thread([this] { watch(); });
}

ElasticPool::~ElasticPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  watch_.notify_all();
  watcher_.join();
  for (auto& t : threads_) t.join();
}

void ElasticPool::spawn() {
  reap();
  ++live_;
  threads_.emplace_back([this] { work(); });
}

void ElasticPool::reap() {
  for (const auto id : ended_) {
    const auto it = std::find_if(threads_.begin(), threads_.end(), [id](const std::thread& t) { return t.get_id() == id; });
    if (it == threads_.end()) continue;
    it->join();  // it has left work() and holds no lock: its exit is near
    threads_.erase(it);
  }
  ended_.clear();
}

void ElasticPool::wake(std::size_t tasks, bool was_empty) {
  for (std::size_t woken = 0; woken < tasks && woken < idle_; ++woken) wake_.notify_one();
  for (std::size_t n = idle_; n < tasks && live_ < core_; ++n) spawn();
  if (was_empty) watch_.notify_one();  // the watcher sleeps while nothing is queued
}

void ElasticPool::post(std::function<void()> task) {
  std::lock_guard lock(mutex_);
  const bool was_empty = queue_.empty();
  queue_.push_back({std::move(task), Clock::now()});
  wake(1, was_empty);
}

void ElasticPool::post_all(std::vector<std::function<void()>> tasks) {
  if (tasks.empty()) return;
  std::lock_guard lock(mutex_);
  const bool was_empty = queue_.empty();
  const auto now = Clock::now();
  for (auto& t : tasks) queue_.push_back({std::move(t), now});
  wake(tasks.size(), was_empty);
}

std::size_t ElasticPool::threads() {
  std::lock_guard lock(mutex_);
  return live_;
}

void ElasticPool::watch() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    if (queue_.empty()) {
      watch_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      continue;
    }
    const auto due = queue_.front().at + kLongestWait;
    if (Clock::now() < due) {
      watch_.wait_until(lock, due);
      continue;
    }
    if (idle_ == 0) spawn();
    watch_.wait_for(lock, kLongestWait / 2);  // the new thread's turn to take the task
  }
}

void ElasticPool::work() {
  std::unique_lock lock(mutex_);
  for (;;) {
    if (queue_.empty() && !stopping_ && live_ > core_ && idle_ > 0) break;  // beyond the core, and not the one waiting
    ++idle_;
    wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    --idle_;
    if (queue_.empty()) break;  // stopping, and nothing left
    auto task = std::move(queue_.front().task);
    queue_.pop_front();
    const bool last = queue_.empty();
    lock.unlock();
    if (last && on_drained_) on_drained_();
    task();
    task = nullptr;  // what it captured goes before the lock is taken again
    lock.lock();
    if (queue_.empty() && on_drained_) {
      lock.unlock();
      on_drained_();
      lock.lock();
    }
  }
  --live_;
  ended_.push_back(std::this_thread::get_id());
}

}  // namespace mlsup::edges
