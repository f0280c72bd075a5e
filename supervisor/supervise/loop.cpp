#include "supervise/loop.h"
#include "supervise/loop_parts.h"
#include "events/kinds.h"
#include "events/outside.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <pthread.h>
#include <set>
#include <sys/stat.h>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <variant>

#include "config/campaign_set.h"
#include "config/load.h"
#include "journal/atomic_file.h"
#include "decide/exit_codes.h"
#include "campaign/campaign.h"
#include "supervise/console.h"
#include "supervise/set_runs.h"
#include "campaign/template_snapshot.h"
#include "journal/lease.h"
#include "slurm/client.h"
#include "slurm/node_dump.h"
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

}  // namespace loop_parts

Clocks clocks_now() { return {loop_parts::wall_now(), loop_parts::mono_now(), loop_parts::clock_id()}; }

namespace loop_parts {

namespace {
long long printed = 0;  // under print_mutex
}  // namespace

void print_line(const std::string& line) {
  std::lock_guard lock(print_mutex);
  ++printed;
  std::cerr << line << std::endl;
}

long long lines_printed() {
  std::lock_guard lock(print_mutex);
  return printed;
}

void print_event(const nlohmann::json& e, bool named) { print_line(console_line(e, named)); }

namespace {

// lease_ttl, lengthened to five polls when they are longer (a renewal happens only at a pass).
double lease_ttl(const config::Config& c) {
  return std::max(std::chrono::duration<double>(c.lease_ttl).count(), 5.0 * std::chrono::duration<double>(c.poll_interval).count());
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

std::map<std::string, long long> Clients::errors() {
  std::map<std::string, long long> out;
  for (int k = 0; k <= static_cast<int>(slurm::ErrorKind::Other); ++k)
    out[std::string(slurm::error_kind_name(static_cast<slurm::ErrorKind>(k)))] = 0;
  std::lock_guard lock(mutex_);
  for (auto& [name, c] : by_backend_)
    if (c.shared)
      for (const auto& [kind, n] : c.shared->errors()) out[std::string(slurm::error_kind_name(kind))] += n;
  return out;
}

void Clients::new_pass() {
  std::lock_guard lock(mutex_);
  for (auto& [name, c] : by_backend_)
    if (c.shared) c.shared->new_pass();
}

bool write_textfile(const std::string& path, const std::string& text) {
  if (auto ok = journal::write_atomically(path, text, 0644, journal::Sync::None); !ok) {
    print_line("mlsup: metrics: " + ok.error().str());
    return false;
  }
  return true;
}

std::unique_ptr<edges::Pacer> submit_pacer(const Supervise& what) {
  return std::make_unique<edges::Pacer>(what.submit_rate, what.submit_burst, mono_now,
                                       [](double s) { std::this_thread::sleep_for(std::chrono::duration<double>(s)); });
}

void Opened::close() {
  if (campaign) campaign->flush();
  if (lease) lease->release();
}

std::variant<Opened, RunResult> open_campaign(const config::Config& config, slurm::Client* client, bool named,
                                              edges::Pacer& submits, SubmitTurns turns) {
  if (!client) return RunResult{kBadInput, "slurm.backend " + config.slurm.backend + " is not one mlsup knows"};
  std::error_code ec;
  fs::create_directories(config.state_dir, ec);
  if (ec) return RunResult{kRuntimeFailure, "cannot create the state directory " + config.state_dir + ": " + ec.message()};
  auto lease = journal::Lease::acquire(config.dir().lease(), journal::current_identity(), wall_now(),
                                       lease_ttl(config));
  if (!lease) {
    const bool held = lease.error().kind == util::ErrorKind::Held || lease.error().kind == util::ErrorKind::Busy;
    return RunResult{held ? kLeaseHeld : kRuntimeFailure, lease.error().str()};
  }
  Opened o;
  o.lease = std::make_unique<journal::Lease>(std::move(*lease));
  journal::Lease* held = o.lease.get();
  Edges edges{client, wall_now, [named](const nlohmann::json& e) { print_event(e, named); }, slurm::unresponsive_nodes};
  edges.node_dump = slurm::run_node_dump;
  edges.mono = mono_now;
  edges.clock_id = clock_id();
  edges.keep_lease = [held](double seconds) { return held->keep_for(wall_now(), seconds); };
  edges.epoch = held->info().epoch;
  edges.pace_submit = [&submits] { return submits.wait(); };
  if (turns == SubmitTurns::Reserve) edges.reserve_submit = [&submits] { return submits.reserve(); };
  edges.server_now = [path = config.dir().lease()] { return journal::file_server_time(path); };
  auto campaign = Campaign::open(config, std::move(edges));
  if (!campaign) {
    o.lease->release();
    return RunResult{campaign.error().kind == util::ErrorKind::Config ? kBadInput : kRuntimeFailure, campaign.error().str()};
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
    print_event(events::line(events::PassFailed{"cannot renew the lease: " + renewed.error().str()}, wall_now(), name),
                false);
    return std::nullopt;
  }
  auto result = guarded_pass(*o.campaign);
  if (!result && lease_taken(result.error())) return RunResult{kLeaseHeld, "lost the lease: " + result.error().str()};
  if (!result) {
    print_event(events::line(events::PassFailed{result.error().str()}, wall_now(), name), false);
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
  const bool quiet = std::all_of(results.begin(), results.end(), [](const auto& r) { return r.second.quiet; });
  return {worst,
          std::to_string(results.size()) + " campaigns, " + std::to_string(completed) + " with exit code 0; exit " +
              std::to_string(worst) + " (the most severe):" + lines,
          quiet};
}

}  // namespace loop_parts

using namespace loop_parts;

namespace {

// files with each campaign set among them replaced by its runs, as SET:RUN (a set with errors stays,
// so that loading it tells them).
std::vector<std::string> set_runs_named(const std::vector<std::string>& files) {
  std::vector<std::string> out;
  const auto add = [&out](const std::string& unit) {
    if (std::find(out.begin(), out.end(), unit) == out.end()) out.push_back(unit);
  };
  for (const auto& file : files) {
    if (!config::is_set_file(file)) {
      add(file);
      continue;
    }
    const auto set = config::load_set_file(file, {.template_file = false});
    if (!set) add(file);
    else
      for (const auto& r : set->runs) add(file + ":" + r.name);
  }
  return out;
}

}  // namespace

std::vector<std::string> config_files(const std::vector<std::string>& sources, std::vector<std::string>& problems) {
  std::vector<std::string> files;
  std::set<std::pair<dev_t, ino_t>> seen;  // one stat per file: 1,000 configs are not compared pairwise
  const auto add = [&files, &seen](const std::string& file) {  // each config once, however it is named
    struct stat st {};
    if (::stat(file.c_str(), &st) != 0 || seen.insert({st.st_dev, st.st_ino}).second) files.push_back(file);
  };
  for (const auto& source : sources) {
    std::error_code ec;
    if (config::split_unit(source)) {  // SET:RUN, one run of a set
      files.push_back(source);
      continue;
    }
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
  return set_runs_named(files);
}

namespace {

// The gates of every set the units name, by set file, then run (a set that does not load has none:
// loading its run tells why).
std::map<std::string, std::map<std::string, GateDecision>> gates_of(const std::vector<std::string>& units) {
  std::map<std::string, std::map<std::string, GateDecision>> out;
  for (const auto& unit : units) {
    const auto split = config::split_unit(unit);
    if (!split || out.contains(split->first)) continue;
    if (const auto set = config::load_set_file(split->first, {.template_file = false})) out[split->first] = set_gates(*set);
  }
  return out;
}

// A run its set's gate holds back, as tick's result for it; nullopt when it may pass.
std::optional<RunResult> held_back(const config::Config& c,
                                   const std::map<std::string, std::map<std::string, GateDecision>>& gates) {
  if (c.set_file.empty() || !gates.contains(c.set_file)) return std::nullopt;
  const auto& runs = gates.at(c.set_file);
  const auto it = runs.find(c.set_run);
  if (it == runs.end()) return std::nullopt;
  const GateDecision& d = it->second;
  if (d.gate == Gate::Wait) return RunResult{0, "tick: waiting: " + d.reason, true};
  if (d.gate == Gate::Blocked) return RunResult{d.exit_code, "blocked: " + d.reason, true};
  return std::nullopt;
}

// One campaign's tick: its gate, its lease, one pass. waited: its set's gate held it back for now.
RunResult tick_one(const std::string& file, const std::map<std::string, std::map<std::string, GateDecision>>& gates,
                   Clients& clients, bool named, edges::Pacer& submits, bool& waited) {
  const auto c = load(file);
  if (!c) return {kBadInput, "the config has errors (above)"};
  if (auto r = held_back(*c, gates)) {
    waited = r->quiet && r->exit_code == 0;
    return *r;
  }
  const auto [phase, code] = journal_phase(*c);
  auto opened = open_campaign(*c, clients.get(c->slurm.backend), named, submits);
  if (auto* r = std::get_if<RunResult>(&opened))
    return r->exit_code == kLeaseHeld ? RunResult{0, "tick: nothing done, " + r->reason, true} : *r;
  auto& o = std::get<Opened>(opened);
  auto outcome = one_pass(o);
  o.close();
  if (!outcome) return {0, "tick: campaign " + c->name + " goes on", true};
  const bool ended_before = (phase == RunPhase::Completed || phase == RunPhase::Ended) && outcome->exit_code == code;
  return {outcome->exit_code, outcome->reason, ended_before};  // an end told when it happened, not every tick after
}

// The tick's metrics, in the textfile: every campaign's view and the time of its pass.
void tick_metrics(const MetricsOut& m, const std::vector<std::string>& files, const std::vector<double>& took, Clients& clients) {
  PassFigures f{.rounds = 1, .slurm_queries = clients.loads(), .slurm_errors = clients.errors()};
  std::vector<config::Config> configs;
  for (std::size_t i = 0; i < files.size(); ++i)
    if (auto c = config::load_config_file(files[i])) {
      f.by_campaign[c->name] = {1, took[i]};
      configs.push_back(std::move(*c));
    }
  write_textfile(m.textfile, m.text(configs, f));
}

// SIGINT and SIGTERM during a tick: the passes under way end (an sbatch in flight is waited for and
// journaled), none starts after. Blocked in every thread of the tick and taken by one of its own.
class TickSignals {
 public:
  TickSignals() {
    sigemptyset(&set_);
    sigaddset(&set_, SIGINT);
    sigaddset(&set_, SIGTERM);
    ::pthread_sigmask(SIG_BLOCK, &set_, &old_);
    waiter_ = std::thread([this] { wait(); });
  }
  ~TickSignals() {
    done_ = true;
    waiter_.join();
    ::pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  // The signal that asked the tick to stop ("" while none did).
  std::string stopped() const {
    std::lock_guard lock(mutex_);
    return stopped_;
  }

 private:
  void wait() {
    const timespec every{0, 100'000'000};
    while (!done_) {
      const int sig = ::sigtimedwait(&set_, nullptr, &every);
      if (sig != SIGINT && sig != SIGTERM) continue;
      std::lock_guard lock(mutex_);
      stopped_ = sig == SIGINT ? "SIGINT" : "SIGTERM";
      print_line("mlsup: " + stopped_ + ": the passes under way end first (an sbatch takes at most 2m); no other "
                 "campaign is looked at; SIGKILL leaves at once, and the next run or tick adopts what they submitted");
    }
  }

  sigset_t set_{}, old_{};
  std::atomic<bool> done_ = false;
  mutable std::mutex mutex_;
  std::string stopped_;
  std::thread waiter_;
};

// Campaign passes a tick runs side by side at most (one campaign's slow sbatch does not hold up the others).
constexpr std::size_t kTickThreads = 16;

}  // namespace

RunResult tick(const Supervise& what) {
  std::vector<std::string> problems;
  const auto files = config_files(what.sources, problems);
  const auto submits = submit_pacer(what);
  for (const auto& p : problems) std::cerr << "mlsup: " << p << "\n";
  if (files.empty()) return {kBadInput, "no config to tick"};
  const bool named = files.size() > 1;
  const long long printed_before = lines_printed();
  auto gates = gates_of(files);  // decided before any pass starts a run, and again after each round
  Clients clients;
  std::vector<std::pair<std::string, RunResult>> results(files.size());
  std::vector<double> took(files.size());
  std::vector<char> waited(files.size(), 0);
  TickSignals signals;
  // One round: the passes of the campaigns `which` names, side by side.
  const auto round = [&](const std::vector<std::size_t>& which) {
    std::atomic<std::size_t> next = 0;
    std::vector<std::thread> passes;
    for (std::size_t t = 0; t < std::min(which.size(), kTickThreads); ++t) {
      passes.emplace_back([&] {
        for (std::size_t k; (k = next++) < which.size();) {
          const std::size_t i = which[k];
          if (const auto sig = signals.stopped(); !sig.empty()) {
            results[i] = {files[i], {decide::kDetached, "tick stopped on " + sig + " before this campaign's pass"}};
            continue;
          }
          const double began = mono_now();
          bool held = false;
          results[i] = {files[i], tick_one(files[i], gates, clients, named, *submits, held)};
          waited[i] = held;
          took[i] += mono_now() - began;
        }
      });
    }
    for (auto& t : passes) t.join();
  };
  std::vector<std::size_t> which(files.size());
  for (std::size_t i = 0; i < files.size(); ++i) which[i] = i;
  round(which);
  // A run that completed (or freed a slot) in this tick opens its dependents' gates in this tick too,
  // not one cron interval later: the runs held back pass again while their gates changed.
  for (std::size_t rounds = 1; rounds < files.size() && signals.stopped().empty(); ++rounds) {
    which.clear();
    for (std::size_t i = 0; i < files.size(); ++i)
      if (waited[i]) which.push_back(i);
    auto now = gates_of(files);
    if (which.empty() || now == gates) break;
    gates = std::move(now);
    round(which);
  }
  if (what.metrics.text && !what.metrics.textfile.empty()) tick_metrics(what.metrics, files, took, clients);
  for (const auto& p : problems) results.push_back({p, {kBadInput, "not a config"}});
  auto r = combine(results);
  r.quiet = r.quiet && problems.empty() && lines_printed() == printed_before;
  if (const auto sig = signals.stopped(); !sig.empty() && r.exit_code == 0)
    r = {decide::kDetached, "tick stopped on " + sig + " once its passes under way had ended: " + r.reason, false};
  return r;
}

}  // namespace mlsup::engine
