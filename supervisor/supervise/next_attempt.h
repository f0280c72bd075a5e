#pragma once
// What the next attempt of a campaign that has run would really be submitted with, for `mlsup render`:
// the journal replayed and the submission decided by the engine's own code (reconcile.h's next_submission).
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "render/contract.h"
#include "slurm/client.h"

namespace mlsup::engine {

struct NextAttempt {
  render::Attempt attempt;          // number, tag (with the campaign id), resume point, exclusions
  long long resume_step = 0;        // the resume point's step (0: a fresh start)
  std::string script_path;          // where the engine stores the rendered script
  std::string working_dir;          // the folder sbatch runs in (the job's working folder)
  std::vector<std::string> notes;   // what the values rest on (a finished campaign, nodes not asked, journal problems)
};

// The next attempt of the campaign whose journal is under c.state_dir, rendered from template_text (template_nodes
// nodes) at wall time now; nodes answers the exclusion cap when policy.exclusion_cap is not set (nullptr: Slurm
// is not asked, and every live exclusion is kept). nullopt when the campaign has no journal with its id (never ran).
std::optional<NextAttempt> next_attempt(const config::Config& c, const std::string& template_text, int template_nodes,
                                        slurm::Client* nodes, double now);

}  // namespace mlsup::engine
