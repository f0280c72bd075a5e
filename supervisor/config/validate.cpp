#include "config/validate.h"

#include <functional>
#include <optional>
#include <regex>

#include "config/duration.h"
#include "config/environment_checks.h"
#include "config/window.h"
#include "util/strings.h"

namespace mlsup::config {
namespace {

// One rule: the key it blames, and a check that returns what is wrong, if anything.
struct Rule {
  std::string_view key;
  std::function<std::optional<std::string>(const Config&)> check;
  bool template_file = false;  // looks at files (config/environment_checks.h): only with LoadOptions::template_file
};

std::string d(Seconds s) { return "\"" + format_duration(s) + "\""; }

std::optional<std::string> check_name(const Config& c) {
  static const std::regex ok("[A-Za-z0-9][A-Za-z0-9_.-]{0,63}");
  if (c.name.empty()) return "is required: a short name for this campaign, e.g. `name: llama-7b`";
  if (!std::regex_match(c.name, ok))
    return "\"" + c.name + "\" is not a usable name (1-64 of letters, digits, '.', '_', '-', starting with a letter or digit)";
  return std::nullopt;
}

std::optional<std::string> check_template(const Config& c) {
  if (c.template_path.empty()) return "is required: the sbatch template or script to submit, e.g. `template: train.sbatch`";
  return std::nullopt;
}

std::optional<std::string> at_least_poll(const Config& c, Seconds value, std::string_view what) {
  if (!c.heartbeat.enabled || value >= c.poll_interval) return std::nullopt;
  return d(value) + " is shorter than poll_interval \"" + format_interval(c.poll_interval) + "\": a " + std::string(what) +
         " can only be seen once per poll; make it longer or poll more often";
}

std::optional<std::string> check_signal_lead(const Config& c) {
  if (!c.slurm.time_limit || c.slurm.signal_lead.automatic || c.slurm.signal_lead.value < *c.slurm.time_limit) return std::nullopt;
  return d(c.slurm.signal_lead.value) + " is not shorter than the time limit \"" + c.slurm.time +
         "\": the signal would come before the job starts";
}

std::optional<std::string> check_step_regex(const Config& c) {
  // std::regex compiles by recursion: a long pattern (deep parentheses) would overflow the stack.
  if (c.checkpoint.step_regex.size() > 1000) return "is too long for a step pattern (at most 1000 characters)";
  try {
    if (std::regex(c.checkpoint.step_regex).mark_count() < 1)
      return "\"" + c.checkpoint.step_regex + "\" has no group: put the step number in parentheses, e.g. \"(\\\\d+)$\"";
  } catch (const std::regex_error& e) {
    return "\"" + c.checkpoint.step_regex + "\" is not a valid regular expression (" + e.what() + ")";
  }
  return std::nullopt;
}

// An sbatch option that would take over what mlsup controls or must know, and what to use instead.
struct Collision {
  std::string_view name;  // the long name, without "--"
  char letter;            // the short form, 0 = none
  std::string_view why;   // follows "\"<item>\" "
};

constexpr Collision kCollisions[] = {
    {"comment", 0, "would replace mlsup's job tag, by which it finds its jobs; label them with `name:` instead"},
    {"requeue", 0, "would turn Slurm's requeue back on: mlsup resubmits at once with new values (how often: policy.budgets)"},
    {"signal", 0, "would replace the pre-timeout signal: set slurm.signal and slurm.signal_lead"},
    {"exclude", 'x',
     "would replace the nodes mlsup excludes: put fixed ones in the script's #SBATCH --exclude, which mlsup keeps"},
    {"output", 'o', "would replace the output file mlsup sets and reports: put #SBATCH --output in the script"},
    {"export", 0, "could hide the MLSUP_* variables from the job: put #SBATCH --export in the script, which mlsup widens"},
    {"array", 'a', "would make an array mlsup does not know of: set slurm.array"},
    {"nodes", 'N', "would change the node count mlsup sizes exclusions by: set slurm.nodes"},
    {"time", 't', "would change the time limit mlsup checks slurm.signal_lead against: set slurm.time"},
    {"wait", 'W', "means sbatch would wait for the job to end, and mlsup's sbatch call would time out"},
    {"wrap", 0, "would replace the script mlsup renders: put the command in the template"},
    {"test-only", 0, "submits nothing"},
    {"clusters", 'M', "would send the job to another cluster, where mlsup does not look: point SLURM_CONF at that cluster"},
};

// sbatch's short options that take no value, so that another may follow in one word ("-Hx").
constexpr std::string_view kShortFlags = "HhkOQsuVv";

// The collision an extra_args item makes, if any: "--opt", "--opt=value", a unique prefix of --opt
// (sbatch takes one), "-x", "-xVALUE" and short flags run together.
const Collision* collision(std::string_view item) {
  if (util::starts_with(item, "--")) {
    auto name = item.substr(2);
    name = name.substr(0, name.find('='));
    for (const auto& c : kCollisions)
      if (name == c.name || (name.size() >= 3 && util::starts_with(c.name, name))) return &c;
    return nullptr;
  }
  if (!util::starts_with(item, "-")) return nullptr;  // a value
  for (const char letter : item.substr(1)) {
    for (const auto& c : kCollisions)
      if (c.letter == letter) return &c;
    if (kShortFlags.find(letter) == std::string_view::npos) return nullptr;  // the rest is its value
  }
  return nullptr;
}

// window.hours and window.days as the window's own parser reads them (a problem blames the part it names).
std::optional<std::string> check_window(const Config& c, std::string_view part) {
  if (c.window.hours.empty()) {
    if (part == "days" && !c.window.days.empty()) return "is set but window.hours is not: say when the window opens and closes";
    return std::nullopt;
  }
  const auto w = config::parse_window(c.window.hours, c.window.days);
  if (w || !util::starts_with(w.error().message, part)) return std::nullopt;
  std::string_view said = w.error().message;  // "hours \"x\": ..." or "days: ..."
  said.remove_prefix(part.size());
  if (util::starts_with(said, ":")) said.remove_prefix(1);
  return std::string(util::trim(said));
}

std::optional<std::string> check_extra_args(const Config& c) {
  std::vector<std::string> problems;
  for (const auto& item : c.slurm.extra_args)
    if (const auto* hit = collision(item)) problems.push_back("\"" + item + "\" " + std::string(hit->why));
  if (problems.empty()) return std::nullopt;
  return util::join(problems, "; ");
}

const std::vector<Rule>& rules() {
  static const std::vector<Rule> table = {
      {"name", check_name},
      {"template", check_template},
      {"template", check_template_file, true},
      {"poll_interval",
       [](const Config& c) -> std::optional<std::string> {
         if (c.poll_interval >= Millis(100)) return std::nullopt;
         return "must be at least \"100ms\"";
       }},
      {"lease_ttl",
       [](const Config& c) -> std::optional<std::string> {
         if (c.lease_ttl >= Seconds(10)) return std::nullopt;
         return "must be at least \"10s\": a shorter lease could run out between two renewals";
       }},
      {"memory_save_interval",
       [](const Config& c) -> std::optional<std::string> {
         if (c.memory_save_interval <= Seconds(3600)) return std::nullopt;
         return "must be at most \"1h\": a supervisor that dies loses what it observed since the last save";
       }},
      {"heartbeat.startup_timeout", [](const Config& c) { return at_least_poll(c, c.heartbeat.startup_timeout, "first heartbeat"); }},
      {"heartbeat.steady_timeout", [](const Config& c) { return at_least_poll(c, c.heartbeat.steady_timeout, "silence"); }},
      {"heartbeat.save_timeout",
       [](const Config& c) -> std::optional<std::string> {
         if (!c.heartbeat.enabled || c.heartbeat.save_timeout >= c.heartbeat.steady_timeout) return std::nullopt;
         return d(c.heartbeat.save_timeout) + " is shorter than heartbeat.steady_timeout " + d(c.heartbeat.steady_timeout) +
                ": a save may stay silent at least as long as a step";
       }},
      {"slurm.signal_lead", check_signal_lead},
      {"heartbeat.stacks_signal",
       [](const Config& c) -> std::optional<std::string> {
         if (c.heartbeat.stacks_signal.empty() || c.heartbeat.stacks_signal != c.slurm.signal) return std::nullopt;
         return "is slurm.signal too: the training would take a hang's request for its stacks as the pre-timeout "
                "signal; pick another (USR1, USR2, URG, WINCH) or \"\" for none";
       }},
      {"preflight.deadline",
       [](const Config& c) -> std::optional<std::string> {
         if (c.preflight.command.empty() || !c.heartbeat.enabled || c.preflight.deadline < c.heartbeat.startup_timeout)
           return std::nullopt;
         return d(c.preflight.deadline) + " is not shorter than heartbeat.startup_timeout " + d(c.heartbeat.startup_timeout) +
                ": a node that never joins would read as a hang before the preflight names it";
       }},
      {"policy.backoff_max",
       [](const Config& c) -> std::optional<std::string> {
         if (c.policy.backoff_max >= c.policy.backoff_initial) return std::nullopt;
         return d(c.policy.backoff_max) + " is shorter than policy.backoff_initial " + d(c.policy.backoff_initial);
       }},
      {"slurm.array",
       [](const Config& c) -> std::optional<std::string> {
         if (!c.slurm.array_spec || c.slurm.array_spec->max_running == 1u) return std::nullopt;
         return "\"" + c.slurm.array + "\" lets tasks run side by side; mlsup supervises one training as a chain of "
                "tasks, one at a time: end it with %1 (e.g. \"1-10%1\")";
       }},
      {"slurm.spare_nodes",
       [](const Config& c) -> std::optional<std::string> {
         if (c.slurm.spare_nodes == 0 || c.slurm.array.empty()) return std::nullopt;
         return "spare nodes and a chain (slurm.array) do not go together: a chain's next task is a new job "
                "already; set one of them";
       }},
      {"slurm.extra_args", check_extra_args},
      {"checkpoint.step_regex", check_step_regex},
      {"checkpoint.dir", check_checkpoint_owner, true},
      {"checkpoint.glob",
       [](const Config& c) -> std::optional<std::string> {
         if (!c.checkpoint.glob.empty()) return std::nullopt;
         return "must not be empty (\"*\" takes every entry of checkpoint.dir)";
       }},
      {"checkpoint.keep",
       [](const Config& c) -> std::optional<std::string> {
         const auto& k = c.checkpoint;
         if (k.keep <= 0 || k.layout != "glob" || !k.complete_marker.empty()) return std::nullopt;
         return "needs checkpoint.complete_marker with the glob layout: without a file the job writes last, a "
                "checkpoint torn by a crash looks complete and retention would delete the good one before it";
       }},
      {"notify.webhook",
       [](const Config& c) -> std::optional<std::string> {
         const auto& w = c.notify.webhook;
         if (w.empty() || util::starts_with(w, "http://") || util::starts_with(w, "https://")) return std::nullopt;
         return "\"" + w + "\" is not an http:// or https:// URL";
       }},
      {"notify.budget_warn_at",
       [](const Config& c) -> std::optional<std::string> {
         if (c.notify.budget_warn_at <= 100) return std::nullopt;
         return std::to_string(c.notify.budget_warn_at) + " is more than 100 (it is a percent of the budget)";
       }},
      {"debug_on_retry.env",
       [](const Config& c) -> std::optional<std::string> {
         for (const auto& [name, value] : c.debug_on_retry.env)
           if (util::starts_with(name, "MLSUP_"))
             return "\"" + name + "\" is mlsup's own (the MLSUP_* variables are the contract's); debug with other variables";
         return std::nullopt;
       }},
      {"window.hours", [](const Config& c) { return check_window(c, "hours"); }},
      {"window.days", [](const Config& c) { return check_window(c, "days"); }},
      {"window.zone", check_window_zone, true},
      {"state_dir",
       [](const Config& c) -> std::optional<std::string> {
         if (c.state_dir != c.checkpoint.dir) return std::nullopt;
         return "is the same folder as checkpoint.dir; give the checkpoints a folder of their own";
       }},
  };
  return table;
}

}  // namespace

void validate(const Config& config, Errors& errors, const LoadOptions& options) {
  for (const auto& rule : rules()) {
    if (rule.template_file && !options.template_file) continue;
    const auto problem = rule.check(config);
    if (!problem) continue;
    util::Error e{.file = config.source_file, .subject = std::string(rule.key), .message = *problem};
    if (const auto where = config.written.find(std::string(rule.key)); where != config.written.end()) {
      e.line = where->second.line;
      e.column = where->second.column;
    }
    errors.push_back(std::move(e));
  }
}

}  // namespace mlsup::config
