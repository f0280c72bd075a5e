// `mlsup run`: one event loop owns the signals and the pass timer; the campaigns' passes (one at a time
// per campaign, a reload applied before the next) run on an elastic pool and post their results back:
// a few threads serve every campaign, and one more starts whenever all are busy, so that one campaign's
// slow call (a 120 s sbatch, the hang command, a probe) never delays another's pass. Each round begins
// a new pass of the shared Slurm clients: one job query serves every campaign due in it. An end record
// landing in a campaign's ends/ (edges/dir_watch.h) begins a round at once.
#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <malloc.h>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>  // Boost 1.74's asio needs std::exchange declared before it under C++23

#include <boost/asio.hpp>

#include "config/campaign_set.h"
#include "config/diff.h"
#include "decide/exit_codes.h"
#include "supervise/loop.h"
#include "supervise/loop_parts.h"
#include "supervise/set_runs.h"
#include "edges/dir_watch.h"
#include "edges/metrics_server.h"
#include "edges/elastic_pool.h"
#include "edges/mailbox.h"

namespace mlsup::engine {
namespace {

namespace asio = boost::asio;
using namespace loop_parts;
using Clock = std::chrono::steady_clock;

// After a job's script wrote its end record (ends/), the campaign passes every kQuickLook until a pass
// sees the ending in Slurm, for at most kQuickWindow; then its own pace again.
constexpr auto kQuickLook = std::chrono::milliseconds(50);
constexpr auto kQuickWindow = std::chrono::milliseconds(1500);

// A campaign whose job only waits in the queue passes again pending_poll_interval after its pass
// (next: the pass's start plus poll_interval), rounded up to a multiple of it on the steady clock: such
// campaigns share their rounds, and the rounds between ask Slurm nothing.
Clock::time_point queued_next(Clock::time_point next, const config::Config& c) {
  const auto every = std::chrono::duration_cast<Clock::duration>(std::max(c.pending_poll_interval, c.poll_interval));
  const auto earliest = (next - c.poll_interval + every).time_since_epoch();
  return Clock::time_point(((earliest + every - Clock::duration(1)) / every) * every);
}

// The steady clock's time seconds from now.
Clock::time_point in_seconds(double seconds) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

// One campaign under supervision.
struct Slot {
  std::string file;
  std::optional<config::Config> config;       // as last loaded
  Opened opened;                               // its lease and engine, once taken
  std::optional<config::Config> reloaded;      // a config read on SIGHUP, applied before its next pass
  std::optional<RunResult> result;             // its supervision is over (ended, a bad config, ...)
  std::string held;                            // why it waits: another supervisor holds it ("" = not waiting)
  std::string gated;                           // why its set's gate holds it back ("" = not held back)
  bool in_flight = false;
  bool watch_tried = false;                    // its ends/ folder watched (or found unwatchable)
  bool watched = false;                        // and the watch was set: an end record landing tells
  Clock::time_point quiet_until{};             // its job runs and nothing cheaper moved: Slurm's last answer serves until then
  int last_ended = 0;                          // its newest ended attempt, as its last pass saw it
  Clock::time_point quick_until{};             // an end record landed: quick passes until then
  bool passed = false;                         // it made a pass since it was opened
  bool leaving = false;                        // no longer named by the sources (SIGHUP): let go
  Clock::time_point next{};                    // its next pass, not before

  bool running() const { return opened.campaign && !result; }
  bool fresh() const { return !opened.campaign && !result && held.empty(); }
};

class Supervisor {
 public:
  explicit Supervisor(const Supervise& what)
      : sources_(what.sources), metrics_(what.metrics), standby_(what.standby), submits_(submit_pacer(what)), signals_(io_, SIGINT, SIGTERM, SIGHUP), timer_(io_) {
    signals_.add(SIGUSR1);
  }

  RunResult run() {
    // The allocator's arena per thread would keep what each campaign's first pass read (its whole
    // journal) long after: two arenas, trimmed after first passes.
    ::mallopt(M_ARENA_MAX, 2);
    if (auto failed = serve_metrics()) return *failed;
    join_sources();
    wait_for_signal();
    ends_ = std::make_unique<edges::DirWatch>(io_, [this](const std::string& file, const std::string&) { landed(file); });
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
    // A pass under way (the first one opens the campaign with the config it was started with) takes it
    // at its next pass; in_flight first: the worker owns s.opened meanwhile.
    if (s.in_flight || s.opened.campaign) s.reloaded = std::move(c);
  }

  // A campaign no longer named: its lease is released after the pass in flight; its jobs go on.
  void let_go(Slot& s) {
    s.leaving = true;
    print_line("mlsup: " + s.file + " is no longer named: let go (its jobs go on)");
    if (!s.in_flight) release(s);
  }

  void release(Slot& s) {
    if (ends_ && s.watch_tried) ends_->forget(s.file);
    s.watch_tried = s.watched = false;
    s.quiet_until = {};
    s.opened.close();
    s.opened = {};
  }

  // One round: every campaign whose poll interval is over, on a new pass of the Slurm clients unless
  // each of them may go on Slurm's last answer (quiet()).
  void round() {
    if (!stop_signal_.empty() || finished_) return;
    ++rounds_;
    expose();
    const auto now = Clock::now();
    std::map<std::string, std::map<std::string, GateDecision>> gates;  // by set file, read once a round when asked
    bool fresh = false;
    for (auto& s : slots_)
      if (!s->result && !s->in_flight && !s->leaving && now >= s->next && !held_back(*s, gates, now)) {
        fresh = fresh || !quiet(*s, now);
        start(*s, now);
      }
    if (fresh) {
      clients_.new_pass();
      asked_at_ = now;
    }
    pool_->post_all(std::exchange(starting_, {}));  // the round's passes at once: a few wake-ups, not one each
    if (done()) return finish();
    timer_.expires_after(period());
    timer_.async_wait([this](const boost::system::error_code& ec) {
      if (!ec) round();
    });
  }

  // True when s is a run of a set that its set's gate holds back (a blocked one gets its result);
  // gates: the gates read this round, by set file.
  bool held_back(Slot& s, std::map<std::string, std::map<std::string, GateDecision>>& gates, Clock::time_point now) {
    if (s.opened.campaign || !s.config || s.config->set_file.empty()) return false;
    const auto& file = s.config->set_file;
    if (!gates.contains(file)) {
      std::set<std::string> opened;  // begun here, whatever their journals say yet
      for (const auto& o : slots_)
        if (o->config && o->config->set_file == file && (o->opened.campaign || o->in_flight)) opened.insert(o->config->set_run);
      const auto set = config::load_set_file(file, {.template_file = false});
      gates[file] = set ? set_gates(*set, opened) : std::map<std::string, GateDecision>{};
    }
    const auto it = gates[file].find(s.config->set_run);
    if (it == gates[file].end() || it->second.gate == Gate::Start || it->second.gate == Gate::Started) {
      s.gated.clear();
      return false;
    }
    if (it->second.gate == Gate::Blocked) {
      s.result = RunResult{it->second.exit_code, "blocked: " + it->second.reason};
      print_line("mlsup: " + s.file + ": blocked: " + it->second.reason);
      return true;
    }
    if (s.gated != it->second.reason) print_line("mlsup: " + s.file + ": waiting: " + it->second.reason);
    s.gated = it->second.reason;
    s.next = now + s.config->poll_interval;
    return true;
  }

  // An end record landed in the ends/ folder of the campaign of file (its job's script wrote how it
  // ended; on SIGTERM twice, the second as the script exits): a pass at once, with a fresh job query,
  // and quick ones after it until one sees the ending.
  void landed(const std::string& file) {
    if (!stop_signal_.empty()) return;
    const auto now = Clock::now();
    bool any = false;
    for (auto& s : slots_)
      if (s->file == file && s->watch_tried && !s->result && !s->leaving) {  // not s->opened: a first pass may be filling it
        s->quick_until = now + kQuickWindow;
        s->next = now;
        any = true;
      }
    if (any) round();
  }

  // Watches the ends/ folder of a campaign just opened (once; a folder that cannot be watched is
  // found by the pace alone).
  void watch_ends(Slot& s) {
    s.watch_tried = true;
    s.watched = ends_ && s.config && ends_->watch(s.file, s.config->dir().ends());
  }

  // True when s's pass may go on Slurm's last answer: its job runs, nothing cheaper moved since its last
  // pass (Campaign::quiet_for), its end record would tell, and the answer is younger than its
  // running_poll_interval.
  bool quiet(const Slot& s, Clock::time_point now) const {
    if (!s.opened.campaign || !s.watched || now >= s.quiet_until || now < s.quick_until) return false;
    return now - asked_at_ < s.config->running_poll_interval;
  }

  // The rounds' period: the shortest poll interval of the campaigns supervised (kQuickLook while one
  // looks quickly for an ending).
  std::chrono::milliseconds period() const {
    std::chrono::milliseconds p{500};
    bool any = false;
    const auto now = Clock::now();
    for (const auto& s : slots_)
      if (!s->result && !s->leaving && now < s->quick_until) return kQuickLook;
    for (const auto& s : slots_)
      if (s->config && !s->result && !s->leaving) {
        p = any ? std::min(p, s->config->poll_interval) : s->config->poll_interval;
        any = true;
      }
    return std::max(p, std::chrono::milliseconds(50));
  }

  void start(Slot& s, Clock::time_point now) {
    s.in_flight = true;
    s.next = now + (now < s.quick_until ? std::chrono::duration_cast<Clock::duration>(kQuickLook) : s.config->poll_interval);
    const bool named = slots_.size() > 1;
    auto reloaded = std::exchange(s.reloaded, std::nullopt);
    // The config is copied for the worker only when it opens the campaign (not on every pass).
    auto to_open = s.opened.campaign ? std::nullopt : s.config;
    // The io loop runs until the pass's result is in, also after a stop signal.
    auto work = asio::make_work_guard(io_);
    starting_.push_back([this, &s, named, to_open = std::move(to_open), reloaded = std::move(reloaded), work = std::move(work)]() mutable {
      std::optional<RunResult> r;
      std::string held;
      if (reloaded && s.opened.campaign) s.opened.campaign->reload(std::move(*reloaded));
      if (to_open) {
        auto opened = open_campaign(*to_open, clients_.get(to_open->slurm.backend), named, *submits_, SubmitTurns::Reserve);
        if (auto* o = std::get_if<Opened>(&opened)) s.opened = std::move(*o);
        else if (std::get<RunResult>(opened).exit_code == decide::kLeaseHeld) held = std::get<RunResult>(opened).reason;
        else r = std::get<RunResult>(opened);
      }
      const auto began = Clock::now();
      if (s.opened.campaign) r = one_pass(s.opened);
      const double took = std::chrono::duration<double>(Clock::now() - began).count();
      results_.put([this, &s, r, held, took, work = std::move(work)] {  // the work held until the result is in
        ++passes_;
        pass_seconds_ += took;
        if (s.opened.campaign && s.config) {
          auto& p = passes_by_[s.config->name];
          ++p.count;
          p.seconds += took;
        }
        longest_pass_ = std::max(longest_pass_, took);
        pass_done(s, r, held);
      });
    });
  }

  void pass_done(Slot& s, const std::optional<RunResult>& r, const std::string& held) {
    s.in_flight = false;
    if (s.opened.campaign) {
      const int ended = s.opened.campaign->last_ended();
      if (ended != s.last_ended) s.quick_until = {};  // this pass saw the ending: the campaign's own pace again
      s.last_ended = ended;
      if (!s.watch_tried) watch_ends(s);
      const auto quiet = s.opened.campaign->quiet_for();
      s.quiet_until = quiet ? in_seconds(*quiet) : Clock::time_point{};
      if (s.opened.campaign->queued() && Clock::now() >= s.quick_until) s.next = queued_next(s.next, *s.config);
      if (const auto turn = s.opened.campaign->submit_turn_in())  // at the queue's pace until its sbatch turn comes
        s.next = std::min(queued_next(s.next, *s.config), in_seconds(*turn));
    }
    if (!s.passed && s.opened.campaign) {  // its journal was read: give back what reading it took
      s.passed = true;
      ::malloc_trim(0);
    }
    if (!held.empty() && s.held.empty() && (slots_.size() > 1 || standby_)) print_line("mlsup: " + s.file + ": waiting: " + held);
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

  // Nothing is left to supervise: every campaign ended, or waits on another supervisor (unless standby).
  bool done() const {
    return nothing_in_flight() && std::none_of(slots_.begin(), slots_.end(), [this](const auto& s) {
             return !s->leaving && (s->running() || s->fresh() || (standby_ && !s->held.empty() && !s->result));
           });
  }

  void finish() {
    finished_ = true;
    if (ends_) ends_->close();
    signals_.cancel();
    timer_.cancel();
    if (server_) server_->close();
  }

  // --metrics-listen: the endpoint, before anything else; a RunResult when the address cannot be bound.
  std::optional<RunResult> serve_metrics() {
    if (metrics_.listen.empty() || !metrics_.text) return std::nullopt;
    const auto where = edges::parse_listen(metrics_.listen);
    if (!where) return RunResult{decide::kUsage, "--metrics-listen " + where.error().str()};
    auto server = edges::MetricsServer::listen(io_, *where);
    if (!server) return RunResult{decide::kRuntimeFailure, server.error().str()};
    server_ = std::move(*server);
    return std::nullopt;
  }

  // The configs and figures the metrics show now (on the loop).
  std::pair<std::vector<config::Config>, PassFigures> metrics_inputs() {
    std::vector<config::Config> configs;
    for (const auto& s : slots_)
      if (s->config && !s->leaving) configs.push_back(*s->config);
    return {std::move(configs), PassFigures{passes_by_, rounds_, clients_.loads(), clients_.errors()}};
  }

  // The exposition made again on the pool (it reads every campaign's journal) once metrics_.every has passed
  // since the last, then handed to the endpoint; the textfile is replaced when its text changed.
  void expose() {
    if (!metrics_.wanted() || exposing_ || Clock::now() < exposed_ + std::chrono::duration<double>(metrics_.every)) return;
    exposing_ = true;
    exposed_ = Clock::now();
    auto work = asio::make_work_guard(io_);
    pool_->post([this, in = metrics_inputs(), work = std::move(work)]() mutable {
      auto text = std::make_shared<const std::string>(metrics_.text(in.first, in.second));
      write_metrics(*text);
      results_.put([this, text, work = std::move(work)] {
        exposing_ = false;
        if (server_) server_->set_text(*text);
      });
    });
  }

  // The textfile replaced with text when it changed (one exposition at a time writes it).
  void write_metrics(const std::string& text) {
    if (metrics_.textfile.empty() || text == written_) return;
    if (write_textfile(metrics_.textfile, text)) written_ = text;
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
    if (metrics_.wanted() && !metrics_.textfile.empty()) {  // the end as the textfile keeps it
      auto in = metrics_inputs();
      write_metrics(metrics_.text(in.first, in.second));
    }
    if (results.empty()) return {decide::kBadInput, "no config to supervise"};
    if (results.size() > 1) print_line("mlsup: stats: " + stats());
    return combine(results);
  }

  std::vector<std::string> sources_;
  MetricsOut metrics_;
  bool standby_ = false;
  std::map<std::string, PassFigures::Passes> passes_by_;  // the passes' count and time, by campaign
  bool exposing_ = false;                                 // an exposition is being made on the pool
  Clock::time_point exposed_{};                           // when the last one began
  std::string written_;                                   // the textfile's text as last written
  Clients clients_;  // before the slots: their engines use it until they are gone
  std::unique_ptr<edges::Pacer> submits_;  // likewise
  // The passes; their results go to the loop together whenever the pool's queue runs empty.
  std::unique_ptr<edges::ElasticPool> pool_ = std::make_unique<edges::ElasticPool>(2, [this] { results_.flush(); });
  std::vector<std::function<void()>> starting_;  // the passes a round starts, posted together
  std::vector<std::unique_ptr<Slot>> slots_;
  std::vector<std::pair<std::string, RunResult>> unreadable_;  // sources that name no config
  asio::io_context io_;
  asio::signal_set signals_;
  asio::steady_timer timer_;
  std::unique_ptr<edges::MetricsServer> server_;  // --metrics-listen (on io_)
  std::unique_ptr<edges::DirWatch> ends_;         // the campaigns' ends/ folders (on io_)
  Clock::time_point asked_at_{};                  // the round that last began a new pass of the Slurm clients
  bool finished_ = false;                         // finish() ran: no round begins again
  edges::Mailbox results_{[this](std::function<void()> f) { asio::post(io_, std::move(f)); }};  // the passes' results, to the loop
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
