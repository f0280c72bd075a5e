// Inputs mlsup does not control (heartbeat files, the journal, the event log, notify.json, a webhook
// server) never crash it: a bad one is reported with its file and line, and the rest goes on.
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli/campaign_verbs.h"
#include "cli/exit_codes.h"
#include "edges/http_post.h"
#include "campaign/campaign.h"
#include "campaign/notify.h"
#include "capture.h"
#include "engine_fixture.h"

using namespace mlsup;
using mlsup::test::capture;
using mlsup::test::EngineFixture;
using mlsup::test::slurp;
using nlohmann::json;
using slurm::JobState;

namespace {

// The number of lines in a file.
int line_count(const std::string& path) {
  const std::string text = slurp(path);
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

// Appends one line to a file, as a person with an editor would.
void append_line(const std::string& path, const std::string& line) { std::ofstream(path, std::ios::app) << line << "\n"; }

// A file that must hold one JSON object.
json json_file(const std::string& path) { return json::parse(slurp(path), nullptr, false); }

// A TCP listener on 127.0.0.1 that accepts connections and never answers; it lets go of them when
// the test ends, or after safety_s so that a client without a bound of its own still returns.
class SilentServer {
 public:
  explicit SilentServer(int safety_s = 5) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    REQUIRE(::listen(fd_, 8) == 0);
    REQUIRE(::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this, safety_s] { serve(std::chrono::steady_clock::now() + std::chrono::seconds(safety_s)); });
  }
  ~SilentServer() {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    thread_.join();
    ::close(fd_);
  }
  SilentServer(const SilentServer&) = delete;
  SilentServer& operator=(const SilentServer&) = delete;

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/hook"; }

 private:
  void serve(std::chrono::steady_clock::time_point until) {
    std::vector<int> held;
    while (std::chrono::steady_clock::now() < until) {
      {
        std::lock_guard lock(mutex_);
        if (done_) break;
      }
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) == 1) held.push_back(::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC));
    }
    for (int c : held) ::close(c);
  }

  int fd_ = -1;
  int port_ = 0;
  std::thread thread_;
  std::mutex mutex_;
  bool done_ = false;
};

// A fixture whose attempt 1 runs on nodes (the fake Slurm shows it RUNNING).
slurm::JobId running_attempt(EngineFixture& f, const std::string& nodes = "n1") {
  f.pass(*f.open());
  const auto id = f.fake.table.begin()->first;
  f.fake.set_state(id, JobState::Running, 0, nodes);
  std::filesystem::create_directories(f.config.heartbeat.dir);
  return id;
}

}  // namespace

TEST_CASE("a heartbeat that is not UTF-8 is read, kept and judged like any other, across restarts") {
  EngineFixture f;
  running_attempt(f);
  std::ofstream(f.config.heartbeat.dir + "/attempt-1") << "12 \xff\xfe\n";
  f.pass(*f.open());
  f.pass(*f.open());  // a restart reads memory.json back
  const json saved = json_file(f.config.state_dir + "/memory.json");
  REQUIRE(saved.is_object());
  CHECK(json_file(f.config.state_dir + "/status.json").value("step", 0) == 12);
  f.clock += 11;
  f.pass(*f.open());  // the same bytes for 11 s on mlsup's clock, seen by separate processes: hung
  CHECK(std::filesystem::exists(f.config.state_dir + "/fenced/1"));
}

TEST_CASE("a per-task heartbeat file whose name is not UTF-8 is watched like the others") {
  EngineFixture f("", "slurm: {nodes: 2}\n");
  f.fake.node_table = {{"n1", "MIXED"}, {"n2", "MIXED"}, {"n3", "IDLE"}, {"n4", "IDLE"}};
  running_attempt(f, "n[1-2]");
  const std::string dir = f.config.heartbeat.dir + "/attempt-1.d";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/n1.0") << "5\n";
  std::ofstream(dir + "/n\xff" "2.1") << "5\n";
  f.pass(*f.open());
  f.pass(*f.open());
  const json saved = json_file(f.config.state_dir + "/memory.json");
  REQUIRE(saved.is_object());
  CHECK(saved["heartbeat"]["files"].size() == 2);
  f.clock += 11;
  f.pass(*f.open());
  CHECK(std::filesystem::exists(f.config.state_dir + "/fenced/1"));
}

TEST_CASE("memory.json with fields of the wrong type is set aside: the heartbeat is observed afresh") {
  EngineFixture f;
  running_attempt(f);
  std::ofstream(f.config.heartbeat.dir + "/attempt-1") << "7\n";
  std::ofstream(f.config.state_dir + "/memory.json")
      << R"({"version":1,"attempt":1,"heartbeat":{"running_since":"x","files":{"":{"content":5}}},"calibration":{"longest":"y"}})"
      << "\n";
  f.pass(*f.open());
  CHECK(json_file(f.config.state_dir + "/memory.json")["heartbeat"].value("running_since", 0.0) == f.mono());
  f.clock += 11;
  f.pass(*f.open());
  CHECK(std::filesystem::exists(f.config.state_dir + "/fenced/1"));
}

TEST_CASE("a checkpoint directory marker with fields of the wrong type is refused with a message, not a crash") {
  EngineFixture f;
  std::filesystem::create_directories(f.config.checkpoint.dir);
  std::ofstream(f.config.checkpoint.dir + "/.mlsup-campaign") << R"({"campaign_id":5,"name":6,"state_dir":[]})" << "\n";
  auto c = engine::Campaign::open(f.config, {&f.fake, [&] { return f.clock; }, nullptr, nullptr});
  REQUIRE_FALSE(c.has_value());
  CHECK(c.error().str().find("checkpoint.dir") != std::string::npos);
}

TEST_CASE("a journal record with a field of the wrong type: the pass names its file and line, and does nothing") {
  EngineFixture f;
  f.pass(*f.open());  // attempt 1 submitted
  const std::string path = f.config.state_dir + "/journal.jsonl";
  append_line(path, R"({"seq":100,"time":1001,"type":"submitted","attempt":"x","job_id":7})");
  const int line = line_count(path);
  const std::string before = slurp(path);
  auto c = f.open();
  const auto r = c->pass();
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().file == path);
  CHECK(r.error().line == line);
  CHECK(r.error().str().find("repair") != std::string::npos);
  CHECK(f.submits() == 1);
  CHECK(slurp(path) == before);  // nothing recorded, nothing done
}

TEST_CASE("a damaged campaign record is not replaced by a new campaign id") {
  EngineFixture f;
  f.pass(*f.open());
  const std::string path = f.config.state_dir + "/journal.jsonl";
  std::string text = slurp(path);
  const auto at = text.find(R"("type":"campaign","id":")");
  REQUIRE(at != std::string::npos);
  text.replace(at, std::string(R"("type":"campaign","id":")").size(), R"("type":"campaign","id":5,"was":")");
  std::ofstream(path) << text;
  auto c = f.open();
  const auto r = c->pass();
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().line == 2);
  CHECK(slurp(path) == text);
  CHECK(f.submits() == 1);
}

TEST_CASE("status prints a journal whose records have fields of the wrong type, and shows the problem") {
  EngineFixture f;
  f.pass(*f.open());
  const std::string path = f.config.state_dir + "/journal.jsonl";
  append_line(path, R"({"seq":100,"time":"soon","type":"ended","attempt":1})");
  append_line(path, R"({"seq":101,"time":1002,"type":"ended","attempt":"x","class":7})");
  const int line = line_count(path);
  for (const bool as_json : {false, true}) {
    const auto printed = capture([&] { return cli::status_verb(f.config.source_file, as_json); });
    CHECK(printed.code == cli::kOk);
    CHECK(printed.out.find(path + ":" + std::to_string(line)) != std::string::npos);
    CHECK(printed.out.find(path + ":" + std::to_string(line - 1)) != std::string::npos);
    if (as_json) CHECK(json::parse(printed.out, nullptr, false).is_object());
  }
}

TEST_CASE("events prints an event log whose fields have the wrong type") {
  EngineFixture f;
  f.pass(*f.open());
  const std::string path = f.config.state_dir + "/events.jsonl";
  append_line(path, R"({"event":5,"time":"soon","detail":"wrong types"})");
  append_line(path, R"({"event":"far","time":1e300})");
  append_line(path, R"({"event":"early","time":-1e300})");
  for (const bool as_json : {false, true}) {
    const auto printed = capture([&] { return cli::events_verb(f.config.source_file, as_json); });
    CHECK(printed.code == cli::kOk);
    CHECK(printed.out.find("wrong types") != std::string::npos);
    CHECK(printed.out.find("far") != std::string::npos);
  }
}

TEST_CASE("notify.json holding a value of the wrong type does not stop an alert") {
  EngineFixture f("", "notify: {command: \"true\"}\n");
  std::filesystem::create_directories(f.config.state_dir);
  std::ofstream(f.config.state_dir + "/notify.json") << R"({"stopped":"yesterday"})" << "\n";
  engine::Notifier n(f.config.notify, f.config.state_dir, f.config.base_dir);
  CHECK(n.alert({{"event", "stopped"}, {"reason", "r"}}, 1000) == "command: sent");
  CHECK(n.alert({{"event", "stopped"}, {"reason", "r"}}, 1001) == "cooldown");
}

TEST_CASE("an alert whose event holds bytes that are not UTF-8 is still sent") {
  EngineFixture f("", "notify: {command: \"printf %s \\\"$MLSUP_EVENT_JSON\\\" > sent.json\"}\n");
  std::filesystem::create_directories(f.config.state_dir);
  engine::Notifier n(f.config.notify, f.config.state_dir, f.config.base_dir);
  CHECK(n.alert({{"event", "stopped\xff"}, {"reason", "bad \xfe bytes"}}, 1000) == "command: sent");
  CHECK(json_file(f.config.base_dir + "/sent.json").is_object());
  CHECK(json_file(f.config.state_dir + "/notify.json").is_object());
}

TEST_CASE("a webhook server that accepts and never answers does not hold the supervisor past the timeout") {
  SilentServer server;
  const auto start = std::chrono::steady_clock::now();
  const std::string outcome = edges::post({.url = server.url(), .body = "{}", .timeout = std::chrono::milliseconds(500)});
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(took < 8.0);  // never answered: without the bound it would wait for ever
  CHECK(outcome.find("timed out") != std::string::npos);
}
