#include "util/elastic_pool.h"

namespace mlsup::util {
namespace {

constexpr auto kLongestWait = std::chrono::milliseconds(200);  // a queued task waits no longer for a thread
constexpr auto kIdleEnd = std::chrono::minutes(1);             // an extra thread idle this long ends

}  // namespace

ElasticPool::ElasticPool(std::size_t core) : core_(core == 0 ? 1 : core) { watcher_ = std::thread([this] { watch(); }); }

ElasticPool::~ElasticPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  stop_.notify_all();
  watcher_.join();
  for (auto& t : threads_) t.join();
}

void ElasticPool::spawn() {
  ++live_;
  threads_.emplace_back([this] { work(); });
}

void ElasticPool::post(std::function<void()> task) {
  std::lock_guard lock(mutex_);
  queue_.push_back({std::move(task), Clock::now()});
  if (idle_ > 0) wake_.notify_one();
  else if (live_ < core_) spawn();
}

std::size_t ElasticPool::threads() {
  std::lock_guard lock(mutex_);
  return live_;
}

void ElasticPool::watch() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    stop_.wait_for(lock, kLongestWait / 2);
    if (!queue_.empty() && idle_ == 0 && Clock::now() - queue_.front().at >= kLongestWait) spawn();
  }
}

void ElasticPool::work() {
  std::unique_lock lock(mutex_);
  for (;;) {
    ++idle_;
    const bool woke = wake_.wait_for(lock, kIdleEnd, [this] { return stopping_ || !queue_.empty(); });
    --idle_;
    if (queue_.empty() && (stopping_ || (!woke && live_ > core_))) break;
    if (queue_.empty()) continue;
    auto task = std::move(queue_.front().task);
    queue_.pop_front();
    lock.unlock();
    task();
    lock.lock();
  }
  --live_;  // its std::thread stays in threads_ until the pool ends (joined then)
}

}  // namespace mlsup::util
