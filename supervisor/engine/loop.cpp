#include "engine/loop.h"
#include "engine/loop_parts.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <variant>

#include "decide/exit_codes.h"
#include "engine/campaign.h"
#include "engine/console.h"
#include "engine/template_snapshot.h"
#include "journal/lease.h"
#include "slurm/client.h"
#include "slurm/probe.h"
#include "slurm/shared_query.h"
#include "util/json.h"

namespace mlsup::engine {
namespace fs = std::filesystem;

namespace loop_parts {

using decide::kBadInput;
using decide::kLeaseHeld;
using decide::kRuntimeFailure;

double wall_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

namespace {

// CLOCK_BOOTTIME: never steps, and goes on while the machine sleeps.
double mono_now() {
  timespec t{};
  ::clock_gettime(CLOCK_BOOTTIME, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

// Which monotonic clock mono_now() reads: this host's, in this boot.
std::string clock_id() {
  const auto me = journal::current_identity();
  return me.host + "/" + me.boot_id;
}

std::mutex print_mutex;  // one line at a time from every campaign's worker

}  // namespace

void print_line(const std::string& line) {
  std::lock_guard lock(print_mutex);
  std::cerr << line << std::endl;
}

void print_event(const nlohmann::json& e, bool named) { print_line(console_line(e, named)); }

namespace {

double lease_ttl(const config::Config& c) {
  return std::max(30.0, 5.0 * std::chrono::duration<double>(c.poll_interval).count());
}

}  // namespace

slurm::Client* Clients::get(const std::string& backend) {
    std::lock_guard lock(mutex_);
    auto& c = by_backend_[backend];
    if (!c.shared) {
      c.client = slurm::make_client(backend);
      if (!c.client) return nullptr;
      c.shared = std::make_unique<slurm::SharedQuery>(*c.client);
    }
  return c.shared.get();
}

long long Clients::loads() {
  std::lock_guard lock(mutex_);
  long long n = 0;
  for (auto& [name, c] : by_backend_)
    if (c.shared) n += c.shared->loads();
  return n;
}

void Clients::new_pass() {
  std::lock_guard lock(mutex_);
  for (auto& [name, c] : by_backend_)
    if (c.shared) c.shared->new_pass();
}

std::unique_ptr<util::Pacer> submit_pacer(const Supervise& what) {
  return std::make_unique<util::Pacer>(what.submit_rate, what.submit_burst, mono_now,
                                       [](double s) { std::this_thread::sleep_for(std::chrono::duration<double>(s)); });
}

std::variant<Opened, RunResult> open_campaign(const config::Config& config, slurm::Client* client, bool named,
                                              util::Pacer& submits) {
  if (!client) return RunResult{kBadInput, "slurm.backend " + config.slurm.backend + " is not one mlsup knows"};
  std::error_code ec;
  fs::create_directories(config.state_dir, ec);
  if (ec) return RunResult{kRuntimeFailure, "cannot create the state directory " + config.state_dir + ": " + ec.message()};
  auto lease = journal::Lease::acquire(config.state_dir + "/lease.json", journal::current_identity(), wall_now(),
                                       lease_ttl(config));
  if (!lease) {
    const bool held = lease.error().kind == util::ErrorKind::Held || lease.error().kind == util::ErrorKind::Busy;
    return RunResult{held ? kLeaseHeld : kRuntimeFailure, lease.error().str()};
  }
  Opened o;
  o.lease = std::make_unique<journal::Lease>(std::move(*lease));
  journal::Lease* held = o.lease.get();
  Edges edges{client, wall_now, [named](const nlohmann::json& e) { print_event(e, named); }, slurm::unresponsive_nodes};
  edges.mono = mono_now;
  edges.clock_id = clock_id();
  edges.hold = [held](double seconds) { return held->hold(wall_now(), seconds); };
  edges.epoch = held->info().epoch;
  edges.pace_submit = [&submits] { return submits.wait(); };
  auto campaign = Campaign::open(config, std::move(edges));
  if (!campaign) {
    o.lease->release();
    return RunResult{kRuntimeFailure, campaign.error().str()};
  }
  o.campaign = std::move(*campaign);
  return o;
}

namespace {

// One pass; an exception that escapes it (a defect) fails this pass only, so the loop goes on.
util::Result<std::optional<Outcome>> guarded_pass(Campaign& c) {
  try {
    return c.pass();
  } catch (const std::exception& e) {
    return util::fail(std::string("the pass stopped on an unexpected error (please report it): ") + e.what());
  }
}

// True when an error means another supervisor holds the campaign now (not an I/O failure).
bool lease_taken(const util::Error& e) { return e.kind == util::ErrorKind::Superseded || e.kind == util::ErrorKind::Held; }

}  // namespace

// A lease that cannot be written (a full disk) skips the pass: nobody else can take it over
// meanwhile, and nothing is done unrenewed.
std::optional<RunResult> one_pass(Opened& o) {
  const std::string name = o.campaign->config().name;
  if (auto renewed = o.lease->renew(wall_now()); !renewed) {
    if (lease_taken(renewed.error())) return RunResult{kLeaseHeld, "lost the lease: " + renewed.error().message};
    print_event({{"event", "pass-failed"}, {"time", wall_now()}, {"campaign", name},
                 {"detail", "cannot renew the lease: " + renewed.error().str()}}, false);
    return std::nullopt;
  }
  auto result = guarded_pass(*o.campaign);
  if (!result && lease_taken(result.error())) return RunResult{kLeaseHeld, "lost the lease: " + result.error().str()};
  if (!result) {
    print_event({{"event", "pass-failed"}, {"time", wall_now()}, {"campaign", name}, {"detail", result.error().str()}}, false);
    return std::nullopt;
  }
  if (*result) return RunResult{(*result)->exit_code, (*result)->reason};
  return std::nullopt;
}

std::optional<config::Config> load(const std::string& file) {
  auto loaded = load_config_to_supervise(file);
  if (loaded) return std::move(*loaded);
  for (const auto& e : loaded.error()) print_line(e.str());
  return std::nullopt;
}

RunResult combine(const std::vector<std::pair<std::string, RunResult>>& results) {
  if (results.size() == 1) return results.front().second;
  std::vector<int> codes;
  std::string lines;
  for (const auto& [file, r] : results) {
    codes.push_back(r.exit_code);
    lines += "\n  " + file + ": " + r.reason;
  }
  const int worst = decide::most_severe(codes);
  const auto completed = static_cast<long>(std::count(codes.begin(), codes.end(), 0));
  return {worst, std::to_string(results.size()) + " campaigns, " + std::to_string(completed) + " with exit code 0; exit " +
                     std::to_string(worst) + " (the most severe):" + lines};
}

}  // namespace loop_parts

using namespace loop_parts;

std::vector<std::string> config_files(const std::vector<std::string>& sources, std::vector<std::string>& problems) {
  std::vector<std::string> files;
  const auto add = [&files](const std::string& file) {  // each config once, however it is named
    std::error_code ec;
    const auto same = [&](const std::string& f) { return fs::equivalent(f, file, ec); };
    if (std::none_of(files.begin(), files.end(), same)) files.push_back(file);
  };
  for (const auto& source : sources) {
    std::error_code ec;
    if (!fs::is_directory(source, ec)) {
      if (fs::exists(source, ec)) add(source);
      else problems.push_back(source + ": no such file or folder");
      continue;
    }
    std::vector<std::string> inside;
    for (fs::directory_iterator it(source, ec), end; !ec && it != end; it.increment(ec)) {
      const auto ext = it->path().extension().string();
      std::error_code type;
      if ((ext == ".yaml" || ext == ".yml") && it->is_regular_file(type)) inside.push_back(it->path().string());
    }
    if (inside.empty()) problems.push_back(source + ": a folder without *.yaml or *.yml configs directly inside it");
    std::sort(inside.begin(), inside.end());
    for (const auto& file : inside) add(file);
  }
  return files;
}

RunResult tick(const Supervise& what) {
  std::vector<std::string> problems;
  const auto files = config_files(what.sources, problems);
  const auto submits = submit_pacer(what);
  for (const auto& p : problems) std::cerr << "mlsup: " << p << "\n";
  if (files.empty()) return {kBadInput, "no config to tick"};
  const bool named = files.size() > 1;
  Clients clients;
  std::vector<std::pair<std::string, RunResult>> results(files.size());
  std::vector<std::thread> passes;  // side by side: one campaign's slow sbatch does not hold up the others
  for (std::size_t i = 0; i < files.size(); ++i) {
    passes.emplace_back([&, i] {
      results[i].first = files[i];
      const auto c = load(files[i]);
      if (!c) {
        results[i].second = {kBadInput, "the config has errors (above)"};
        return;
      }
      auto opened = open_campaign(*c, clients.get(c->slurm.backend), named, *submits);
      if (auto* r = std::get_if<RunResult>(&opened)) {
        results[i].second = r->exit_code == kLeaseHeld ? RunResult{0, "tick: nothing done, " + r->reason} : *r;
        return;
      }
      auto& o = std::get<Opened>(opened);
      auto outcome = one_pass(o);
      o.lease->release();
      results[i].second = outcome ? *outcome : RunResult{0, "tick: campaign " + c->name + " goes on"};
    });
  }
  for (auto& t : passes) t.join();
  for (const auto& p : problems) results.push_back({p, {kBadInput, "not a config"}});
  return combine(results);
}

}  // namespace mlsup::engine
