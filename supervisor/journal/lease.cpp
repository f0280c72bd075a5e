#include "journal/lease.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fcntl.h>
#include <pwd.h>
#include <random>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "journal/atomic_file.h"
#include "util/json.h"
#include "util/strings.h"

namespace mlsup::journal {
namespace {

using nlohmann::json;

constexpr std::time_t kStaleLockSeconds = 30;
constexpr auto kLockWait = std::chrono::seconds(1);
constexpr auto kLockRetry = std::chrono::milliseconds(5);

double seconds_of(const timespec& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9; }

std::string random_token() {
  std::random_device random;
  char text[33];
  std::snprintf(text, sizeof text, "%08x%08x%08x%08x", random(), random(), random(), random());
  return text;
}

}  // namespace

std::optional<double> file_server_time(const std::string& lease_path) {
  const std::string path = lease_path + ".clock";
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return std::nullopt;
  struct stat st {};
  const bool ok = ::futimens(fd, nullptr) == 0 && ::fstat(fd, &st) == 0;  // "now" as the server sets it
  ::close(fd);
  if (!ok) return std::nullopt;
  return seconds_of(st.st_mtim);
}

namespace {

util::Error lease_error(const std::string& path, std::string message, util::ErrorKind kind = util::ErrorKind::Other) {
  return util::Error{.kind = kind, .file = path, .message = std::move(message)};
}

// The lock's holder token as written, or "" when it cannot be read.
std::string token_in(const std::string& path) {
  const auto text = read_file_if_exists(path);
  return text && *text ? **text : "";
}

// Puts a lock taken away by mistake back, unless a new one was made meanwhile; removes the moved name.
void put_back(const std::string& moved, const std::string& path) {
  if (::link(moved.c_str(), path.c_str()) != 0 && errno != EEXIST) return;  // keep it aside: never lose a live lock
  ::unlink(moved.c_str());
}

// Removes the lock at path when its last change is older than kStaleLockSeconds by the file server's
// clock; true when the caller should try to create it again at once. The break is atomic: the lock is
// renamed to a name of this breaker's own, and only a lock that is still the stale one is removed.
bool break_if_stale(const std::string& path, const std::string& lease_path) {
  struct stat seen {};
  if (::stat(path.c_str(), &seen) != 0) return errno == ENOENT;
  const auto server = file_server_time(lease_path);
  const double now = server ? *server : static_cast<double>(std::time(nullptr));
  if (now - seconds_of(seen.st_mtim) <= kStaleLockSeconds) return false;
  const std::string stale = token_in(path);
  const std::string moved = path + ".breaking." + random_token();
  if (::rename(path.c_str(), moved.c_str()) != 0) return errno == ENOENT;  // another breaker was first
  struct stat taken {};
  const bool same = ::stat(moved.c_str(), &taken) == 0 && taken.st_ino == seen.st_ino && token_in(moved) == stale;
  if (same) ::unlink(moved.c_str());
  else put_back(moved, path);  // a new holder's lock: it was renewed in between
  return same;
}

// "<lease>.lock", held around each read-check-write of the lease; removed on destruction if still ours.
class LockFile {
 public:
  static util::Result<LockFile> take(const std::string& lease_path);
  LockFile(LockFile&& other) noexcept : path_(std::move(other.path_)), token_(std::move(other.token_)) { other.path_.clear(); }
  LockFile& operator=(LockFile&&) = delete;
  ~LockFile();

 private:
  LockFile(std::string path, std::string token) : path_(std::move(path)), token_(std::move(token)) {}
  std::string path_, token_;
};

// Creates the lock file holding token; false (errno set) when it cannot.
bool create_lock(const std::string& path, const std::string& token) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  const bool written = ::write(fd, token.data(), token.size()) == static_cast<ssize_t>(token.size());
  const int err = errno;
  if (::close(fd) == 0 && written) return true;
  ::unlink(path.c_str());
  errno = written ? EIO : err;
  return false;
}

util::Result<LockFile> LockFile::take(const std::string& lease_path) {
  const std::string path = lease_path + ".lock";
  const std::string token = random_token();
  const auto deadline = std::chrono::steady_clock::now() + kLockWait;
  for (;;) {
    if (create_lock(path, token)) return LockFile(path, token);
    if (errno != EEXIST) return std::unexpected(io_error(path, "cannot create the lease lock", errno));
    if (break_if_stale(path, lease_path)) continue;
    if (std::chrono::steady_clock::now() >= deadline)
      return std::unexpected(lease_error(path,
                                         "busy: another mlsup is taking or renewing the lease; try again (a lock "
                                         "left by a crash is broken after " + std::to_string(kStaleLockSeconds) + " s)",
                                         util::ErrorKind::Busy));
    std::this_thread::sleep_for(kLockRetry);
  }
}

LockFile::~LockFile() {
  if (path_.empty()) return;
  const auto content = read_file_if_exists(path_);
  if (content && *content && **content == token_) ::unlink(path_.c_str());
}

std::string lease_text(const LeaseInfo& l) {
  const nlohmann::ordered_json j = {
      {"host", l.host}, {"pid", l.pid}, {"boot_id", l.boot_id}, {"owner", l.owner}, {"expires", l.expires},
      {"epoch", l.epoch}, {"machine_id", l.machine_id}};
  return util::dump_json(j) + "\n";
}

std::optional<LeaseInfo> parse_lease(std::string_view text) {
  const json j = json::parse(text, nullptr, false);
  if (!j.is_object()) return std::nullopt;
  for (const char* key : {"host", "boot_id", "owner"})
    if (!j.contains(key) || !j[key].is_string()) return std::nullopt;
  if (!j.contains("pid") || !j["pid"].is_number_integer() || !j.contains("expires") || !j["expires"].is_number())
    return std::nullopt;
  const long long epoch = j.contains("epoch") && j["epoch"].is_number_integer() ? j["epoch"].get<long long>() : 0;
  const std::string machine = j.contains("machine_id") && j["machine_id"].is_string() ? j["machine_id"].get<std::string>() : "";
  return LeaseInfo{j["host"].get<std::string>(), j["boot_id"].get<std::string>(), j["owner"].get<std::string>(),
                   j["pid"].get<int>(), j["expires"].get<double>(), epoch, machine};
}

// The lease at path: nullopt when there is none, an error when the file is not a lease.
util::Result<std::optional<LeaseInfo>> load(const std::string& path) {
  auto text = read_file_if_exists(path);
  if (!text) return std::unexpected(text.error());
  if (!*text) return std::optional<LeaseInfo>();
  auto info = parse_lease(**text);
  if (!info) return std::unexpected(lease_error(path, "not a lease file; remove it if no mlsup runs this campaign"));
  return info;
}

// Writes info to path and reads it back. An extension (same owner, a later expiry) skips the folder's
// fsync: should a crash bring the earlier expiry back, that only ends the lease sooner, and every act
// reads the file first (keep_for()).
util::Result<void> write_and_confirm(const std::string& path, const LeaseInfo& info, bool extension = false) {
  if (auto ok = write_atomically(path, lease_text(info), 0644, extension ? Sync::FileOnly : Sync::Durable); !ok) return ok;
  auto back = load(path);
  if (!back) return std::unexpected(back.error());
  if (!*back || (*back)->owner != info.owner)
    return std::unexpected(lease_error(path, "the lease changed hands while it was being written"));
  return {};
}

bool process_alive(int pid) { return pid > 0 && (::kill(pid, 0) == 0 || errno == EPERM); }

// The holder ran on this machine: the same machine id, or, where either lacks one, the same host name.
bool same_machine(const LeaseInfo& holder, const Identity& me) {
  if (!holder.machine_id.empty() && !me.machine_id.empty()) return holder.machine_id == me.machine_id;
  return holder.host == me.host;
}

// True while holder's claim stands against me: not expired (server_now: the file server's clock), and
// not a process known to be dead (one of an earlier boot of this machine, or a pid gone in this boot).
bool holder_blocks(const LeaseInfo& holder, const Identity& me, double server_now) {
  if (holder.expires <= server_now) return false;
  if (!same_machine(holder, me)) return true;
  if (holder.boot_id != me.boot_id) return false;
  return process_alive(holder.pid);
}

// The server's clock minus this host's (now), or 0 when the server's cannot be read.
double offset_to(const ServerClock& server, const std::string& path, double now) {
  const auto t = server ? server(path) : std::nullopt;
  return t ? *t - now : 0;
}

std::string clock_time(double unix_seconds) {
  const auto t = static_cast<std::time_t>(unix_seconds);
  std::tm local{};
  ::localtime_r(&t, &local);
  char text[16];
  std::strftime(text, sizeof text, "%H:%M:%S", &local);
  return text;
}

std::string held_by(const LeaseInfo& l) {
  return "held by pid " + std::to_string(l.pid) + " on " + l.host + " until " + clock_time(l.expires);
}

}  // namespace

std::string requester() {
  std::string user;
  if (const char* env = std::getenv("USER"); env && *env) user = env;
  if (user.empty()) {
    passwd entry{};
    passwd* found = nullptr;
    char buffer[4096];
    if (::getpwuid_r(::getuid(), &entry, buffer, sizeof buffer, &found) == 0 && found) user = found->pw_name;
  }
  if (user.empty()) user = "uid " + std::to_string(::getuid());
  return user + "@" + current_identity().host;
}

Identity current_identity() {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  Identity me{host, "", static_cast<int>(::getpid()), ""};
  const auto boot = read_file_if_exists("/proc/sys/kernel/random/boot_id");
  if (boot && *boot) me.boot_id = std::string(util::trim(**boot));
  for (const char* file : {"/etc/machine-id", "/var/lib/dbus/machine-id"}) {
    const auto id = read_file_if_exists(file);
    if (id && *id && !util::trim(**id).empty()) {
      me.machine_id = std::string(util::trim(**id));
      break;
    }
  }
  return me;
}

util::Result<Lease> Lease::acquire(const std::string& path, const Identity& me, double now, double ttl_seconds,
                                   ServerClock server) {
  auto lock = LockFile::take(path);
  if (!lock) return std::unexpected(lock.error());
  auto holder = load(path);
  if (!holder) return std::unexpected(holder.error());
  const double offset = offset_to(server, path, now);
  if (*holder && holder_blocks(**holder, me, now + offset))
    return std::unexpected(lease_error(path, held_by(**holder) + "; another mlsup runs this campaign", util::ErrorKind::Held));
  LeaseInfo mine{me.host,           me.boot_id, random_token(), me.pid, now + offset + ttl_seconds,
                 (*holder ? (*holder)->epoch : 0) + 1, me.machine_id};
  if (auto ok = write_and_confirm(path, mine); !ok) return std::unexpected(ok.error());
  return Lease(path, std::move(mine), ttl_seconds, std::move(server), offset);
}

util::Result<void> Lease::renew(double now) {
  if (info_.expires >= now + offset_ + ttl_ / 2) return {};  // nobody may take it meanwhile; keep_for() looks before every act
  return extend(now, ttl_);
}

util::Result<void> Lease::keep_for(double now, double seconds) {
  if (info_.expires >= now + offset_ + seconds + ttl_ / 2) return confirm();  // long enough: nobody may take it meanwhile
  return extend(now, seconds + ttl_);
}

util::Result<void> Lease::confirm() const {
  auto holder = load(path_);
  if (!holder) return std::unexpected(holder.error());
  if (!*holder) return std::unexpected(lease_error(path_, "the lease file is gone", util::ErrorKind::Superseded));
  if ((*holder)->owner != info_.owner)
    return std::unexpected(lease_error(path_, (*holder)->owner.empty() ? "released" : "now " + held_by(**holder),
                                       util::ErrorKind::Superseded));
  return {};
}

util::Result<void> Lease::extend(double now, double span) {
  auto lock = LockFile::take(path_);
  if (!lock) return std::unexpected(lock.error());
  if (auto mine = confirm(); !mine) return mine;
  offset_ = offset_to(server_, path_, now);
  LeaseInfo next = info_;
  next.expires = now + offset_ + span;
  if (auto ok = write_and_confirm(path_, next, true); !ok) return ok;
  info_ = std::move(next);
  return {};
}

void Lease::release() {
  if (path_.empty()) return;
  info_.expires = 0;  // renew() and keep_for() look at the file from now on, and find it is not this owner's
  auto lock = LockFile::take(path_);
  if (!lock) return;
  const auto holder = load(path_);
  if (!holder || !*holder || (*holder)->owner != info_.owner) return;
  LeaseInfo ended = info_;
  ended.owner.clear();  // nobody's
  // Not synced: a crash that brings the held lease back only delays a takeover (its holder is dead:
  // at once on this host, at its expiry on another), and any later holder's write replaces this one.
  (void)write_atomically(path_, lease_text(ended), 0644, Sync::None);
}

std::optional<LeaseInfo> read_lease(const std::string& path) {
  auto holder = load(path);
  if (!holder) return std::nullopt;
  return *holder;
}

}  // namespace mlsup::journal
