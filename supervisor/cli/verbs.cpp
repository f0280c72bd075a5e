#include "cli/verbs.h"

#include <filesystem>
#include <fstream>
#include <memory>
#include <iostream>
#include <sstream>
#include <ctime>
#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include "cli/exit_codes.h"
#include "config/campaign_set.h"
#include "config/duration.h"
#include "config/load.h"
#include "decide/spares.h"
#include "store/read_campaign.h"
#include "views/status_view.h"
#include "cli/status_text.h"
#include "supervise/loop.h"
#include "supervise/next_attempt.h"
#include "cli/window_now.h"
#include "reconcile/window_now.h"
#include "render/contract.h"
#include "render/submission.h"
#include "render/template.h"
#include "slurm/config_check.h"
#include "util/json.h"
#include "util/strings.h"

namespace mlsup::cli {
namespace fs = std::filesystem;
namespace {

struct Planned {
  config::Config config;
  render::Submission submission;
  render::Attempt attempt;
  std::optional<engine::NextAttempt> next;  // the journal's next attempt, when the campaign has run
};

void print_errors(const config::Errors& errors) {
  for (const auto& e : errors) std::cerr << e.str() << "\n";
}

// The values of the attempt render shows: those given, the rest from the journal's next attempt (else attempt 1's).
render::Attempt chosen(const RenderOptions& o, const std::optional<engine::NextAttempt>& next) {
  render::Attempt a = next ? next->attempt : render::Attempt{};
  if (o.attempt) {
    if (next && *o.attempt != a.number) a.tag.clear();  // another attempt: its own tag
    a.number = *o.attempt;
  }
  if (o.resume_from) a.resume_from = *o.resume_from;
  if (o.exclude) a.exclude = *o.exclude;
  if (next && a.tag.empty()) {  // the campaign id of the journal's tag, for this attempt
    const auto& t = next->attempt.tag;
    a.tag = t.substr(0, t.rfind(':') + 1) + std::to_string(a.number);
  }
  return a;
}

// Loads the config and renders the attempt asked (with a journal, the next one as the engine would submit it);
// prints every problem and returns nullopt on failure.
std::optional<Planned> plan(const RenderOptions& o) {
  auto config = config::load_config_file(o.config_path);
  if (!config) {
    print_errors(config.error());
    return std::nullopt;
  }
  std::ifstream in(config->template_path);
  std::stringstream text;
  text << in.rdbuf();
  auto first = render::plan_submission(*config, text.str(), render::Attempt{});
  if (!first) {
    print_errors({first.error()});
    return std::nullopt;
  }
  std::optional<engine::NextAttempt> next;
  if (!o.attempt || !o.resume_from || !o.exclude) {
    std::unique_ptr<slurm::Client> client;  // for the exclusion cap; never called without Slurm's configuration
    if (!slurm::config_problem()) client = slurm::make_client(config->slurm.backend);
    next = engine::next_attempt(*config, text.str(), first->nodes, client.get(), engine::clocks_now().wall);
  }
  const render::Attempt attempt = chosen(o, next);
  auto submission = render::plan_submission(*config, text.str(), attempt);
  if (!submission) {
    print_errors({submission.error()});
    return std::nullopt;
  }
  for (const auto& w : submission->warnings) std::cerr << "warning: " << w.str() << "\n";
  if (next)
    for (const auto& note : next->notes) std::cerr << "note: " << note << "\n";
  return Planned{std::move(*config), std::move(*submission), attempt, std::move(next)};
}

std::string quoted_command(const std::vector<std::string>& argv) {
  std::vector<std::string> words;
  for (const auto& a : argv) words.push_back(util::shell_quote(a));
  return util::join(words, " ");
}

// A POSIX sh script that submits the rendered script exactly as mlsup would.
std::string submit_script(const render::Submission& s, const std::string& script_path, const std::string& working_dir) {
  std::string out = "#!/bin/sh\n# Submits this attempt by hand, exactly as mlsup would.\nset -e\n";
  out += "cd " + util::shell_quote(working_dir) + "\n";
  const auto log_dir = fs::path(s.output).parent_path().string();
  if (!log_dir.empty() && log_dir.find('%') == std::string::npos) out += "mkdir -p " + util::shell_quote(log_dir) + "\n";
  out += "exec env";
  for (const auto& [k, v] : s.environment) out += " " + util::shell_quote(k + "=" + v);
  out += " " + quoted_command(render::sbatch_argv(s, script_path)) + "\n";
  return out;
}

// Where the engine stores the attempt's script ("SCRIPT" before the campaign's first run).
std::string script_path(const Planned& p) {
  return p.next ? p.config.dir().attempt_script(p.attempt.number) : "SCRIPT";
}

nlohmann::json as_json(const Planned& p) {
  const auto& s = p.submission;
  nlohmann::json env = nlohmann::json::object();
  for (const auto& [k, v] : s.environment) env[k] = v;
  nlohmann::json j = {{"campaign", p.config.name}, {"attempt", p.attempt.number}, {"script", s.script},
                      {"sbatch_options", s.options}, {"environment", env},         {"tag", s.tag},
                      {"output", s.output},          {"nodes", s.nodes},           {"resume_from", p.attempt.resume_from},
                      {"exclude", p.attempt.exclude}, {"working_dir", p.config.base_dir},
                      {"from_journal", p.next.has_value()}};
  j["sbatch_argv"] = render::sbatch_argv(s, script_path(p));
  if (p.next) j["resume_step"] = p.next->resume_step, j["notes"] = p.next->notes;
  j["time_limit_seconds"] = s.time_limit ? nlohmann::json(s.time_limit->count()) : nlohmann::json(nullptr);
  j["array"] = s.array ? nlohmann::json(s.array->text) : nlohmann::json(nullptr);
  return j;
}

void print_text(const Planned& p) {
  const auto& s = p.submission;
  const auto& a = p.attempt;
  std::cout << "# campaign " << p.config.name << ", attempt " << a.number
            << (p.next ? " (the next one, from the journal)" : "") << "\n"
            << "# resume from: " << (a.resume_from.empty() ? "none (a fresh start)" : a.resume_from)
            << (p.next && p.next->resume_step > 0 ? " (step " + std::to_string(p.next->resume_step) + ")" : "") << "\n"
            << "# excluded nodes: " << (a.exclude.empty() ? "none" : util::join(a.exclude, ",")) << "\n"
            << "# working folder (sbatch runs here): " << p.config.base_dir << "\n"
            << "# sbatch command" << (p.next ? "" : " (SCRIPT: where mlsup stores the rendered script)") << ":\n"
            << quoted_command(render::sbatch_argv(s, script_path(p))) << "\n"
            << "# environment added to sbatch's own:\n";
  for (const auto& [k, v] : s.environment) std::cout << k << "=" << util::shell_quote(v) << "\n";
  std::cout << "# job output: " << s.output << "\n# script:\n" << s.script;
  if (!s.script.empty() && s.script.back() != '\n') std::cout << "\n";
}

bool write_file(const fs::path& path, const std::string& text, mode_t mode) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
  out.close();
  if (!out) return false;
  return ::chmod(path.c_str(), mode) == 0;
}

int write_files(const Planned& p, const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  const fs::path script = fs::absolute(fs::path(dir) / "job.sbatch");
  const fs::path submit = fs::absolute(fs::path(dir) / "submit.sh");
  if (ec || !write_file(script, p.submission.script, 0644) ||
      !write_file(submit, submit_script(p.submission, script.string(), p.config.base_dir), 0755)) {
    std::cerr << "mlsup render: cannot write into " << dir << ": " << (ec ? ec.message() : "write failed") << "\n";
    return kRuntimeFailure;
  }
  std::cout << script.string() << "\n" << submit.string() << "\n";
  return kOk;
}

// What the campaign's jobs are judged alive by (heartbeat.enabled, heartbeat.source).
std::string liveness_line(const config::HeartbeatSettings& h) {
  const std::string timeouts = " (heartbeat.startup_timeout " + config::format_duration(h.startup_timeout) +
                               ", steady_timeout " + config::format_duration(h.steady_timeout) + ")";
  if (!h.enabled) return "liveness: not judged (heartbeat.enabled: false): only Slurm's time limit ends a hung job";
  if (h.source == "file")
    return "liveness: the heartbeat file MLSUP_HEARTBEAT_FILE" + timeouts +
           "; a training that never writes it is found hung";
  if (h.source == "output") return "liveness: the job's output growing" + timeouts;
  return "liveness: the job's output growing until the training writes MLSUP_HEARTBEAT_FILE, then that file" +
         timeouts;
}

}  // namespace

namespace {

// Every problem of c's template, read with c's variables; true when it has any (printed).
bool print_template_problems(const config::Config& c) {
  std::ifstream in(c.template_path);
  if (c.template_path.empty() || !in) return false;
  std::stringstream text;
  text << in.rdbuf();
  const auto problems = render::template_problems(c.template_path, text.str(), render::template_variables(c, render::Attempt{}));
  print_errors(problems);
  return !problems.empty();
}

// A config that does not load: its problems, then its template's where the config's template and vars were read.
void print_config_problems(const config::Config& read, const config::Errors& errors) {
  print_errors(errors);
  for (const auto& e : errors)
    if (e.subject == "template" || util::starts_with(e.subject, "vars")) return;  // the template's names are not sure
  print_template_problems(read);
}

int validate_one(const std::string& path);

// `mlsup validate SET`: the set's problems, else each run validated as a config of its own, then the set in a line.
int validate_set(const std::string& path) {
  const auto set = config::load_set_file(path);
  if (!set) {
    print_errors(set.error());
    return kBadInput;
  }
  int code = kOk;
  for (const auto& r : set->runs) {
    if (validate_one(path + ":" + r.name) != kOk) code = kBadInput;
    if (!r.after.empty() || r.priority != 0)
      std::cout << "  after: " << (r.after.empty() ? "-" : util::join(r.after, ", ")) << "; priority " << r.priority << "\n";
  }
  if (code != kOk) return code;
  std::cout << path << ": ok: set " << set->name << ", " << set->runs.size() << " runs, at once: "
            << (set->max_running > 0 ? std::to_string(set->max_running) + " runs" : std::string("no run limit")) << ", "
            << (set->max_nodes > 0 ? std::to_string(set->max_nodes) + " nodes" : std::string("no node limit")) << "\n";
  return kOk;
}

// `mlsup validate CONFIG`: every problem of the config and its template, else attempt 1 rendered and summed up.
int validate_one(const std::string& config_path) {
  if (config::is_set_file(config_path)) return validate_set(config_path);
  const bool run_of_set = config::split_unit(config_path).has_value();  // its set loads every run: no partial one
  config::Config read;
  const auto loaded = config::load_config_file(config_path, run_of_set ? config::LoadOptions{} : config::LoadOptions{.partial = &read});
  if (!loaded) {
    if (run_of_set) print_errors(loaded.error());
    else print_config_problems(read, loaded.error());
    return kBadInput;
  }
  if (print_template_problems(*loaded)) return kBadInput;
  RenderOptions first;
  first.config_path = config_path;
  first.attempt = 1;
  first.resume_from = "";
  first.exclude = std::vector<std::string>{};
  const auto planned = plan(first);
  if (!planned) return kBadInput;
  const auto& c = planned->config;
  const auto& s = planned->submission;
  std::cout << config_path << ": ok: campaign " << c.name << ", template " << c.template_path << ", " << s.nodes
            << (s.nodes == 1 ? " node" : " nodes");
  if (s.time_limit) std::cout << ", time limit " << config::format_duration(*s.time_limit);
  if (s.array) std::cout << ", array " << s.array->text << " (" << s.array->task_ids.size() << " tasks)";
  std::cout << ", state in " << c.state_dir << "\n" << liveness_line(c.heartbeat) << "\n";
  if (const auto advice = decide::spare_advice(s.nodes, c.slurm.spare_nodes, !c.slurm.array.empty()))
    std::cout << "advice: " << *advice << "\n";
  if (const auto warning = engine::short_lead_warning(c, engine::pace_figures(store::read_memory(c, engine::clocks_now()).pace)))
    std::cout << "warning: " << *warning << " (measured in " << c.state_dir << ")\n";
  if (!c.window.hours.empty())
    std::cout << window_line(engine::window_json(c, cli::window_now(c, static_cast<double>(std::time(nullptr))))) << "\n";
  return kOk;
}

}  // namespace

int validate_verb(const std::vector<std::string>& config_paths) {
  int code = kOk;
  for (const auto& path : config_paths)
    if (validate_one(path) != kOk) code = kBadInput;
  return code;
}

int render_verb(const RenderOptions& options) {
  const auto planned = plan(options);
  if (!planned) return kBadInput;
  if (!options.write_dir.empty()) return write_files(*planned, options.write_dir);
  if (options.json) {
    std::cout << util::dump_json(as_json(*planned), 2) << "\n";
  } else {
    print_text(*planned);
  }
  return kOk;
}

}  // namespace mlsup::cli
