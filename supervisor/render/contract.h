#pragma once
// The values of the contract with the training job for one attempt: the same values serve as
// template variables ({{attempt}}) and as the job's environment (MLSUP_ATTEMPT).
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "config/config.h"
#include "render/template.h"

namespace mlsup::render {

// What changes from one attempt to the next.
struct Attempt {
  int number = 1;
  std::string resume_from;           // newest complete checkpoint; "" = fresh start
  std::vector<std::string> exclude;  // nodes kept out of this attempt
  std::string tag;                   // the job's tag; "" = job_tag(name, kUnstarted, number)
  std::string campaign_id;           // the journal's campaign id, the same for every attempt; "" = kUnstarted
  long long signal_lead = 0;         // seconds: the lead sized for this attempt (slurm.signal_lead: auto); 0 = the config's
  bool debug = false;                // it runs with debug_on_retry.env (decide/debug_retry.h)
};

// The pre-timeout signal's lead for the attempt, in seconds: the one sized for it, else the config's.
long long signal_lead(const config::Config& config, const Attempt& attempt);

// The heartbeat file of one attempt.
std::string heartbeat_file(const config::Config& config, int attempt);

// The campaign id in the tag of a campaign that has not started (its journal holds no id yet).
inline constexpr const char* kUnstarted = "new";

// The one tag format, "mlsup:<name>:<campaign id>:<attempt>": every job of an attempt carries it
// (sbatch --comment), and a supervisor finds its jobs again by it.
std::string job_tag(const std::string& name, const std::string& campaign_id, int attempt);
// What every tag of the campaign begins with ("mlsup:NAME:ID:"), and the attempt a tag with that
// beginning names (nullopt for a tag of another shape).
std::string campaign_tag_prefix(const std::string& name, const std::string& campaign_id);
std::optional<int> tag_attempt(const std::string& tag, const std::string& prefix);

// Every template variable: the contract values, the Slurm settings (slurm.*) and the user's (vars.*).
Variables template_variables(const config::Config& config, const Attempt& attempt);

// Every contract value in the table's order, as (template name, environment name).
std::vector<std::pair<std::string, std::string>> contract_variables();

// The contract values that differ from one attempt to the next, as (template name, environment name).
std::vector<std::pair<std::string, std::string>> per_attempt_variables();

// The environment variable that names, space-separated, the variables debug_on_retry added ("" = none).
inline constexpr const char* kDebugEnvNames = "MLSUP_DEBUG_ENV";

// The MLSUP_* environment of the job, in a fixed order, then kDebugEnvNames and, for an attempt
// that debugs, debug_on_retry.env.
std::vector<std::pair<std::string, std::string>> job_environment(const config::Config& config, const Attempt& attempt);

}  // namespace mlsup::render
