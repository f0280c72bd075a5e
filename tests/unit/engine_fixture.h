#pragma once
// The engine's test bench: a campaign in a temporary folder, driven by a fake Slurm and a hand-moved clock.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/load.h"
#include "events/kinds.h"
#include "campaign/campaign.h"
#include "slurm/fake_client.h"
#include "support.h"
#include "util/json.h"

namespace mlsup::test {

// A campaign in a temporary folder, driven by a fake Slurm and a hand-moved clock.
struct EngineFixture {
  TempDir dir;
  slurm::FakeClient fake;
  double clock = 1000;        // the wall clock (unix seconds)
  double mono_offset = -500;  // the monotonic clock is clock + mono_offset until the wall clock steps
  config::Config config;

  // policy: more keys of the policy mapping; extra: more top-level YAML.
  explicit EngineFixture(const std::string& policy = "", const std::string& extra = "") {
    dir.write("job.sbatch", "#!/bin/bash\n#SBATCH --nodes=1\nsrun true\n");
    config = config::load_config_file(dir.write("c.yaml", "name: t\ntemplate: job.sbatch\npoll_interval: 1s\n"
                                                          "heartbeat: {startup_timeout: 60s, steady_timeout: 10s}\n"
                                                          "policy: {backoff_initial: 5s, backoff_max: 5s" + policy + "}\n" + extra))
                 .value();
  }

  std::vector<std::string> silent;  // what the probe reports as not answering
  std::string clock_id = "host-a/boot-1";  // the monotonic clock's identity
  bool lease_lost = false;          // another supervisor took the campaign over
  std::vector<double> held_for;     // every keep_lease() the engine asked for, in seconds
  double disk_percent = 10;         // how full the checkpoint folder's file system is (bytes)
  std::optional<double> disk_free;  // and the bytes free there (nullopt: not measured)
  std::function<double()> reserve_submit;  // the sbatch turns of run (empty: none, as a tick)
  std::function<void()> on_sleep;          // what happens while the engine waits (no time passes)
  // The hang's node dump step: what it prints for the nodes asked (empty: no dump edge, as before).
  std::function<std::string(const std::vector<std::string>& nodes)> node_dump;
  std::vector<std::vector<std::string>> dumped;  // the nodes each dump step was asked for
  int sleeps = 0;                          // how often it waited

  // A campaign let go saves what it observed first, as run and tick let go of one (Opened::close()).
  struct Close {
    void operator()(engine::Campaign* c) const {
      c->flush();
      delete c;
    }
  };
  using Opened = std::unique_ptr<engine::Campaign, Close>;

  Opened open() {
    auto probe = [this](slurm::JobId, const std::vector<std::string>&, std::chrono::seconds) { return silent; };
    engine::Edges edges{&fake, [this] { return clock; }, nullptr, probe};
    edges.mono = [this] { return mono(); };
    edges.clock_id = clock_id;
    edges.disk = [this](const std::string& folder) { return decide::DiskUse{folder, disk_percent, 1, disk_free, 1e9}; };
    edges.reserve_submit = reserve_submit;
    if (node_dump)
      edges.node_dump = [this](slurm::JobId, const std::vector<std::string>& nodes, std::chrono::seconds) {
        dumped.push_back(nodes);
        edges::ProcessResult r;
        r.started = true;
        r.exit_code = 0;
        r.out = node_dump(nodes);
        return r;
      };
    edges.sleep = [this](double) {
      ++sleeps;
      if (on_sleep) on_sleep();
    };
    edges.keep_lease = [this](double seconds) -> util::Result<void> {
      held_for.push_back(seconds);
      if (lease_lost) return std::unexpected(util::Error{.kind = util::ErrorKind::Superseded, .message = "lease lost"});
      return {};
    };
    auto c = engine::Campaign::open(config, std::move(edges));
    if (!c) FAIL(c.error().str());
    return Opened(c->release());
  }

  std::optional<engine::Outcome> pass(engine::Campaign& c) {
    auto r = c.pass();
    if (!r) FAIL(r.error().str());
    return *r;
  }

  std::size_t submits() const { return fake.submitted.size(); }

  // The monotonic clock's reading now.
  double mono() const { return clock + mono_offset; }

  // The wall clock jumps by seconds (NTP, a person); the monotonic clock does not.
  void wall_step(double seconds) {
    clock += seconds;
    mono_offset -= seconds;
  }

  // How many calls to Slurm began with verb ("cancel", "submit").
  std::size_t calls(const std::string& verb) const {
    return static_cast<std::size_t>(std::count_if(fake.calls.begin(), fake.calls.end(), [&](const std::string& c) {
      return c.rfind(verb, 0) == 0;
    }));
  }

  // The job of the newest submission.
  slurm::JobId last_job() const { return fake.next_id - 1; }

  // Writes the current attempt's heartbeat file as a training would (content as given, may be empty).
  void heartbeat(const std::string& content, int attempt = 1) const {
    std::filesystem::create_directories(config.heartbeat.dir);
    std::ofstream(config.heartbeat.dir + "/attempt-" + std::to_string(attempt)) << content;
  }

  // A running 2-node job (n1, n2) whose heartbeat stops at step 7 until it is found hung (steady
  // timeout 10 s), cancelled and resubmitted; output: what the job wrote ("" = no file).
  void hang_two_nodes(engine::Campaign& c, const std::string& output = "") {
    pass(c);
    const auto id = fake.table.begin()->first;
    if (!output.empty()) fake.table[id].std_out = dir.write("job.out", output);
    fake.set_state(id, slurm::JobState::Running, 0, "n[1-2]");
    heartbeat("7\n");
    pass(c);
    clock += 11;
    pass(c);
    pass(c);
    clock += 6;
    pass(c);
  }

  // The campaign's event log.
  std::string events() const;
  // Its events of kind, oldest first (the event log parsed).
  std::vector<nlohmann::json> events_of(events::EventKind kind) const;
  // Whether an event of kind was told whose field key's text contains part (any event of kind: no key).
  bool told(events::EventKind kind, const std::string& key = "", const std::string& part = "") const;
};

// A whole file (a journal, an event log), "" when it is missing.
inline std::string slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline std::string EngineFixture::events() const { return slurp(config.state_dir + "/events.jsonl"); }

inline std::vector<nlohmann::json> EngineFixture::events_of(events::EventKind kind) const {
  std::vector<nlohmann::json> out;
  std::istringstream lines(events());
  for (std::string line; std::getline(lines, line);) {
    auto e = nlohmann::json::parse(line, nullptr, false);
    if (e.is_object() && e.value("event", "") == kind.name()) out.push_back(std::move(e));
  }
  return out;
}

inline bool EngineFixture::told(events::EventKind kind, const std::string& key, const std::string& part) const {
  const auto all = events_of(kind);
  return std::any_of(all.begin(), all.end(), [&](const nlohmann::json& e) {
    return key.empty() || (e.contains(key) && util::json_text(e[key]).find(part) != std::string::npos);
  });
}

}  // namespace mlsup::test
