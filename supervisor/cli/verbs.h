#pragma once
// The verbs of mlsup and what each does; app.cpp wires them to the command line.
#include <optional>
#include <string>
#include <vector>

namespace mlsup::cli {

// What render is asked; a value not given comes from the journal (the next attempt) or, before the
// campaign's first run, is attempt 1's.
struct RenderOptions {
  std::string config_path;
  std::optional<int> attempt;
  std::optional<std::string> resume_from;
  std::optional<std::vector<std::string>> exclude;
  std::string write_dir;  // "" = print instead of writing files
  bool json = false;
};

// `mlsup validate CONFIG`: loads, validates and renders attempt 1; prints a summary.
int validate_verb(const std::vector<std::string>& config_paths);

// `mlsup render CONFIG`: prints (or writes) the exact script and sbatch command of one attempt: with a
// journal, the next attempt as the engine would submit it (supervise/next_attempt.h).
int render_verb(const RenderOptions& options);

}  // namespace mlsup::cli
