// A lifecycle verb carried out by the verb itself when no supervisor holds the campaign: the lease
// taken as `tick` takes it, the request journaled (an unexclude's lift is then journaled), and for a
// pause or a cancel the passes that carry it out (a cancel's until its job is gone).
#include <chrono>
#include <thread>

#include "decide/exit_codes.h"
#include "campaign/campaign.h"
#include "supervise/loop.h"
#include "supervise/loop_parts.h"

namespace mlsup::engine {
using namespace loop_parts;

namespace {

constexpr double kCancelPassEvery = 2;  // seconds between a cancel's passes while its job goes

// The passes a verb runs after journaling its request (each asks Slurm afresh); the campaign's
// outcome when it ended.
std::optional<RunResult> carry_on(Opened& o, Clients& clients, Verb verb, double grace) {
  if (verb == Verb::Resume || verb == Verb::Unexclude) return std::nullopt;  // the next run or tick carries it on
  clients.new_pass();
  if (verb == Verb::Pause) return one_pass(o);
  const double until = wall_now() + grace + 60;  // the grace, then the cancel's resends
  while (wall_now() < until) {
    if (auto ended = one_pass(o)) return ended;
    std::this_thread::sleep_for(std::chrono::duration<double>(kCancelPassEvery));
    clients.new_pass();
  }
  return RunResult{decide::kRuntimeFailure, "the campaign's job is still there; a later `mlsup run` or `mlsup tick` "
                                            "goes on cancelling it"};
}

}  // namespace

RunResult carry_out(const config::Config& c, const Request& r) {
  Clients clients;
  const auto submits = submit_pacer(Supervise{});
  auto opened = open_campaign(c, clients.get(c.slurm.backend), false, *submits);
  if (auto* refused = std::get_if<RunResult>(&opened)) {
    if (refused->exit_code != decide::kLeaseHeld) return *refused;
    return {decide::kLeaseHeld, refused->reason};
  }
  auto& o = std::get<Opened>(opened);
  auto taken = o.campaign->requests();
  std::optional<RunResult> outcome;
  if (!taken) outcome = RunResult{decide::kRuntimeFailure, taken.error().str()};
  else outcome = carry_on(o, clients, r.verb, static_cast<double>(c.policy.stop_grace.count()));
  o.close();
  return outcome.value_or(RunResult{decide::kCompleted, ""});
}

}  // namespace mlsup::engine
