#include "cli/logs_verb.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli/exit_codes.h"
#include "config/load.h"
#include "journal/lease.h"
#include "render/directives.h"
#include "render/submission.h"
#include "slurm/client.h"
#include "slurm/config_check.h"
#include "store/read_campaign.h"
#include "util/files.h"

namespace mlsup::cli {
namespace fs = std::filesystem;
namespace {

using engine::AttemptState;

// The job an attempt's output belongs to: in chain mode the task that claimed it.
std::optional<long long> job_of(const AttemptState& a) {
  if (a.task_job_id) return static_cast<long long>(*a.task_job_id);
  if (a.job_id) return static_cast<long long>(*a.job_id);
  return std::nullopt;
}

// Slurm's word on where the job writes: it expands every placeholder (while it still knows the job).
std::optional<std::string> from_slurm(const config::Config& c, long long id) {
  if (slurm::config_problem()) return std::nullopt;
  const auto client = slurm::make_client(c.slurm.backend);
  const auto jobs = client->jobs({static_cast<slurm::JobId>(id)});
  if (!jobs) return std::nullopt;
  for (const auto& j : *jobs)
    if (static_cast<long long>(j.job_id) == id && !j.std_out.empty()) return j.std_out;
  return std::nullopt;
}

// The output the attempt's attempt-ended event names (Slurm's word when it ended).
std::optional<std::string> from_events(const config::Config& c, int number) {
  std::ifstream in(c.dir().events());
  std::optional<std::string> out;
  for (std::string line; std::getline(in, line);) {
    const auto e = nlohmann::json::parse(line, nullptr, false);
    if (!e.is_object() || e.value("event", "") != "attempt-ended" || e.value("attempt", 0) != number) continue;
    if (const auto path = e.value("output", ""); !path.empty()) out = path;
  }
  return out;
}

// This user's name, as the requester of events names it (before its @host).
std::string user_name() {
  const std::string who = journal::requester();
  return who.substr(0, who.find('@'));
}

// The submission's --output pattern, expanded for the attempt's job (the template as it is now).
std::optional<std::string> from_pattern(const config::Config& c, const AttemptState& a, long long id) {
  const auto text = util::read_file(c.template_path);
  if (!text) return std::nullopt;
  const auto s = render::plan_submission(c, *text, render::Attempt{.number = a.number});
  if (!s) return std::nullopt;
  std::string name = c.name;
  if (const auto d = render::parse_directives(c.template_path, s->script))
    if (const auto* n = d->find("job-name")) name = n->value;
  const std::optional<long long> array = a.task_job_id && a.job_id ? std::optional<long long>(*a.job_id) : std::nullopt;
  auto path = expand_output_pattern(s->output, name, id, array, std::nullopt, user_name());
  if (path && fs::path(*path).is_relative()) path = (fs::path(c.base_dir) / *path).string();
  return path;
}

// Where the attempt's job writes its output, and who said so; nullopt before it has a job.
std::optional<std::pair<std::string, std::string>> locate(const config::Config& c, const AttemptState& a) {
  const auto id = job_of(a);
  if (!id) return std::nullopt;
  if (auto p = from_slurm(c, *id)) return std::pair{*p, std::string("Slurm")};
  if (auto p = from_events(c, a.number)) return std::pair{*p, std::string("its attempt-ended event")};
  if (auto p = from_pattern(c, a, *id)) return std::pair{*p, std::string("the job's --output pattern")};
  return std::nullopt;
}

const AttemptState* find_attempt(const engine::CampaignState& s, int number) {
  for (const auto& a : s.attempts)
    if (a.number == number) return &a;
  return nullptr;
}

// Prints what path holds past offset and returns the new offset (a file that shrank is read from its start).
std::uintmax_t print_from(const std::string& path, std::uintmax_t offset) {
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  if (ec) return offset;
  if (size < offset) offset = 0;
  std::ifstream in(path, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(offset));
  std::ostringstream text;
  text << in.rdbuf();
  const std::string added = text.str();
  std::cout << added << std::flush;
  return offset + added.size();
}

// Follows the attempt's output, and with next each attempt after it, until the campaign ends.
int follow(const config::Config& c, int number, bool next, double poll) {
  std::string path;
  std::uintmax_t offset = 0;
  for (int look = 0;; ++look) {
    const auto s = store::read_journal(c).state;
    const auto* a = find_attempt(s, number);
    if (a && path.empty()) {
      if (const auto where = locate(c, *a)) {
        path = where->first;
        std::cerr << "mlsup logs: attempt " << number << " (job " << *job_of(*a) << "): " << path << "\n";
      }
    }
    if (!path.empty()) offset = print_from(path, offset);
    const bool ended = a && a->ended;
    if (ended && s.finished_code) return kOk;
    if (ended && next && s.current() && s.current()->number > number) {
      ++number, path.clear(), offset = 0;
      continue;
    }
    if (ended && !next) return kOk;
    std::this_thread::sleep_for(std::chrono::duration<double>(poll));
  }
}

}  // namespace

std::optional<std::string> expand_output_pattern(const std::string& pattern, const std::string& job_name, long long job_id,
                                                 std::optional<long long> array_job, std::optional<long long> task,
                                                 const std::string& user) {
  std::string out;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%') {
      out += pattern[i];
      continue;
    }
    if (++i == pattern.size()) return std::nullopt;
    switch (pattern[i]) {
      case '%': out += '%'; break;
      case 'j': out += std::to_string(job_id); break;
      case 'x': out += job_name; break;
      case 'u': out += user; break;
      case 'A': out += std::to_string(array_job.value_or(job_id)); break;
      case 'a': if (!task) return std::nullopt; out += std::to_string(*task); break;
      default: return std::nullopt;
    }
  }
  return out;
}

CLI::App* add_logs_command(CLI::App& app, LogsOptions& o) {
  auto* cmd = app.add_subcommand("logs", "print an attempt's job output (the newest attempt's unless --attempt); "
                                         "--follow prints what is added, attempt after attempt, until the campaign ends");
  cmd->add_option("CONFIG", o.config_path, "campaign config (YAML) or SET:RUN")->required();
  cmd->add_option("--attempt", o.attempt, "the attempt whose output to print (default: the newest)")->check(CLI::PositiveNumber);
  cmd->add_flag("-f,--follow", o.follow,
                "keep printing what is added; without --attempt, go on to each next attempt until the campaign ends");
  return cmd;
}

std::expected<AttemptOutput, OutputProblem> attempt_output(const config::Config& c, std::optional<int> attempt) {
  const auto journal = store::read_journal(c);
  if (!journal.problems.empty()) return std::unexpected(OutputProblem{kRuntimeFailure, journal.problems.front().str()});
  const auto& s = journal.state;
  if (s.attempts.empty()) return std::unexpected(OutputProblem{kOk, "no attempt yet: campaign " + c.name + " has not run"});
  const int number = attempt.value_or(s.current() ? s.current()->number : 1);
  const auto* a = find_attempt(s, number);
  if (!a)
    return std::unexpected(OutputProblem{kUsage, "attempt " + std::to_string(number) + ": no such attempt (campaign " +
                                                     c.name + " has attempts 1 to " +
                                                     std::to_string(s.current() ? s.current()->number : 0) + ")"});
  const auto where = locate(c, *a);
  if (!where)
    return std::unexpected(OutputProblem{
        kRuntimeFailure, "attempt " + std::to_string(number) + " has no job yet, or its output cannot be found" +
                             (job_of(*a) ? " (Slurm no longer knows job " + std::to_string(*job_of(*a)) + ")" : "")});
  std::error_code ec;
  if (!fs::exists(where->first, ec))
    return std::unexpected(OutputProblem{kRuntimeFailure, where->first + " (from " + where->second + ") does not exist" +
                                                              (a->ended ? "" : " yet: the job has not started; --follow waits for it")});
  return AttemptOutput{number, where->first, where->second};
}

int logs_verb(const LogsOptions& o) {
  const auto c = config::load_config_file(o.config_path, {.template_file = false});
  if (!c) {
    for (const auto& e : c.error()) std::cerr << e.str() << "\n";
    return kBadInput;
  }
  if (o.follow) {
    const auto journal = store::read_journal(*c);
    if (!journal.problems.empty()) {
      std::cerr << "mlsup logs: " << journal.problems.front().str() << "\n";
      return kRuntimeFailure;
    }
    const auto& s = journal.state;
    const int number = o.attempt.value_or(s.current() ? s.current()->number : 1);
    if (o.attempt && !find_attempt(s, number)) {
      std::cerr << "mlsup logs: attempt " << number << ": no such attempt (campaign " << c->name << " has attempts 1 to "
                << (s.current() ? s.current()->number : 0) << ")\n";
      return kUsage;
    }
    return follow(*c, number, !o.attempt, o.follow_poll);
  }
  const auto out = attempt_output(*c, o.attempt);
  if (!out) {
    std::cerr << "mlsup logs: " << out.error().message << "\n";
    return out.error().code;
  }
  print_from(out->path, 0);
  return kOk;
}

}  // namespace mlsup::cli
