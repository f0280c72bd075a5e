// At a hang, before the job is ended: every rank's Python stacks. The helper made one file per rank in
// attempts/<N>/hang/ at startup and registered faulthandler for stacks_signal on it; mlsup marks each
// file, signals the job's steps (never the batch shell), waits until every rank dumped or stacks_wait
// passed, and judges where the ranks stopped (decide/hang_stacks.h).
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <csignal>
#include <fstream>
#include <thread>
#include <utility>

#include "campaign/actor.h"
#include "observe/rank_layout.h"
#include "util/files.h"

namespace mlsup::engine {

namespace {

constexpr std::array<std::pair<std::string_view, int>, 4> kStacksSignals = {
    {{"USR1", SIGUSR1}, {"USR2", SIGUSR2}, {"URG", SIGURG}, {"WINCH", SIGWINCH}}};

int signal_number(const std::string& name) {
  for (const auto& [n, number] : kStacksSignals)
    if (n == name) return number;
  return 0;
}

std::vector<decide::RankStacks> read_ranks(const std::vector<std::string>& files) {
  std::vector<decide::RankStacks> out;
  for (const auto& f : files) {
    auto r = decide::parse_rank_stacks(util::read_file(f).value_or(""));
    if (r.rank >= 0) out.push_back(std::move(r));
  }
  return out;
}

bool all_dumped(const std::vector<decide::RankStacks>& ranks) {
  return std::all_of(ranks.begin(), ranks.end(), [](const auto& r) { return r.dumped; });
}

}  // namespace

std::optional<decide::StacksVerdict> Actor::gather_stacks(const AttemptState& a, const slurm::Job& job) {
  const int sig = signal_number(config_.heartbeat.stacks_signal);
  const std::string folder = config_.dir().hang(a.number);
  const auto files = observe::rank_files(folder);
  if (sig == 0 || files.empty()) return std::nullopt;  // no rank registered for it: a signal could end one
  const double wait = static_cast<double>(config_.heartbeat.stacks_wait.count());
  if (!keep_lease(wait + 5)) return std::nullopt;  // another supervisor holds the campaign now
  const std::string asked = std::string(decide::kStacksAsked) + " at " + std::to_string(static_cast<long long>(edges_.now())) + " ---\n";
  for (const auto& f : files) std::ofstream(f, std::ios::app) << asked;  // what follows is this hang's
  const auto sent = edges_.slurm->signal_steps(job.job_id, sig);
  constexpr double kPoll = 0.2;
  auto ranks = read_ranks(files);
  for (long i = 0; sent && !all_dumped(ranks) && i < std::lround(wait / kPoll); ++i) {
    edges_.sleep ? edges_.sleep(kPoll) : std::this_thread::sleep_for(std::chrono::milliseconds(200));
    ranks = read_ranks(files);
  }
  auto verdict = decide::judge_stacks(ranks);
  if (!sent) verdict.why = "the signal could not be sent (" + sent.error().message + "): " + verdict.why;
  const int dumped = static_cast<int>(std::count_if(ranks.begin(), ranks.end(), [](const auto& r) { return r.dumped; }));
  std::vector<std::string> waited;
  for (const int r : verdict.waited_on) waited.push_back(std::to_string(r));
  event(events::HangStacks{a.number, job.job_id, folder, static_cast<int>(ranks.size()), dumped, verdict.groups, waited,
                           verdict.nodes, verdict.why});
  return verdict;
}

}  // namespace mlsup::engine
