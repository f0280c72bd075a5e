#pragma once
// `mlsup logs CONFIG [--attempt N] [--follow]`: an attempt's job output, found without hunting for it.
#include <expected>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "config/config.h"

namespace mlsup::cli {

struct LogsOptions {
  std::string config_path;
  std::optional<int> attempt;  // default: the current (newest) attempt
  bool follow = false;         // print what is added, moving on to each next attempt, until the campaign ends
  double follow_poll = 0.5;    // seconds between two looks at the file
};

// Adds `logs` and its options to the command line, filling o.
CLI::App* add_logs_command(CLI::App& app, LogsOptions& o);

// The output file of job_id as its sbatch --output pattern names it (%j, %x, %A, %a, %u, %%); nullopt
// where the pattern holds another placeholder (Slurm is asked instead).
std::optional<std::string> expand_output_pattern(const std::string& pattern, const std::string& job_name, long long job_id,
                                                 std::optional<long long> array_job, std::optional<long long> task,
                                                 const std::string& user);

// An attempt's output file, and who said where it is.
struct AttemptOutput {
  int attempt = 0;
  std::string path;
  std::string source;  // "Slurm", "its attempt-ended event", "the job's --output pattern"
};

// Why an attempt's output cannot be shown: the verb's exit code and what to say ("" with kOk: no attempt yet).
struct OutputProblem {
  int code = 0;
  std::string message;
};

// Where attempt's output is (default: the newest attempt's), as `logs` finds it; the file may not exist yet.
std::expected<AttemptOutput, OutputProblem> attempt_output(const config::Config& c, std::optional<int> attempt);

int logs_verb(const LogsOptions& o);

}  // namespace mlsup::cli
