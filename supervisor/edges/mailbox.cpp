#include "edges/mailbox.h"

#include <utility>

namespace mlsup::edges {

void Mailbox::put(std::function<void()> handler) {
  std::lock_guard lock(mutex_);
  queued_.push_back(std::move(handler));
}

void Mailbox::flush() {
  {
    std::lock_guard lock(mutex_);
    if (queued_.empty() || std::exchange(pending_, true)) return;  // nothing, or the deliver() queued takes it
  }
  post_([this] { deliver(); });
}

void Mailbox::deliver() {
  std::vector<std::function<void()>> now;
  {
    std::lock_guard lock(mutex_);
    now.swap(queued_);
    pending_ = false;
  }
  for (auto& h : now) h();
}

}  // namespace mlsup::edges
