#pragma once
// One supervisor per campaign, also across login nodes that share the state folder (over NFS).
//
// <state_dir>/lease.json names the holder and when its claim runs out. Every read-check-write of it
// happens under "<path>.lock", a file created with O_CREAT|O_EXCL (NFS honours that), so two takers
// cannot both win; the writer reads the lease back to confirm its owner token. Times in the file are
// on the file server's clock (read by touching "<path>.clock"), so login nodes whose clocks disagree
// still agree on when a claim runs out; a host is told apart by its machine id, not its name.
#include <functional>
#include <optional>
#include <string>

#include "util/error.h"

namespace mlsup::journal {

struct LeaseInfo {
  std::string host, boot_id, owner;  // owner: a random token, new at every acquire
  int pid = 0;
  double expires = 0;  // unix seconds on the file server's clock; 0 once released
  long long epoch = 0;  // 1, 2, ...: one more at every acquire, kept across releases
  std::string machine_id;  // "" when the holder had none (or wrote the lease before it was kept)
};

// Who a process is, for telling whether a holder is still alive.
struct Identity {
  std::string host, boot_id;
  int pid = 0;
  std::string machine_id;  // /etc/machine-id: two hosts cloned from one image may share a host name
};

// This process: host name, /proc/sys/kernel/random/boot_id ("" where there is none), pid, machine id.
Identity current_identity();

// Who asked, for the event log: "user@host"; the user is $USER, else the name of this process's uid
// (cron and systemd run without $USER), else the uid's number.
std::string requester();

// The file server's clock as seen from the lease at path (nullopt: use this host's clock).
using ServerClock = std::function<std::optional<double>(const std::string& lease_path)>;

// Touches "<lease_path>.clock" and reads back its modification time: the clock of the file server
// that holds the state folder (this host's own for a local disk); nullopt when it cannot.
std::optional<double> file_server_time(const std::string& lease_path);

class Lease {
 public:
  // Takes the lease at path for ttl_seconds when it is free, expired, or held by a dead process on this
  // host (its pid gone or its boot over), with the next epoch; otherwise an error naming the holder
  // (kind Held) or saying the lease is being taken by another at this moment (kind Busy).
  // now is this host's wall clock; the lease keeps its offset to server(path), measured at every write.
  static util::Result<Lease> acquire(const std::string& path, const Identity& me, double now, double ttl_seconds,
                                     ServerClock server = file_server_time);

  // Keeps the lease running: moves the expiry to now + ttl once less than half the TTL is left, and
  // does nothing before (an idle supervisor neither reads nor writes it; keep_for() looks before every
  // act); an error (after which the caller must stop acting) when the lease no longer names this
  // owner (kind Superseded) or cannot be written.
  util::Result<void> renew(double now);

  // Confirms the lease still names this owner and runs at least seconds + ttl/2 past now, renewing it
  // to now + seconds + ttl when it would not: called before every side effect, so that no operation
  // outlives the lease. Errors as renew().
  util::Result<void> keep_for(double now, double seconds);

  // Ends the claim (no owner, expiry 0) if the lease still names this owner, keeping the file for its
  // epoch; after it renew() and keep_for() fail. A lease not released runs out at its expiry.
  void release();

  // The lease as last written by this holder.
  const LeaseInfo& info() const { return info_; }

 private:
  Lease(std::string path, LeaseInfo info, double ttl, ServerClock server, double offset)
      : path_(std::move(path)), info_(std::move(info)), ttl_(ttl), server_(std::move(server)), offset_(offset) {}
  // Under the lock: moves the expiry to span seconds past the server's now (now: this host's clock).
  util::Result<void> extend(double now, double span);
  // Reads the lease (no lock: it is written whole, by rename) and checks it still names this owner.
  util::Result<void> confirm() const;

  std::string path_;
  LeaseInfo info_;
  double ttl_ = 0;
  ServerClock server_;
  double offset_ = 0;  // the server's clock minus this host's, as last measured
};

// The lease at path, or nullopt when there is none or it cannot be read as one.
std::optional<LeaseInfo> read_lease(const std::string& path);

}  // namespace mlsup::journal
