#pragma once
// A wake-up when a file lands in a watched folder (inotify, one descriptor for every folder), on the run
// loop's io_context. A hint only: a folder whose writes come from other hosts (NFS, Lustre) may never
// tell, so the caller's own pace must still find everything; without inotify nothing is ever told.
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>  // Boost 1.74's asio needs std::exchange declared before it under C++23

#include <boost/asio/io_context.hpp>

namespace mlsup::edges {

class DirWatch {
 public:
  // on_landed(key, name): the file name was created in, or moved into, the folder watched for key (a
  // hidden name, a writer's temporary file, is not told); name "" when the system lost events.
  using Landed = std::function<void(const std::string& key, const std::string& name)>;
  DirWatch(boost::asio::io_context& io, Landed on_landed);
  ~DirWatch();
  DirWatch(const DirWatch&) = delete;
  DirWatch& operator=(const DirWatch&) = delete;

  // Watches folder (created when missing) for key, in place of key's last folder; false when it cannot.
  bool watch(const std::string& key, const std::string& folder);
  // Stops watching key's folder (nothing when none).
  void forget(const std::string& key);
  // Stops telling (the run loop's io_context then has nothing left of it).
  void close();
  // Folders watched now.
  std::size_t size() const { return keys_.size(); }
  // False when the system gives no inotify (every watch() is then false).
  bool available() const;

  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;
  std::map<std::string, int> keys_;  // key -> watch descriptor
};

}  // namespace mlsup::edges
