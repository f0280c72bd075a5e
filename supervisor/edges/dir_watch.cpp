#include "edges/dir_watch.h"

#include <sys/inotify.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <filesystem>
#include <set>

#include <boost/asio/posix/stream_descriptor.hpp>

namespace mlsup::edges {

namespace asio = boost::asio;

struct DirWatch::Impl : std::enable_shared_from_this<DirWatch::Impl> {
  Impl(asio::io_context& io, Landed landed) : stream(io), on_landed(std::move(landed)) {
    const int fd = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (fd >= 0) stream.assign(fd);
  }

  void read() {
    if (!stream.is_open()) return;
    stream.async_read_some(asio::buffer(buffer), [self = shared_from_this()](const boost::system::error_code& ec, std::size_t n) {
      if (ec) return;  // closed (operation_aborted) or broken: the caller's pace finds everything anyway
      self->tell(n);
      self->read();
    });
  }

  // The keys and names of the events in the first n bytes of buffer, each told once.
  void tell(std::size_t n) {
    std::set<std::pair<std::string, std::string>> landed;
    for (std::size_t at = 0; at + sizeof(inotify_event) <= n;) {
      inotify_event e{};
      std::memcpy(&e, buffer.data() + at, sizeof e);
      const char* name_at = buffer.data() + at + sizeof(inotify_event);
      at += sizeof(inotify_event) + e.len;
      if (at > n) break;  // the kernel gives whole events: not met
      if (e.mask & IN_Q_OVERFLOW) {
        for (const auto& [wd, keys] : watched)
          for (const auto& key : keys) landed.insert({key, ""});
        continue;
      }
      const auto it = watched.find(e.wd);
      if (it == watched.end()) continue;
      if (e.mask & IN_IGNORED) {  // the folder is gone: watched again only by a new watch()
        watched.erase(it);
        continue;
      }
      const std::string name(name_at, ::strnlen(name_at, e.len));  // NUL-padded to e.len
      if (name.starts_with('.')) continue;
      for (const auto& key : it->second) landed.insert({key, name});
    }
    for (const auto& [key, name] : landed) on_landed(key, name);
  }

  asio::posix::stream_descriptor stream;
  Landed on_landed;
  std::map<int, std::set<std::string>> watched;  // watch descriptor -> keys (one folder may serve several)
  alignas(inotify_event) std::array<char, 16 * 1024> buffer{};
};

DirWatch::DirWatch(asio::io_context& io, Landed on_landed)
    : impl_(std::make_shared<Impl>(io, std::move(on_landed))) {
  impl_->read();
}

DirWatch::~DirWatch() { close(); }

void DirWatch::close() {
  boost::system::error_code ignored;
  impl_->stream.close(ignored);
  impl_->watched.clear();
  keys_.clear();
}

bool DirWatch::available() const { return impl_->stream.is_open(); }

bool DirWatch::watch(const std::string& key, const std::string& folder) {
  forget(key);
  if (!available()) return false;
  std::error_code ignored;
  std::filesystem::create_directories(folder, ignored);
  const int wd = ::inotify_add_watch(impl_->stream.native_handle(), folder.c_str(), IN_CREATE | IN_MOVED_TO | IN_ONLYDIR);
  if (wd < 0) return false;
  impl_->watched[wd].insert(key);
  keys_[key] = wd;
  return true;
}

void DirWatch::forget(const std::string& key) {
  const auto it = keys_.find(key);
  if (it == keys_.end()) return;
  const int wd = it->second;
  keys_.erase(it);
  const auto w = impl_->watched.find(wd);
  if (w == impl_->watched.end()) return;
  w->second.erase(key);
  if (!w->second.empty()) return;
  impl_->watched.erase(w);
  ::inotify_rm_watch(impl_->stream.native_handle(), wd);
}

}  // namespace mlsup::edges
