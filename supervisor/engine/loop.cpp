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

namespace {

// `run`'s event loop: one owner of the io_context, the signals and the poll timer. Passes and reloads
// run on a one-thread pool and post their results back; SIGTERM/SIGINT let the pass in flight finish,
// then the loop drains (nothing is stopped mid-way).
class Supervisor {
 public:
  Supervisor(Opened& o, std::string config_file)
      : o_(o), config_file_(std::move(config_file)), signals_(io_, SIGINT, SIGTERM, SIGHUP), timer_(io_) {}

  // Runs passes until the campaign ends or a stop signal arrives; the lease is released after.
  RunResult run() {
    wait_for_signal();
    asio::post(io_, [this] { start_pass(); });
    io_.run();
    worker_.join();
    o_.lease->release();
    if (result_) return *result_;
    return {kDetached, "stopped supervising on " + stop_signal_ +
                           "; the campaign's jobs keep running and `mlsup run` adopts them"};
  }

 private:
  void schedule(std::chrono::milliseconds after) {
    timer_.expires_after(after);
    timer_.async_wait([this](const boost::system::error_code& ec) {
      if (!ec && stop_signal_.empty() && !result_) start_pass();
    });
  }

  void start_pass() {
    in_flight_ = true;
    asio::post(worker_, [this] {
      auto r = one_pass(o_);
      asio::post(io_, [this, r] { finish_pass(r); });
    });
  }

  void finish_pass(const std::optional<RunResult>& r) {
    in_flight_ = false;
    if (r) result_ = r;
    if (result_ || !stop_signal_.empty()) {
      signals_.cancel();
      timer_.cancel();
      return;
    }
    schedule(o_.campaign->config().poll_interval);
  }

  void wait_for_signal() {
    signals_.async_wait([this](const boost::system::error_code& ec, int sig) {
      if (ec) return;
      if (sig == SIGHUP) {
        reload();
        wait_for_signal();
        return;
      }
      stop_signal_ = sig == SIGTERM ? "SIGTERM" : "SIGINT";
      timer_.cancel();
      if (!in_flight_) signals_.cancel();
    });
  }

  // SIGHUP: the config file again; a bad one keeps the one in use.
  void reload() {
    auto reloaded = load_config_to_supervise(config_file_);
    if (!reloaded) {
      for (const auto& e : reloaded.error()) std::cerr << e.str() << "\n";
      std::cerr << "mlsup: SIGHUP: the config has errors; keeping the one in use\n";
      return;
    }
    asio::post(worker_, [this, c = std::move(*reloaded)]() mutable { o_.campaign->reload(std::move(c)); });
  }

  Opened& o_;
  std::string config_file_;
  asio::io_context io_;
  asio::thread_pool worker_{1};  // passes, reloads: every blocking call happens here, one at a time
  asio::signal_set signals_;
  asio::steady_timer timer_;
  std::optional<RunResult> result_;
  bool in_flight_ = false;
  std::string stop_signal_;
};

}  // namespace

RunResult run(const config::Config& initial) {
  auto opened = open_campaign(initial);
  if (auto* r = std::get_if<RunResult>(&opened)) return *r;
  return Supervisor(std::get<Opened>(opened), initial.source_file).run();
}

}  // namespace mlsup::engine
