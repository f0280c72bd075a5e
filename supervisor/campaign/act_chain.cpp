// act, chain mode: the next attempt's values in next.env, the hand-over to the queued task, the
// exclusions kept on the array's queued tasks, a task's claim, and a new array when one runs out.
#include <algorithm>
#include <filesystem>

#include "campaign/actor.h"
#include "journal/atomic_file.h"
#include "render/chain.h"
#include "util/files.h"
#include "util/strings.h"

namespace mlsup::engine {
namespace fs = std::filesystem;
using nlohmann::json;

void Actor::write_chain_values(const AttemptState& a, const std::string& resume_from) {
  const std::string dir = config_.dir().chain();
  const std::string text = render::chain_values(config_, rendered(a, false, &resume_from));
  if (lease_lost_ || util::read_file(dir + "/next.env").value_or("") == text) return;  // another supervisor's now
  std::error_code ec;
  fs::create_directories(dir + "/claims", ec);
  if (auto ok = journal::write_atomically(dir + "/next.env", text, 0644); !ok)
    event(events::ChainValuesFailed{a.number, ok.error().message});
}

std::optional<std::string> Actor::patch_queued(const AttemptState& a, const slurm::Job& queued,
                                                  const std::vector<std::string>& before) {
  if (queued.state != slurm::JobState::Pending) return std::nullopt;
  const auto now = slurm::expand_hostlist(queued.excluded_nodes);
  std::vector<std::string> nodes;
  for (const auto& n : now)
    if (std::find(before.begin(), before.end(), n) == before.end()) nodes.push_back(n);
  for (const auto& n : a.exclude)
    if (std::find(nodes.begin(), nodes.end(), n) == nodes.end()) nodes.push_back(n);
  if (util::join(nodes, ",") == util::join(now, ",")) return std::nullopt;
  if (auto leased = keep_lease(kSlurmCallBound); !leased) return "not updated: " + leased.error().message;
  const auto done = edges_.slurm->set_excluded(queued.job_id, util::join(nodes, ","));
  if (!done) return "not updated: " + done.error().message;
  const auto back = edges_.slurm->jobs({queued.job_id});  // read it back
  const auto* rest = back ? queued_remainder(*back) : nullptr;
  return rest ? rest->excluded_nodes : "?";
}

util::Result<void> Actor::hand_over(const AttemptState& a, const slurm::Job& queued, const std::vector<std::string>& before) {
  write_chain_values(a, a.resume_from);
  event(events::HandedOver{.attempt = a.number,
                           .job_id = *a.job_id,
                           .resume_from = a.resume_from,
                           .exclude = a.exclude,
                           .exc_node_list = patch_queued(a, queued, before),
                           .reason = "the chain's next queued task runs it, with these values"});
  return {};
}

util::Result<void> Actor::act(const CampaignState&, const intent::ChainValues& i) {
  write_chain_values(i.attempt, i.resume_from);
  return {};
}

util::Result<void> Actor::act(const CampaignState&, const intent::PatchQueued& i) {
  if (const auto list = patch_queued(i.attempt, i.queued, i.before))
    event(events::ChainExcluded{i.attempt.number, i.queued.job_id, *list});
  return {};
}

util::Result<void> Actor::act(const CampaignState&, const intent::Claimed& i) {
  const Claim& c = i.claim;
  return fact(records::Claimed{i.attempt, c.job_id, c.task, c.how, c.resume_from},
              events::Claimed{.array_job_id = i.array, .values = c.how});
}

util::Result<void> Actor::act(const CampaignState&, const intent::ChainExhausted& i) {
  if (auto leased = keep_lease(0); !leased) return leased;
  std::error_code ec;  // a claim its task never completed
  const std::string claim = config_.dir().chain() + "/claims/" + std::to_string(i.attempt);
  fs::remove_all(claim, ec);
  fs::remove_all(claim + ".takeover", ec);  // the new chain's tasks may take a stranded claim over again
  return fact(records::ChainExhausted{i.attempt, i.array, i.new_tag},
              events::ChainExhausted{{"the chain has no task left to run this attempt: a new chain is submitted"}});
}

}  // namespace mlsup::engine
