#include "cli/verbs.h"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include "cli/exit_codes.h"
#include "config/duration.h"
#include "config/load.h"
#include "render/submission.h"
#include "util/json.h"
#include "util/strings.h"

namespace mlsup::cli {
namespace fs = std::filesystem;
namespace {

struct Planned {
  config::Config config;
  render::Submission submission;
};

void print_errors(const config::Errors& errors) {
  for (const auto& e : errors) std::cerr << e.str() << "\n";
}

// Loads the config and renders one attempt; prints every problem and returns nullopt on failure.
std::optional<Planned> plan(const std::string& config_path, const render::Attempt& attempt) {
  auto config = config::load_config_file(config_path);
  if (!config) {
    print_errors(config.error());
    return std::nullopt;
  }
  std::ifstream in(config->template_path);
  std::stringstream text;
  text << in.rdbuf();
  auto submission = render::plan_submission(*config, text.str(), attempt);
  if (!submission) {
    print_errors({submission.error()});
    return std::nullopt;
  }
  for (const auto& w : submission->warnings) std::cerr << "warning: " << w.str() << "\n";
  return Planned{std::move(*config), std::move(*submission)};
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

nlohmann::json as_json(const Planned& p, int attempt) {
  const auto& s = p.submission;
  nlohmann::json env = nlohmann::json::object();
  for (const auto& [k, v] : s.environment) env[k] = v;
  nlohmann::json j = {{"campaign", p.config.name}, {"attempt", attempt},   {"script", s.script},
                      {"sbatch_options", s.options}, {"environment", env}, {"tag", s.tag},
                      {"output", s.output},          {"nodes", s.nodes}};
  j["time_limit_seconds"] = s.time_limit ? nlohmann::json(s.time_limit->count()) : nlohmann::json(nullptr);
  j["array"] = s.array ? nlohmann::json(s.array->text) : nlohmann::json(nullptr);
  return j;
}

void print_text(const Planned& p, int attempt) {
  const auto& s = p.submission;
  std::cout << "# campaign " << p.config.name << ", attempt " << attempt << "\n"
            << "# sbatch command (the script path is where mlsup stores the rendered script):\n"
            << quoted_command(render::sbatch_argv(s, "SCRIPT")) << "\n"
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

}  // namespace

int validate_verb(const std::string& config_path) {
  const auto planned = plan(config_path, render::Attempt{});
  if (!planned) return kBadInput;
  const auto& c = planned->config;
  const auto& s = planned->submission;
  std::cout << config_path << ": ok: campaign " << c.name << ", template " << c.template_path << ", " << s.nodes
            << (s.nodes == 1 ? " node" : " nodes");
  if (s.time_limit) std::cout << ", time limit " << config::format_duration(*s.time_limit);
  if (s.array) std::cout << ", array " << s.array->text << " (" << s.array->task_ids.size() << " tasks)";
  std::cout << ", state in " << c.state_dir << "\n";
  return kOk;
}

int render_verb(const RenderOptions& options) {
  const render::Attempt attempt{options.attempt, options.resume_from, options.exclude};
  const auto planned = plan(options.config_path, attempt);
  if (!planned) return kBadInput;
  if (!options.write_dir.empty()) return write_files(*planned, options.write_dir);
  if (options.json) {
    std::cout << util::dump_json(as_json(*planned, options.attempt), 2) << "\n";
  } else {
    print_text(*planned, options.attempt);
  }
  return kOk;
}

}  // namespace mlsup::cli
