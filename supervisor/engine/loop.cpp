#include "engine/loop.h"

#include <chrono>
#include <csignal>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <utility>  // Boost 1.74's asio needs std::exchange declared before it under C++23
#include <variant>

#include <boost/asio.hpp>

#include "config/load.h"
#include "decide/exit_codes.h"
#include "engine/campaign.h"
#include "engine/template_snapshot.h"
#include "journal/lease.h"
#include "slurm/client.h"
#include "slurm/probe.h"
#include "util/json.h"

namespace mlsup::engine {
namespace {

namespace asio = boost::asio;

using decide::kDetached;
using decide::kLeaseHeld;
using decide::kRuntimeFailure;

double wall_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

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

// Prints each event as one line on stderr: "12:00:01 submitted attempt=1 job_id=42 ...".
void print_event(const nlohmann::json& e) {
  const std::time_t t = static_cast<std::time_t>(util::number_field(e, "time"));
  char when[16];
  std::strftime(when, sizeof when, "%H:%M:%S", std::localtime(&t));
  std::string line = std::string(when) + " " + util::string_field(e, "event", "?");
  for (const char* key : {"attempt", "job_id", "class", "exit_code", "nodes", "step", "action", "delay"})
    if (e.contains(key)) line += std::string(" ") + key + "=" + util::json_text(e[key]);
  for (const char* key : {"reason", "detail"})
    if (!util::string_field(e, key).empty()) line += ": " + util::string_field(e, key);
  std::cerr << line << std::endl;
}

struct Opened {
  std::unique_ptr<slurm::Client> client;
  std::unique_ptr<Campaign> campaign;
  std::unique_ptr<journal::Lease> lease;
};

double lease_ttl(const config::Config& c) {
  return std::max(30.0, 5.0 * std::chrono::duration<double>(c.poll_interval).count());
}

// Takes the lease, then opens the Slurm client and the campaign.
std::variant<Opened, RunResult> open_campaign(const config::Config& config) {
  Opened o;
  std::error_code ec;
  std::filesystem::create_directories(config.state_dir, ec);
  if (ec) return RunResult{kRuntimeFailure, "cannot create the state directory " + config.state_dir + ": " + ec.message()};
  auto lease = journal::Lease::acquire(config.state_dir + "/lease.json", journal::current_identity(), wall_now(),
                                       lease_ttl(config));
  if (!lease) {
    const bool held = lease.error().kind == util::ErrorKind::Held || lease.error().kind == util::ErrorKind::Busy;
    return RunResult{held ? kLeaseHeld : kRuntimeFailure, lease.error().str()};
  }
  o.lease = std::make_unique<journal::Lease>(std::move(*lease));
  o.client = slurm::make_client(config.slurm.backend);
  journal::Lease* held = o.lease.get();
  Edges edges{o.client.get(), wall_now, print_event, slurm::unresponsive_nodes};
  edges.mono = mono_now;
  edges.clock_id = clock_id();
  edges.hold = [held](double seconds) { return held->hold(wall_now(), seconds); };
  edges.epoch = held->info().epoch;
  auto campaign = Campaign::open(config, std::move(edges));
  if (!campaign) {
    o.lease->release();
    return RunResult{kRuntimeFailure, campaign.error().str()};
  }
  o.campaign = std::move(*campaign);
  return o;
}

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

// Renews the lease, then runs one pass; an outcome ends the run. A lease that cannot be written (a
// full disk) skips the pass: nobody else can take it over meanwhile, and nothing is done unrenewed.
std::optional<RunResult> one_pass(Opened& o) {
  if (auto renewed = o.lease->renew(wall_now()); !renewed) {
    if (lease_taken(renewed.error())) return RunResult{kLeaseHeld, "lost the lease: " + renewed.error().message};
    print_event({{"event", "pass-failed"}, {"time", wall_now()}, {"detail", "cannot renew the lease: " + renewed.error().str()}});
    return std::nullopt;
  }
  auto result = guarded_pass(*o.campaign);
  if (!result && lease_taken(result.error())) return RunResult{kLeaseHeld, "lost the lease: " + result.error().str()};
  if (!result) {
    print_event({{"event", "pass-failed"}, {"time", wall_now()}, {"detail", result.error().str()}});
    return std::nullopt;
  }
  if (*result) return RunResult{(*result)->exit_code, (*result)->reason};
  return std::nullopt;
}

}  // namespace

RunResult tick(const config::Config& config) {
  auto opened = open_campaign(config);
  if (auto* r = std::get_if<RunResult>(&opened)) {
    if (r->exit_code == kLeaseHeld) return {0, "tick: nothing done, " + r->reason};
    return *r;
  }
  auto& o = std::get<Opened>(opened);
  auto outcome = one_pass(o);
  o.lease->release();
  if (outcome) return *outcome;
  return {0, "tick: campaign " + config.name + " goes on"};
}

RunResult run(const config::Config& initial) {
  auto opened = open_campaign(initial);
  if (auto* r = std::get_if<RunResult>(&opened)) return *r;
  auto& o = std::get<Opened>(opened);

  asio::io_context io;
  asio::thread_pool worker(1);  // passes, reloads: every blocking call happens here, one at a time
  asio::signal_set signals(io, SIGINT, SIGTERM, SIGHUP);
  asio::steady_timer timer(io);
  std::optional<RunResult> result;
  bool in_flight = false;
  std::string stop_signal;

  std::function<void()> start_pass;
  const auto schedule = [&](std::chrono::milliseconds after) {
    timer.expires_after(after);
    timer.async_wait([&](const boost::system::error_code& ec) {
      if (!ec && stop_signal.empty() && !result) start_pass();
    });
  };
  const auto finish_pass = [&](std::optional<RunResult> r) {
    in_flight = false;
    if (r) result = r;
    if (result || !stop_signal.empty()) {
      signals.cancel();
      timer.cancel();
      return;
    }
    schedule(o.campaign->config().poll_interval);
  };
  start_pass = [&] {
    in_flight = true;
    asio::post(worker, [&] {
      auto r = one_pass(o);
      asio::post(io, [&, r] { finish_pass(r); });
    });
  };
  std::function<void(const boost::system::error_code&, int)> on_signal = [&](const boost::system::error_code& ec, int sig) {
    if (ec) return;
    if (sig == SIGHUP) {
      auto reloaded = load_config_to_supervise(initial.source_file);
      if (!reloaded) {
        for (const auto& e : reloaded.error()) std::cerr << e.str() << "\n";
        std::cerr << "mlsup: SIGHUP: the config has errors; keeping the one in use\n";
      } else {
        asio::post(worker, [&, c = std::move(*reloaded)]() mutable { o.campaign->reload(std::move(c)); });
      }
      signals.async_wait(on_signal);
      return;
    }
    stop_signal = sig == SIGTERM ? "SIGTERM" : "SIGINT";
    timer.cancel();
    if (!in_flight) signals.cancel();
  };
  signals.async_wait(on_signal);
  asio::post(io, start_pass);
  io.run();
  worker.join();
  o.lease->release();
  if (result) return *result;
  return {kDetached, "stopped supervising on " + stop_signal + "; the campaign's jobs keep running and `mlsup run` adopts them"};
}

}  // namespace mlsup::engine
