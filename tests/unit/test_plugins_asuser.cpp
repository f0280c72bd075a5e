#include <doctest/doctest.h>

#include <chrono>
#include <csignal>
#include <cstring>
#include <fstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

#include "asuser.h"
#include "health.h"
#include "support.h"

namespace {

void on_usr1(int) {}

// The test process as slurmstepd leaves it: SIGTERM and SIGALRM blocked, SIGINT ignored, a
// handler on SIGUSR1. Restored on destruction.
struct SlurmstepdSignals {
  sigset_t old_mask{};
  struct sigaction old_int{}, old_usr1{};
  SlurmstepdSignals() {
    sigset_t block;
    sigemptyset(&block);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGALRM);
    sigprocmask(SIG_BLOCK, &block, &old_mask);
    struct sigaction ign {}, handler {};
    ign.sa_handler = SIG_IGN;
    handler.sa_handler = on_usr1;
    sigaction(SIGINT, &ign, &old_int);
    sigaction(SIGUSR1, &handler, &old_usr1);
  }
  ~SlurmstepdSignals() {
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGUSR1, &old_usr1, nullptr);
    sigprocmask(SIG_SETMASK, &old_mask, nullptr);
  }
};

mlsup_user me() {
  mlsup_user u{};
  u.uid = getuid();
  u.gid = getgid();
  return u;
}

// In the child: fails, naming the mask and dispositions, unless no standard signal (1..31; libc
// keeps handlers of its own above) is blocked, ignored or caught.
int signals_at_default(void*, char* msg, size_t len) {
  std::ifstream in("/proc/self/status");
  std::string line, bad;
  while (std::getline(in, line))
    for (const char* key : {"SigBlk:", "SigIgn:", "SigCgt:"})
      if (line.starts_with(key) && (std::stoull(line.substr(std::strlen(key)), nullptr, 16) & 0x7fffffffull)) bad += line + " ";
  snprintf(msg, len, "%s", bad.c_str());
  return bad.empty() ? 0 : -1;
}

}  // namespace

TEST_CASE("forked children: no blocked, ignored or caught signal reaches the work done as the user") {
  SlurmstepdSignals stepd;
  const mlsup_user u = me();
  char msg[512];
  CHECK(mlsup_run_as_user(&u, signals_at_default, nullptr, 5000, msg, sizeof(msg)) == 0);
  CHECK(std::string(msg) == "");
}

TEST_CASE("the health check starts with default signals: a blocked SIGTERM does not survive exec") {
  mlsup::test::TempDir dir;
  const auto check = dir.write("check.sh", "#!/bin/sh\ngrep -E '^Sig(Blk|Ign)' /proc/self/status | tr '\\n' ' '\n");
  chmod(check.c_str(), 0755);
  SlurmstepdSignals stepd;
  const mlsup_user u = me();
  char path[] = "PATH=/usr/bin:/bin";
  char* const envp[] = {path, nullptr};
  mlsup_health_result r{};
  mlsup_health_run(&u, check.c_str(), envp, 10, &r);
  REQUIRE(r.ran);
  CHECK(r.ok);
  CHECK(std::string(r.detail) == "SigBlk:\t0000000000000000 SigIgn:\t0000000000000000 ");
}

namespace {

// In the child: as stuck as a call into a hung file system.
int stuck(void*, char*, size_t) {
  sleep(30);
  return 0;
}

}  // namespace

TEST_CASE("work as the user is bounded: a child stuck in a call is given up on at its timeout") {
  const mlsup_user u = me();
  char msg[512];
  const auto t0 = std::chrono::steady_clock::now();
  CHECK(mlsup_run_as_user(&u, stuck, nullptr, 300, msg, sizeof(msg)) == -1);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5));
  CHECK(std::string(msg) == "gave up after 300 ms");
}

TEST_CASE("the per-task heartbeat folder is made in a bounded child: made, found, or why not") {
  mlsup::test::TempDir dir;
  const mlsup_user u = me();
  char msg[512];
  const std::string hb = dir.path() + "/attempt-1.d";
  CHECK(mlsup_mkdir_bounded(&u, hb.c_str(), 3000, msg, sizeof(msg)) == 0);
  struct stat st {};
  CHECK((stat(hb.c_str(), &st) == 0 && S_ISDIR(st.st_mode)));
  CHECK(mlsup_mkdir_bounded(&u, hb.c_str(), 3000, msg, sizeof(msg)) == 0);  // one that exists is fine
  const std::string orphan = dir.path() + "/missing/attempt-1.d";
  CHECK(mlsup_mkdir_bounded(&u, orphan.c_str(), 3000, msg, sizeof(msg)) == -1);
  CHECK(std::string(msg) == "No such file or directory");
}
