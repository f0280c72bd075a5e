#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <latch>
#include <thread>

#include "journal/atomic_file.h"
#include "journal/lease.h"
#include "support.h"

using namespace mlsup::journal;
namespace fs = std::filesystem;

namespace {

constexpr double kNow = 1'000'000;
constexpr double kTtl = 60;

// The tables below move a made-up clock: the server's clock is taken to be that clock.
const ServerClock kSameClock = [](const std::string&) { return std::optional<double>(); };

Identity me() { return {"login1", "boot-a", static_cast<int>(::getpid())}; }

// Another live process on the same host and boot.
Identity neighbour() { return {"login1", "boot-a", static_cast<int>(::getppid())}; }

// A pid that no process has any more.
int dead_pid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  return static_cast<int>(child);
}

Lease take(const std::string& path, const Identity& who, double now) {
  auto lease = Lease::acquire(path, who, now, kTtl, kSameClock);
  REQUIRE_MESSAGE(lease, (lease ? "" : lease.error().str()));
  return std::move(*lease);
}

std::string refusal(const std::string& path, const Identity& who, double now) {
  const auto lease = Lease::acquire(path, who, now, kTtl, kSameClock);
  REQUIRE_FALSE(lease);
  return lease.error().message;
}

}  // namespace

TEST_CASE("lease: a free lease is taken and written with the holder's identity") {
  mlsup::test::TempDir tmp;
  const std::string path = tmp.path() + "/lease.json";
  const Lease lease = take(path, me(), kNow);
  CHECK(lease.info().host == "login1");
  CHECK(lease.info().boot_id == "boot-a");
  CHECK(lease.info().pid == ::getpid());
  CHECK(lease.info().expires == kNow + kTtl);
  CHECK(lease.info().owner.size() == 32);
  const auto on_disk = read_lease(path);
  REQUIRE(on_disk);
  CHECK(on_disk->owner == lease.info().owner);
  CHECK(on_disk->expires == kNow + kTtl);
  CHECK_FALSE(fs::exists(path + ".lock"));
}

TEST_CASE("lease: a live process on the same host and boot keeps it, and the refusal names it") {
  mlsup::test::TempDir tmp;
  const std::string path = tmp.path() + "/lease.json";
  const Lease held = take(path, neighbour(), kNow);
  const std::string why = refusal(path, me(), kNow + 10);
  CHECK(why.find("held by pid " + std::to_string(::getppid()) + " on login1 until ") == 0);
  CHECK(read_lease(path)->owner == held.info().owner);
}

TEST_CASE("lease: another host's unexpired lease is refused even though its pid means nothing here") {
  mlsup::test::TempDir tmp;
  const std::string path = tmp.path() + "/lease.json";
  take(path, {"login2", "boot-b", dead_pid()}, kNow);
  CHECK(refusal(path, me(), kNow + kTtl - 1).find(" on login2 until ") != std::string::npos);
}

TEST_CASE("lease: an expired lease is taken over") {
  mlsup::test::TempDir tmp;
  const std::string path = tmp.path() + "/lease.json";
  const Lease old = take(path, {"login2", "boot-b", 4242}, kNow);
  const Lease now = take(path, me(), kNow + kTtl);
  CHECK(now.info().owner != old.info().owner);
  CHECK(read_lease(path)->host == "login1");
}

TEST_CASE("lease: a dead holder on this host and boot is taken over before expiry") {
  mlsup::test::TempDir tmp;
  const std::string path = tmp.path() + "/lease.json";
  take(path, {"login1", "boot-a", dead_pid()}, kNow);
  const Lease lease = take(path, me(), kNow + 1);
  CHECK(read_lease(path)->pid == ::getpid());
}

TEST_CASE("lease: a holder from an earlier boot of this host is taken over before expiry") {
  mlsup::test::TempDir tmp;
  const std::string path = tmp.path() + "/lease.json";
  take(path, {"login1", "boot-before-reboot", static_cast<int>(::getppid())}, kNow);
  const Lease lease = take(path, me(), kNow + 1);
  CHECK(read_lease(path)->boot_id == "boot-a");
}

TEST_CASE("lease: renew extends the expiry once half the TTL is gone, and fails once someone else holds the lease") {
  mlsup::test::TempDir tmp;
  const std::string path = tmp.path() + "/lease.json";
  Lease first = take(path, me(), kNow);
  const auto written = fs::last_write_time(path);
  const auto listed = fs::last_write_time(tmp.path());  // a lock file taken and removed would change it
  REQUIRE(first.renew(kNow + 29));  // more than half the TTL left: neither read nor written
  CHECK(first.info().expires == kNow + kTtl);
  CHECK(fs::last_write_time(path) == written);
  CHECK(fs::last_write_time(tmp.path()) == listed);
  REQUIRE(first.renew(kNow + 31));
  CHECK(first.info().expires == kNow + 31 + kTtl);
  CHECK(read_lease(path)->expires == kNow + 31 + kTtl);
  Lease second = take(path, {"login2", "boot-b", 77}, kNow + 31 + kTtl + 1);
  const auto lost = first.renew(kNow + 31 + kTtl + 2);
  REQUIRE_FALSE(lost);
  CHECK(lost.error().message.find("now held by pid 77 on login2 until ") == 0);
  first.release();
  CHECK(read_lease(path)->owner == second.info().owner);
  CHECK(second.renew(kNow + 200));
}

TEST_CASE("lease: release leaves a lease of nobody's (keeping its epoch), after which renew fails and anyone may take it") {
  mlsup::test::TempDir tmp;
  const std::string path = tmp.path() + "/lease.json";
  Lease lease = take(path, neighbour(), kNow);
  lease.release();
  const auto released = read_lease(path);
  REQUIRE(released);
  CHECK(released->owner.empty());
  CHECK(released->expires == 0);
  CHECK(released->epoch == 1);
  const auto renewed = lease.renew(kNow + 1);
  REQUIRE_FALSE(renewed);
  CHECK(renewed.error().kind == mlsup::util::ErrorKind::Superseded);
  CHECK(take(path, me(), kNow + 1).info().epoch == 2);
}

TEST_CASE("lease: a file that is not a lease is refused rather than overwritten") {
  mlsup::test::TempDir tmp;
  const std::string path = tmp.write("lease.json", "{\"host\":");
  CHECK(refusal(path, me(), kNow).find("not a lease file") == 0);
  CHECK_FALSE(read_lease(path));
  CHECK(*read_file(path) == "{\"host\":");
}

TEST_CASE("lease: a lock file left by a crash is broken after 30 s; a fresh one makes acquire wait, then fail") {
  mlsup::test::TempDir tmp;
  const std::string path = tmp.path() + "/lease.json";
  const std::string lock = tmp.write("lease.json.lock", "someone");
  fs::last_write_time(lock, fs::file_time_type::clock::now() - std::chrono::seconds(60));
  take(path, me(), kNow);
  CHECK_FALSE(fs::exists(lock));
  tmp.write("lease.json.lock", "someone");
  const std::string why = refusal(path, neighbour(), kNow + kTtl + 1);
  CHECK(why.find("busy") == 0);
  CHECK(read_lease(path)->pid == ::getpid());
}

TEST_CASE("lease: two threads racing for an expired lease: exactly one wins, every time") {
  for (int round = 0; round < 50; ++round) {
    mlsup::test::TempDir tmp;
    const std::string path = tmp.path() + "/lease.json";
    take(path, {"login2", "boot-b", 4242}, kNow);
    std::atomic<int> winners{0};
    std::latch start(2);
    const auto racer = [&](Identity who) {
      start.arrive_and_wait();
      if (Lease::acquire(path, who, kNow + kTtl + 1, kTtl, kSameClock)) ++winners;
    };
    std::thread a(racer, me());
    std::thread b(racer, neighbour());
    a.join();
    b.join();
    CHECK(winners == 1);
    CHECK_FALSE(fs::exists(path + ".lock"));
  }
}

TEST_CASE("lease: current_identity reads this process's host, boot id and pid") {
  const Identity id = current_identity();
  CHECK_FALSE(id.host.empty());
  CHECK(id.pid == ::getpid());
  if (fs::exists("/proc/sys/kernel/random/boot_id")) CHECK(id.boot_id.size() == 36);
}

namespace {

double wall() { return static_cast<double>(std::time(nullptr)); }

}  // namespace

TEST_CASE("lease: login nodes whose clocks disagree by an hour still agree on when a claim runs out") {
  mlsup::test::TempDir tmp;
  const std::string path = tmp.path() + "/lease.json";
  const Identity a{"login1", "boot-a", 4242, "machine-a"}, b{"login2", "boot-b", 4343, "machine-b"};
  // b's clock runs an hour ahead: by it, a's claim looks long expired.
  REQUIRE(Lease::acquire(path, a, wall(), kTtl));
  auto ahead = Lease::acquire(path, b, wall() + 3600, kTtl);
  REQUIRE_FALSE(ahead);
  CHECK(ahead.error().kind == mlsup::util::ErrorKind::Held);
  // a's clock runs an hour behind: its claim must not be written as expired an hour ago.
  mlsup::test::TempDir other;
  const std::string path2 = other.path() + "/lease.json";
  auto behind = Lease::acquire(path2, a, wall() - 3600, kTtl);
  REQUIRE(behind);
  CHECK(read_lease(path2)->expires == doctest::Approx(wall() + kTtl).epsilon(0.0001));
  CHECK_FALSE(Lease::acquire(path2, b, wall(), kTtl));
  // ...and it renews by the server's clock too.
  CHECK(behind->renew(wall() - 3600 + kTtl));
  CHECK(read_lease(path2)->expires > wall() + kTtl / 2);
}

TEST_CASE("lease: two hosts with one host name (a cloned image) are told apart by machine id") {
  mlsup::test::TempDir tmp;
  const std::string path = tmp.path() + "/lease.json";
  const Identity first{"login1", "boot-a", 4242, "machine-a"}, clone{"login1", "boot-b", 4343, "machine-b"};
  REQUIRE(Lease::acquire(path, first, kNow, kTtl, kSameClock));
  const auto taken = Lease::acquire(path, clone, kNow + 1, kTtl, kSameClock);
  REQUIRE_FALSE(taken);
  CHECK(taken.error().kind == mlsup::util::ErrorKind::Held);
  // The same machine after a reboot may take it at once.
  const Identity rebooted{"login1", "boot-c", 4444, "machine-a"};
  CHECK(Lease::acquire(path, rebooted, kNow + 2, kTtl, kSameClock));
  CHECK(read_lease(path)->machine_id == "machine-a");
}

TEST_CASE("lease: file_server_time reads the state folder's clock by touching <lease>.clock") {
  mlsup::test::TempDir tmp;
  const std::string path = tmp.path() + "/lease.json";
  const auto t = file_server_time(path);
  REQUIRE(t);
  CHECK(std::abs(*t - wall()) < 5);
  CHECK(fs::exists(path + ".clock"));
  CHECK_FALSE(file_server_time(tmp.path() + "/no/such/folder/lease.json"));
}

TEST_CASE("lease: current_identity reads the machine id where the host has one") {
  if (fs::exists("/etc/machine-id") && fs::file_size("/etc/machine-id") > 1) CHECK_FALSE(current_identity().machine_id.empty());
}
