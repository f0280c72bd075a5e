// `mlsup run`: one event loop owns the signals and the pass timer; the campaigns' passes (one at a time
// per campaign, a reload applied before the next) run on an elastic pool and post their results back:
// a few threads serve every campaign, and one more starts whenever all are busy, so that one campaign's
// slow call (a 120 s sbatch, the hang command, a probe) never delays another's pass. Each round begins
// a new pass of the shared Slurm clients: one job query serves every campaign due in it.
#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <malloc.h>
#include <memory>
#include <utility>  // Boost 1.74's asio needs std::exchange declared before it under C++23

#include <boost/asio.hpp>

#include "config/diff.h"
#include "decide/exit_codes.h"
#include "engine/loop.h"
#include "engine/loop_parts.h"
#include "util/elastic_pool.h"

namespace mlsup::engine {
namespace {

namespace asio = boost::asio;
using namespace loop_parts;
using Clock = std::chrono::steady_clock;

// One campaign under supervision.
struct Slot {
  std::string file;
  std::optional<config::Config> config;       // as last loaded
  Opened opened;                               // its lease and engine, once taken
  std::optional<config::Config> reloaded;      // a config read on SIGHUP, applied before its next pass
  std::optional<RunResult> result;             // its supervision is over (ended, a bad config, ...)
  std::string held;                            // why it waits: another supervisor holds it ("" = not waiting)
  bool in_flight = false;
  bool passed = false;                         // it made a pass since it was opened
  bool leaving = false;                        // no longer named by the sources (SIGHUP): let go
  Clock::time_point next{};                    // its next pass, not before

  bool running() const { return opened.campaign && !result; }
  bool fresh() const { return !opened.campaign && !result && held.empty(); }
};

class Supervisor {
 public:
  explicit Supervisor(const Supervise& what)
      : sources_(what.sources), submits_(submit_pacer(what)), signals_(io_, SIGINT, SIGTERM, SIGHUP), timer_(io_) {
    signals_.add(SIGUSR1);
  }

  RunResult run() {
    // The allocator's arena per thread would keep what each campaign's first pass read (its whole
    // journal) long after: two arenas, trimmed after first passes.
    ::mallopt(M_ARENA_MAX, 2);
    join_sources();
    wait_for_signal();
    asio::post(io_, [this] { round(); });
    io_.run();
    pool_.reset();  // waits for nothing: every pass has posted its result (each holds the io loop's work)
    return outcome();
  }

 private:
  // Reads the sources: new configs join, configs no longer named are let go, the others reloaded.
  void join_sources() {
    std::vector<std::string> problems;
    const auto files = config_files(sources_, problems);
    for (const auto& p : problems) print_line("mlsup: " + p);
    for (auto& s : slots_)
      if (std::find(files.begin(), files.end(), s->file) == files.end()) let_go(*s);
    for (const auto& file : files) {
      auto it = std::find_if(slots_.begin(), slots_.end(), [&](const auto& s) { return s->file == file && !s->leaving; });
      if (it == slots_.end()) add(file);
      else reload(**it);
    }
    unreadable_.clear();
    for (const auto& p : problems) unreadable_.push_back({p, {decide::kBadInput, "not a config"}});
  }

  void add(const std::string& file) {
    auto s = std::make_unique<Slot>();
    s->file = file;
    s->config = load(file);
    if (!s->config) s->result = RunResult{decide::kBadInput, "the config has errors (above)"};
    slots_.push_back(std::move(s));
  }

  // SIGHUP for a campaign already named: the config again; a bad one keeps the one in use.
  void reload(Slot& s) {
    auto c = load(s.file);
    if (!c) {
      print_line("mlsup: SIGHUP: " + s.file + ": the config has errors; keeping the one in use");
      return;
    }
    if (const auto why = s.config ? config::reload_refusal(config::changed_keys(*s.config, *c)) : std::nullopt) {
      print_line("mlsup: SIGHUP: " + s.file + ": " + *why + "; keeping the config in use");
      return;
    }
    s.config = c;
    if (s.result && s.result->exit_code == decide::kBadInput) s.result.reset();  // fixed: it joins
    if (s.opened.campaign) s.reloaded = std::move(c);
  }

  // A campaign no longer named: its lease is released after the pass in flight; its jobs go on.
  void let_go(Slot& s) {
    s.leaving = true;
    print_line("mlsup: " + s.file + " is no longer named: let go (its jobs go on)");
    if (!s.in_flight) release(s);
  }

  void release(Slot& s) {
    if (s.opened.lease) s.opened.lease->release();
    s.opened = {};
  }

  // One round: a new pass of the Slurm clients, then every campaign whose poll interval is over.
  void round() {
    if (!stop_signal_.empty()) return;
    clients_.new_pass();
    ++rounds_;
    const auto now = Clock::now();
    for (auto& s : slots_)
      if (!s->result && !s->in_flight && !s->leaving && now >= s->next) start(*s, now);
    if (done()) return finish();
    timer_.expires_after(period());
    timer_.async_wait([this](const boost::system::error_code& ec) {
      if (!ec) round();
    });
  }

  // The rounds' period: the shortest poll interval of the campaigns supervised.
  std::chrono::milliseconds period() const {
    std::chrono::milliseconds p{500};
    bool any = false;
    for (const auto& s : slots_)
      if (s->config && !s->result && !s->leaving) {
        p = any ? std::min(p, s->config->poll_interval) : s->config->poll_interval;
        any = true;
      }
    return std::max(p, std::chrono::milliseconds(50));
  }

  void start(Slot& s, Clock::time_point now) {
    s.in_flight = true;
    s.next = now + s.config->poll_interval;
    const bool named = slots_.size() > 1;
    auto reloaded = std::exchange(s.reloaded, std::nullopt);
    // The config is copied for the worker only when it opens the campaign (not on every pass).
    auto to_open = s.opened.campaign ? std::nullopt : s.config;
    // The io loop runs until the pass has posted its result, also after a stop signal.
    auto work = asio::make_work_guard(io_);
    pool_->post([this, &s, named, to_open = std::move(to_open), reloaded = std::move(reloaded), work = std::move(work)]() mutable {
      std::optional<RunResult> r;
      std::string held;
      if (reloaded && s.opened.campaign) s.opened.campaign->reload(std::move(*reloaded));
      if (to_open) {
        auto opened = open_campaign(*to_open, clients_.get(to_open->slurm.backend), named, *submits_);
        if (auto* o = std::get_if<Opened>(&opened)) s.opened = std::move(*o);
        else if (std::get<RunResult>(opened).exit_code == decide::kLeaseHeld) held = std::get<RunResult>(opened).reason;
        else r = std::get<RunResult>(opened);
      }
      const auto began = Clock::now();
      if (s.opened.campaign) r = one_pass(s.opened);
      const double took = std::chrono::duration<double>(Clock::now() - began).count();
      asio::post(io_, [this, &s, r, held, took] {
        ++passes_;
        pass_seconds_ += took;
        longest_pass_ = std::max(longest_pass_, took);
        pass_done(s, r, held);
      });
      work.reset();
    });
  }

  void pass_done(Slot& s, const std::optional<RunResult>& r, const std::string& held) {
    s.in_flight = false;
    if (!s.passed && s.opened.campaign) {  // its journal was read: give back what reading it took
      s.passed = true;
      ::malloc_trim(0);
    }
    if (!held.empty() && s.held.empty() && slots_.size() > 1) print_line("mlsup: " + s.file + ": waiting: " + held);
    s.held = held;
    if (!held.empty()) s.next = Clock::now() + std::chrono::seconds(5);  // asked again now and then
    if (r) {
      s.result = r;
      if (slots_.size() > 1) print_line("mlsup: " + s.file + ": exit " + std::to_string(r->exit_code) + ": " + r->reason);
      release(s);
    }
    if (s.leaving) release(s);
    if (!stop_signal_.empty() && nothing_in_flight()) return finish();
    if (done()) finish();
  }

  bool nothing_in_flight() const {
    return std::none_of(slots_.begin(), slots_.end(), [](const auto& s) { return s->in_flight; });
  }

  // Nothing is left to supervise: every campaign ended, or waits on another supervisor.
  bool done() const {
    return nothing_in_flight() && std::none_of(slots_.begin(), slots_.end(), [](const auto& s) {
             return !s->leaving && (s->running() || s->fresh());
           });
  }

  void finish() {
    signals_.cancel();
    timer_.cancel();
  }

  void wait_for_signal() {
    signals_.async_wait([this](const boost::system::error_code& ec, int sig) {
      if (ec) return;
      if (sig == SIGHUP || sig == SIGUSR1) {
        if (sig == SIGHUP) join_sources();
        else print_line("mlsup: stats: " + stats());
        wait_for_signal();
        return;
      }
      const bool again = !stop_signal_.empty();
      stop_signal_ = sig == SIGTERM ? "SIGTERM" : "SIGINT";
      timer_.cancel();
      if (nothing_in_flight()) return finish();
      const auto n = std::count_if(slots_.begin(), slots_.end(), [](const auto& s) { return s->in_flight; });
      print_line("mlsup: " + stop_signal_ + ": " + (again ? "still " : "") + "waiting for " + std::to_string(n) +
                 " campaign pass(es) under way to end (an sbatch takes at most 2m); SIGKILL leaves at once, and "
                 "the next run adopts what they submitted");
      wait_for_signal();
    });
  }

  // Every campaign's result: its own; still running at a stop signal: detached; waiting: held.
  RunResult outcome() {
    std::vector<std::pair<std::string, RunResult>> results;
    for (auto& s : slots_) {
      if (s->leaving) continue;
      if (s->result) results.push_back({s->file, *s->result});
      else if (!s->held.empty()) results.push_back({s->file, {decide::kLeaseHeld, s->held}});
      else results.push_back({s->file, {decide::kDetached, "stopped supervising on " + stop_signal_ +
                                                               "; the campaign's jobs keep running and `mlsup run` adopts them"}});
      release(*s);
    }
    results.insert(results.end(), unreadable_.begin(), unreadable_.end());
    if (results.empty()) return {decide::kBadInput, "no config to supervise"};
    if (results.size() > 1) print_line("mlsup: stats: " + stats());
    return combine(results);
  }

  std::vector<std::string> sources_;
  Clients clients_;  // before the slots: their engines use it until they are gone
  std::unique_ptr<util::Pacer> submits_;  // likewise
  std::unique_ptr<util::ElasticPool> pool_ = std::make_unique<util::ElasticPool>(2);  // the passes
  std::vector<std::unique_ptr<Slot>> slots_;
  std::vector<std::pair<std::string, RunResult>> unreadable_;  // sources that name no config
  asio::io_context io_;
  asio::signal_set signals_;
  asio::steady_timer timer_;
  // "R passes, Q Slurm job queries, C campaign passes (T ms in all, longest L ms)": SIGUSR1 prints it.
  std::string stats() {
    const auto ms = [](double s) { return std::to_string(static_cast<long long>(s * 1000 + 0.5)); };
    return std::to_string(rounds_) + " passes, " + std::to_string(clients_.loads()) + " Slurm job queries, " +
           std::to_string(passes_) + " campaign passes (" + ms(pass_seconds_) + " ms in all, longest " + ms(longest_pass_) + " ms)";
  }

  std::string stop_signal_;
  long long rounds_ = 0;       // passes begun
  long long passes_ = 0;       // campaign passes done
  double pass_seconds_ = 0;    // their time, in all
  double longest_pass_ = 0;
};

}  // namespace

RunResult run(const Supervise& what) { return Supervisor(what).run(); }

}  // namespace mlsup::engine
