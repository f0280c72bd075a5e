#pragma once
// Hands what worker threads finish to the thread that owns the results, in batches: put() queues a
// handler, flush() asks the owner's queue to run every handler queued unless such a run is pending,
// so a burst of results costs the owner one wake-up.
#include <functional>
#include <mutex>
#include <vector>

namespace mlsup::edges {

class Mailbox {
 public:
  using Post = std::function<void(std::function<void()>)>;
  // post: queues a call on the owner's thread (an event loop's post).
  explicit Mailbox(Post post) : post_(std::move(post)) {}
  Mailbox(const Mailbox&) = delete;
  Mailbox& operator=(const Mailbox&) = delete;

  // Queues handler to run on the owner's thread at the next flush, in the order put; thread-safe.
  void put(std::function<void()> handler);
  // Sends what is queued to the owner's thread; thread-safe.
  void flush();

 private:
  void deliver();  // on the owner's thread: runs every handler queued

  Post post_;
  std::mutex mutex_;
  std::vector<std::function<void()>> queued_;
  bool pending_ = false;  // a deliver() is queued and has not taken the handlers yet
};

}  // namespace mlsup::edges
