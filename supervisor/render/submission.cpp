#include "render/submission.h"

#include <algorithm>
#include <charconv>

#include "config/duration.h"
#include "config/slurm_time.h"
#include "render/chain.h"
#include "render/directives.h"
#include "render/end_record.h"
#include "render/lint.h"
#include "render/spares.h"
#include "render/template.h"
#include "util/strings.h"

namespace mlsup::render {
namespace {

using config::Config;

util::Error script_error(const Config& c, int line, std::string subject, std::string message) {
  return {.file = c.template_path, .line = line, .column = 1, .subject = std::move(subject), .message = std::move(message)};
}

// Options that the config sets explicitly; the script's own #SBATCH lines stand otherwise.
void config_options(const Config& c, std::vector<std::string>& out) {
  const auto add_int = [&](const char* name, const std::optional<int>& v) {
    if (v) out.push_back(std::string("--") + name + "=" + std::to_string(*v));
  };
  if (!c.slurm.partition.empty()) out.push_back("--partition=" + c.slurm.partition);
  add_int("nodes", c.slurm.nodes);
  add_int("ntasks-per-node", c.slurm.ntasks_per_node);
  add_int("gpus-per-node", c.slurm.gpus_per_node);
  add_int("cpus-per-task", c.slurm.cpus_per_task);
  if (!c.slurm.time.empty()) out.push_back("--time=" + c.slurm.time);
  if (!c.slurm.array.empty()) out.push_back("--array=" + c.slurm.array);
}

// The least node count of "N" or "N-M".
std::optional<int> min_nodes(const std::string& text) {
  int v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || v < 1 || (ptr != text.data() + text.size() && *ptr != '-')) return std::nullopt;
  return v;
}

// Fills nodes, time limit and array from the config, or else from the script's #SBATCH lines.
util::Result<void> effective_shape(const Config& c, const Directives& d, Submission& s) {
  if (c.slurm.nodes) {
    s.nodes = *c.slurm.nodes;
  } else if (const auto* n = d.find("nodes")) {
    const auto v = min_nodes(n->value);
    if (!v) return std::unexpected(script_error(c, n->line, "--nodes", "\"" + n->value + "\" is not a node count"));
    s.nodes = *v;
  }
  if (!c.slurm.time.empty()) {
    s.time_limit = c.slurm.time_limit;
  } else if (const auto* t = d.find("time")) {
    auto limit = config::parse_slurm_time(t->value);
    if (!limit) return std::unexpected(script_error(c, t->line, "--time", limit.error()));
    s.time_limit = *limit;
    if (s.time_limit && !c.slurm.signal_lead.automatic && c.slurm.signal_lead.value >= *s.time_limit)
      return std::unexpected(script_error(c, t->line, "--time",
                                          "the time limit \"" + t->value + "\" is not longer than slurm.signal_lead \"" +
                                              config::format_duration(c.slurm.signal_lead.value) + "\" in the config"));
  }
  if (c.slurm.array_spec) {
    s.array = c.slurm.array_spec;
  } else if (const auto* a = d.find("array")) {
    auto spec = config::parse_array_spec(a->value);
    if (!spec) return std::unexpected(script_error(c, a->line, "--array", spec.error()));
    if (spec->max_running != 1u)
      return std::unexpected(script_error(c, a->line, "--array",
                                          "\"" + a->value + "\" lets tasks run side by side; mlsup supervises one training as "
                                          "a chain of tasks, one at a time: end it with %1 (e.g. \"1-10%1\")"));
    s.array = *spec;
  }
  return {};
}

// A chain's script is rendered once for all its tasks, a spare-node job's once for all the attempts it
// runs: a value of one attempt in it would be the same in every one; the first such use in text is an
// error at its line and column.
util::Result<void> no_attempt_values(const Config& c, std::string_view text, const Attempt& attempt, std::string_view mode,
                                     std::string_view runner) {
  auto vars = template_variables(c, attempt);
  const auto per_attempt = per_attempt_variables();
  for (const auto& [name, env] : per_attempt) vars.erase(name);
  const auto rendered = render_template(c.template_path, text, vars);
  if (rendered) return {};
  const auto e = rendered.error();
  const auto hit = std::find_if(per_attempt.begin(), per_attempt.end(), [&](const auto& v) { return v.first == e.subject; });
  if (hit == per_attempt.end()) return std::unexpected(e);
  return std::unexpected(util::Error{
      .file = e.file, .line = e.line, .column = e.column, .subject = e.subject,
      .message = std::string(mode) + " renders the script once for all its " + std::string(runner) +
                 ", so this would be attempt " + std::to_string(attempt.number) + "'s value in every one of them: read $" +
                 hit->second + " instead, which is set for the attempt each one runs"});
}

// Chain mode: the tasks take their attempt's values at their start, which needs a shell script.
util::Result<void> chain_mode(const Config& c, std::string_view text, const Attempt& attempt, Submission& s) {
  if (!s.array) return {};
  const std::string first = s.script.substr(0, s.script.find('\n'));
  if (util::starts_with(first, "#!") && !first.ends_with("sh") && !first.ends_with("bash"))
    return std::unexpected(script_error(c, 1, "#!", "\"" + first + "\": a chain (slurm.array) needs a shell batch script, "
                                                    "whose first lines take each task's attempt; start the program from one"));
  return no_attempt_values(c, text, attempt, "a chain (slurm.array)", "tasks");
}

// The #! line's program and its arguments ("/bin/bash -l").
std::string shell_of(const std::string& script) {
  return std::string(util::trim(std::string_view(script).substr(2, script.find('\n') - 2)));
}

// Spare nodes: the script runs once per attempt inside the job, on the training's nodes (slurm.nodes or
// the script's, else 1), which needs a shell script.
util::Result<void> spare_mode(const Config& c, std::string_view text, const Attempt& attempt, const Directives& d,
                              Submission& s) {
  if (c.slurm.spare_nodes == 0) return {};
  if (!shell_script(s.script))
    return std::unexpected(script_error(c, 1, "#!", "slurm.spare_nodes needs a shell batch script, whose first lines "
                                                    "run each attempt inside the job; start the program from one"));
  s.spare_nodes = c.slurm.spare_nodes;
  s.tasks_per_node = 1;
  if (c.slurm.ntasks_per_node) {
    s.tasks_per_node = *c.slurm.ntasks_per_node;
  } else if (const auto* t = d.find("ntasks-per-node")) {
    int v = 0;
    const auto [ptr, ec] = std::from_chars(t->value.data(), t->value.data() + t->value.size(), v);
    if (ec != std::errc() || ptr != t->value.data() + t->value.size() || v < 1)
      return std::unexpected(script_error(c, t->line, "--ntasks-per-node", "\"" + t->value + "\" is not a task count"));
    s.tasks_per_node = v;
  }
  return no_attempt_values(c, text, attempt, "spare nodes (slurm.spare_nodes)", "attempts in a job");
}

// The lines mlsup puts after the script's header: a shell script's end record, then (chain mode) the
// preamble that takes the task's attempt.
void add_lines(const Config& c, Submission& s) {
  std::string lines = shell_script(s.script) ? end_record_lines(c) : "";
  if (s.array) lines += chain_preamble(c);
  if (s.spare_nodes > 0) lines += spare_preamble(c, s.nodes, s.tasks_per_node, shell_of(s.script));
  if (!lines.empty()) s.script = insert_after_header(s.script, lines);
}

// sbatch --export: the job must see the MLSUP_* variables even when the script narrows the export.
void export_option(const Directives& d, const Submission& s, std::vector<std::string>& out) {
  const auto* e = d.find("export");
  if (!e) return;  // sbatch's default exports the whole environment
  std::vector<std::string> names;
  for (const auto& [name, value] : s.environment) names.push_back(name);
  const std::string base = (e->value == "NONE" || e->value == "NIL") ? "" : e->value + ",";
  out.push_back("--export=" + base + util::join(names, ","));
}

// mlsup's own controls, added whatever the script says.
void control_options(const Config& c, const Directives& d, const Attempt& attempt, Submission& s) {
  auto& out = s.options;
  out.push_back("--parsable");
  if (!d.find("job-name")) out.push_back("--job-name=" + c.name);
  out.push_back("--comment=" + s.tag);
  const bool signal_in_config = c.is_set("slurm.signal") || c.is_set("slurm.signal_lead");
  if (signal_in_config || !d.find("signal"))
    out.push_back("--signal=B:" + c.slurm.signal + "@" + std::to_string(render::signal_lead(c, attempt)));
  out.push_back("--no-requeue");
  if (s.spare_nodes > 0) {  // the training's nodes and the spares, in a job that outlives a node
    std::erase_if(out, [](const std::string& o) { return util::starts_with(o, "--nodes="); });
    out.push_back("--nodes=" + std::to_string(s.nodes + s.spare_nodes));
    out.push_back("--no-kill");
  }
  if (!attempt.exclude.empty()) {
    std::vector<std::string> nodes = attempt.exclude;
    if (const auto* x = d.find("exclude")) nodes.insert(nodes.begin(), x->value);
    out.push_back("--exclude=" + util::join(nodes, ","));
  }
  if (const auto* o = d.find("output")) {
    s.output = o->value;
  } else {
    s.output = c.dir().logs() + "/" + (s.array ? "%x-%A_%a.out" : "%x-%j.out");
    out.push_back("--output=" + s.output);
  }
  export_option(d, s, out);
}

}  // namespace

util::Result<Submission> plan_submission(const Config& config, std::string_view template_text, const Attempt& attempt) {
  Submission s;
  auto script = render_template(config.template_path, template_text, template_variables(config, attempt));
  if (!script) return std::unexpected(script.error());
  s.script = std::move(*script);
  if (!util::starts_with(s.script, "#!"))
    return std::unexpected(script_error(config, 1, "#!", "the script does not start with a #! line, and sbatch refuses "
                                                         "such a script: make its first line #!/bin/bash"));
  auto directives = parse_directives(config.template_path, s.script);
  if (!directives) return std::unexpected(directives.error());
  s.warnings = lint_template(config, template_text, *directives);
  if (auto ok = effective_shape(config, *directives, s); !ok) return std::unexpected(ok.error());
  if (auto ok = chain_mode(config, template_text, attempt, s); !ok) return std::unexpected(ok.error());
  if (auto ok = spare_mode(config, template_text, attempt, *directives, s); !ok) return std::unexpected(ok.error());
  add_lines(config, s);
  s.tag = attempt.tag.empty() ? job_tag(config.name, kUnstarted, attempt.number) : attempt.tag;
  s.environment = job_environment(config, attempt);
  config_options(config, s.options);
  control_options(config, *directives, attempt, s);
  s.options.insert(s.options.end(), config.slurm.extra_args.begin(), config.slurm.extra_args.end());
  return s;
}

std::vector<std::string> sbatch_argv(const Submission& s, const std::string& script_path) {
  std::vector<std::string> argv{"sbatch"};
  argv.insert(argv.end(), s.options.begin(), s.options.end());
  argv.push_back(script_path);
  return argv;
}

}  // namespace mlsup::render
