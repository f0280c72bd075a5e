#include <doctest/doctest.h>

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
