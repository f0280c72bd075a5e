// Alerts are bounded: a hook that never ends and a webhook that never answers hold an alert for the
// longer of their two bounds, not their sum and not for ever.
#include <chrono>
#include <string>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "campaign/notify.h"
#include "support.h"

using namespace mlsup;
using namespace std::chrono_literals;

namespace {

// A socket on 127.0.0.1 that listens and never accepts nor answers: the kernel completes each
// connection and takes in the request, and the answer never comes.
class SilentListener {
 public:
  SilentListener() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    REQUIRE(::listen(fd_, 8) == 0);
    REQUIRE(::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
    port_ = ntohs(addr.sin_port);
  }
  ~SilentListener() { ::close(fd_); }
  SilentListener(const SilentListener&) = delete;
  SilentListener& operator=(const SilentListener&) = delete;

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/hook"; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

const nlohmann::json kEvent = {{"event", "stopped"}, {"reason", "r"}, {"campaign", "c"}};

}  // namespace

TEST_CASE("a webhook that is never answered ends the alert at the webhook's bound") {
  test::TempDir dir;
  SilentListener listener;
  engine::Notifier n({.webhook = listener.url()}, dir.path(), dir.path(), {.webhook = 1s});
  const auto start = std::chrono::steady_clock::now();
  const std::string outcome = n.alert(kEvent, 1000);
  CHECK(seconds_since(start) < 6.0);  // never answered: without the bound it would wait for ever; slack for a loaded machine
  CHECK(outcome == "webhook: timed out while trying to read the answer");
}

TEST_CASE("an alert's command and webhook run side by side: a stuck pair holds it for the longer bound") {
  test::TempDir dir;
  SilentListener listener;
  const config::NotifySettings settings{.command = "exec >/dev/null 2>&1; sleep 30", .webhook = listener.url()};
  engine::Notifier n(settings, dir.path(), dir.path(), {.command = 4s, .webhook = 4s});
  const auto start = std::chrono::steady_clock::now();
  const std::string outcome = n.alert(kEvent, 1000);
  CHECK(seconds_since(start) < 7.5);  // one after the other they would take 8 s; the slack is for a loaded machine
  CHECK(outcome == "command: timed out after 4 s; webhook: timed out while trying to read the answer");
}
