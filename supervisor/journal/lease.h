#pragma once
// One supervisor per campaign, also across login nodes that share the state folder (over NFS).
//
// <state_dir>/lease.json names the holder and when its claim runs out. Every read-check-write of it
// happens under "<path>.lock", a file created with O_CREAT|O_EXCL (NFS honours that), so two takers
// cannot both win; the writer reads the lease back to confirm its owner token.
#include <optional>
#include <string>

#include "util/error.h"

namespace mlsup::journal {

struct LeaseInfo {
  std::string host, boot_id, owner;  // owner: a random token, new at every acquire
  int pid = 0;
  double expires = 0;  // unix seconds; 0 once released
  long long epoch = 0;  // 1, 2, ...: one more at every acquire, kept across releases
};

// Who a process is, for telling whether a holder is still alive.
struct Identity {
  std::string host, boot_id;
  int pid = 0;
};

// This process: host name, /proc/sys/kernel/random/boot_id ("" where there is none), pid.
Identity current_identity();

class Lease {
 public:
  // Takes the lease at path for ttl_seconds when it is free, expired, or held by a dead process on this
  // host (its pid gone or its boot over), with the next epoch; otherwise an error naming the holder
  // (kind Held) or saying the lease is being taken by another at this moment (kind Busy).
  static util::Result<Lease> acquire(const std::string& path, const Identity& me, double now, double ttl_seconds);

  // Keeps the lease running: moves the expiry to now + ttl once less than half the TTL is left, and
  // does nothing before (an idle supervisor neither reads nor writes it; hold() looks before every
  // act); an error (after which the caller must stop acting) when the lease no longer names this
  // owner (kind Superseded) or cannot be written.
  util::Result<void> renew(double now);

  // Confirms the lease still names this owner and runs at least seconds + ttl/2 past now, renewing it
  // to now + seconds + ttl when it would not: called before every side effect, so that no operation
  // outlives the lease. Errors as renew().
  util::Result<void> hold(double now, double seconds);

  // Ends the claim (no owner, expiry 0) if the lease still names this owner, keeping the file for its
  // epoch; after it renew() and hold() fail. A lease not released runs out at its expiry.
  void release();

  // The lease as last written by this holder.
  const LeaseInfo& info() const { return info_; }

 private:
  Lease(std::string path, LeaseInfo info, double ttl) : path_(std::move(path)), info_(std::move(info)), ttl_(ttl) {}
  util::Result<void> extend(double until);
  // Reads the lease (no lock: it is written whole, by rename) and checks it still names this owner.
  util::Result<void> confirm() const;

  std::string path_;
  LeaseInfo info_;
  double ttl_ = 0;
};

// The lease at path, or nullopt when there is none or it cannot be read as one.
std::optional<LeaseInfo> read_lease(const std::string& path);

}  // namespace mlsup::journal
