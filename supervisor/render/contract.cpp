#include "render/contract.h"

#include <optional>

#include "util/strings.h"

namespace mlsup::render {
namespace {

struct ContractValue {
  const char* variable;  // template name
  const char* env;       // environment name
  std::string (*value)(const config::Config&, const Attempt&);
  bool per_attempt = false;  // differs from one attempt to the next
};

// The contract table: one row per value handed to the training (see the README's contract section).
const ContractValue kContract[] = {
    {"run", "MLSUP_RUN", [](const config::Config& c, const Attempt&) { return c.name; }},
    {"campaign_id", "MLSUP_CAMPAIGN_ID",
     [](const config::Config&, const Attempt& a) { return a.campaign_id.empty() ? std::string(kUnstarted) : a.campaign_id; }},
    {"attempt", "MLSUP_ATTEMPT", [](const config::Config&, const Attempt& a) { return std::to_string(a.number); }, true},
    {"state_dir", "MLSUP_STATE_DIR", [](const config::Config& c, const Attempt&) { return c.state_dir; }},
    {"checkpoint_dir", "MLSUP_CHECKPOINT_DIR", [](const config::Config& c, const Attempt&) { return c.checkpoint.dir; }},
    {"resume_from", "MLSUP_RESUME_FROM", [](const config::Config&, const Attempt& a) { return a.resume_from; }, true},
    {"kill_switch", "MLSUP_KILL_SWITCH", [](const config::Config& c, const Attempt&) { return c.switches.kill; }},
    {"save_switch", "MLSUP_SAVE_SWITCH", [](const config::Config& c, const Attempt&) { return c.switches.save; }},
    {"heartbeat_file", "MLSUP_HEARTBEAT_FILE",
     [](const config::Config& c, const Attempt& a) { return heartbeat_file(c, a.number); }, true},
    {"exclude", "MLSUP_EXCLUDE", [](const config::Config&, const Attempt& a) { return util::join(a.exclude, ","); }, true},
    {"no_retry_exit_code", "MLSUP_NO_RETRY_EXIT_CODE",
     [](const config::Config& c, const Attempt&) { return std::to_string(c.policy.no_retry_exit_code); }},
    {"signal", "MLSUP_SIGNAL", [](const config::Config& c, const Attempt&) { return c.slurm.signal; }},
    // The lead of the job's own --signal: a chain's tasks keep the one their array was submitted with.
    {"signal_lead", "MLSUP_SIGNAL_LEAD", [](const config::Config& c, const Attempt& a) { return std::to_string(signal_lead(c, a)); }},
    // At a hang: the signal that asks every rank for its stacks, and the folder they go to.
    {"stacks_signal", "MLSUP_STACKS_SIGNAL", [](const config::Config& c, const Attempt&) { return c.heartbeat.stacks_signal; }},
    {"hang_dir", "MLSUP_HANG_DIR", [](const config::Config& c, const Attempt& a) { return c.dir().hang(a.number); }, true},
    // The templates' preflight: its command (run on every node before the training) and its deadline.
    {"preflight", "MLSUP_PREFLIGHT", [](const config::Config& c, const Attempt&) { return c.preflight.command; }},
    {"preflight_deadline", "MLSUP_PREFLIGHT_DEADLINE",
     [](const config::Config& c, const Attempt&) { return std::to_string(c.preflight.deadline.count()); }},
};

std::string optional_int(const std::optional<int>& v) { return v ? std::to_string(*v) : ""; }

}  // namespace

long long signal_lead(const config::Config& config, const Attempt& attempt) {
  return attempt.signal_lead > 0 ? attempt.signal_lead : config.slurm.signal_lead.value.count();
}

std::string heartbeat_file(const config::Config& config, int attempt) {
  return config.heartbeat.dir + "/attempt-" + std::to_string(attempt);
}

std::string job_tag(const std::string& name, const std::string& campaign_id, int attempt) {
  return campaign_tag_prefix(name, campaign_id) + std::to_string(attempt);
}

std::string campaign_tag_prefix(const std::string& name, const std::string& campaign_id) {
  return "mlsup:" + name + ":" + campaign_id + ":";
}

std::optional<int> tag_attempt(const std::string& tag, const std::string& prefix) {
  if (!tag.starts_with(prefix) || tag.size() == prefix.size() || tag.size() - prefix.size() > 9) return std::nullopt;
  int n = 0;
  for (std::size_t i = prefix.size(); i < tag.size(); ++i) {
    if (tag[i] < '0' || tag[i] > '9') return std::nullopt;
    n = n * 10 + (tag[i] - '0');
  }
  return n;
}

Variables template_variables(const config::Config& config, const Attempt& attempt) {
  Variables vars;
  for (const auto& row : kContract) vars[row.variable] = row.value(config, attempt);
  const auto& s = config.slurm;
  vars["slurm.partition"] = s.partition;
  vars["slurm.nodes"] = optional_int(s.nodes);
  vars["slurm.ntasks_per_node"] = optional_int(s.ntasks_per_node);
  vars["slurm.gpus_per_node"] = optional_int(s.gpus_per_node);
  vars["slurm.cpus_per_task"] = optional_int(s.cpus_per_task);
  vars["slurm.time"] = s.time;
  vars["slurm.signal"] = s.signal;
  vars["slurm.signal_lead"] = std::to_string(signal_lead(config, attempt));
  vars["slurm.array"] = s.array;
  for (const auto& [key, value] : config.vars) vars["vars." + key] = value;
  return vars;
}

std::vector<std::pair<std::string, std::string>> contract_variables() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& row : kContract) out.emplace_back(row.variable, row.env);
  return out;
}

std::vector<std::pair<std::string, std::string>> per_attempt_variables() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& row : kContract)
    if (row.per_attempt) out.emplace_back(row.variable, row.env);
  return out;
}

std::vector<std::pair<std::string, std::string>> job_environment(const config::Config& config, const Attempt& attempt) {
  std::vector<std::pair<std::string, std::string>> env;
  for (const auto& row : kContract) env.emplace_back(row.env, row.value(config, attempt));
  std::vector<std::string> names;
  if (attempt.debug)
    for (const auto& [name, value] : config.debug_on_retry.env) names.push_back(name);
  env.emplace_back(kDebugEnvNames, util::join(names, " "));
  if (!attempt.debug) return env;
  for (auto [name, value] : config.debug_on_retry.env) {
    util::replace_all(value, "{{attempt_dir}}", config.dir().attempt(attempt.number));
    env.emplace_back(name, std::move(value));
  }
  return env;
}

}  // namespace mlsup::render
