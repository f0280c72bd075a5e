#pragma once
// The verbs of mlsup and what each does; app.cpp wires them to the command line.
#include <optional>
#include <string>
#include <vector>

namespace mlsup::cli {

struct RenderOptions {
  std::string config_path;
  int attempt = 1;
  std::string resume_from;
  std::vector<std::string> exclude;
  std::string write_dir;  // "" = print instead of writing files
  bool json = false;
};

// `mlsup validate CONFIG`: loads, validates and renders attempt 1; prints a summary.
int validate_verb(const std::string& config_path);

// `mlsup render CONFIG`: prints (or writes) the exact script and sbatch command of one attempt.
int render_verb(const RenderOptions& options);

}  // namespace mlsup::cli
