// act, spare nodes: the next attempt handed to the job that ran the one before (its old run's steps
// killed, next.env written whole), the job's claim journaled, and a job told that nothing comes.
#include <filesystem>

#include "campaign/actor.h"
#include "journal/atomic_file.h"
#include "render/spares.h"
#include "util/files.h"
#include "util/strings.h"

namespace mlsup::engine {
namespace fs = std::filesystem;
using nlohmann::json;

void Actor::write_spare_values(const AttemptState& a, slurm::JobId job, const std::vector<std::string>& nodes) {
  const std::string dir = config_.dir().spares();
  const std::string text =
      render::spare_values(config_, rendered(a, false), job, nodes);
  if (lease_lost_ || util::read_file(dir + "/next.env").value_or("") == text) return;  // another supervisor's now
  std::error_code ec;
  fs::create_directories(dir + "/claims", ec);
  if (auto ok = journal::write_atomically(dir + "/next.env", text, 0644); !ok)
    event(events::SpareValuesFailed{a.number, job, ok.error().message});
}

util::Result<void> Actor::hand_over_in_job(const AttemptState& a, slurm::JobId job, const std::vector<std::string>& nodes) {
  if (auto leased = keep_lease(kSlurmCallBound); !leased) return leased;
  const auto killed = edges_.slurm->kill_steps(job);  // the old run's ranks, on the nodes that still answer
  write_spare_values(a, job, nodes);
  event(events::HandedOver{
      .attempt = a.number,
      .job_id = job,
      .nodes = nodes,
      .resume_from = a.resume_from,
      .exclude = a.exclude,
      .steps_killed = killed ? "yes" : killed.error().message,
      .reason = "the job runs on with a spare node: it runs this attempt itself, no new submission"});
  return {};
}

util::Result<void> Actor::act(const CampaignState&, const intent::StepClaimed& i) {
  return fact(records::StepClaimed{i.attempt, static_cast<slurm::JobId>(i.claim.job_id), i.claim.nodes},
              events::Claimed{.reason = "the job runs the attempt on these nodes"});
}

util::Result<void> Actor::act(const CampaignState&, const intent::SpareValues& i) {
  write_spare_values(i.attempt, *i.attempt.job_id, i.attempt.step_nodes);
  return {};
}

util::Result<void> Actor::act(const CampaignState&, const intent::DropSpares& i) {
  if (auto leased = keep_lease(kSlurmCallBound); !leased) return leased;
  // The tasks shrink with the nodes (a job of 65 tasks on 64 nodes, one per node, can never start).
  const auto& j = i.job;
  const int tasks = j.node_count > 0 && j.num_tasks % j.node_count == 0 ? static_cast<int>(j.num_tasks / j.node_count) * i.nodes : 0;
  if (auto done = edges_.slurm->set_node_count(j.job_id, i.nodes, tasks); !done) {
    event(events::SparesDropFailed{{i.attempt.number, i.job.job_id, done.error().message, "tried again next pass"}});
    return {};
  }
  return fact(records::SparesDropped{i.attempt.number, i.job.job_id, i.nodes},
              events::SparesDropped{
                  i.shortfall, "job " + std::to_string(i.job.job_id) + " cannot get its nodes and spares (" + i.shortfall +
                                   "): it asks for the training's " + std::to_string(i.nodes) + " now; the next job asks for "
                                   "the spares again"});
}

}  // namespace mlsup::engine
