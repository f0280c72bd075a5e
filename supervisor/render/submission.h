#pragma once
// One attempt's submission, fully decided before anything runs: the rendered script, the sbatch
// options mlsup adds to it, the job's environment, and what mlsup needs to know about the job.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "config/array_spec.h"
#include "config/config.h"
#include "render/contract.h"
#include "util/error.h"

namespace mlsup::render {

struct Submission {
  std::string script;                 // the rendered batch script
  std::vector<std::string> options;   // sbatch options, before the script path ("sbatch" not included)
  std::vector<std::pair<std::string, std::string>> environment;  // added to sbatch's own environment
  std::string tag;                    // the job's --comment
  std::string output;                 // where the job's stdout goes (Slurm filename pattern)
  int nodes = 1;                      // node count the job asks for (the least, for a range)
  std::optional<config::Seconds> time_limit;   // nullopt when neither config nor script sets one
  std::optional<config::ArraySpec> array;      // the effective --array, if any
  int spare_nodes = 0;                // nodes asked for beyond `nodes` (slurm.spare_nodes)
  int tasks_per_node = 1;             // spare nodes: the training's tasks on each of its nodes
  std::vector<util::Error> warnings;  // what sbatch would ignore or the config overrides (render/lint.h)
};

// Renders template_text (the config's template) for attempt and decides the sbatch options.
util::Result<Submission> plan_submission(const config::Config& config, std::string_view template_text,
                                         const Attempt& attempt);

// The argv that submits s with the script stored at script_path: sbatch, options, path.
std::vector<std::string> sbatch_argv(const Submission& s, const std::string& script_path);

}  // namespace mlsup::render
