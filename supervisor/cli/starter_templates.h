#pragma once
// The shipped batch script templates (templates/*.sbatch.tmpl), compiled in for `mlsup init`: the
// build generates their definition from the files (supervisor/CMakeLists.txt).
#include <string_view>
#include <vector>

namespace mlsup::cli {

struct StarterTemplate {
  std::string_view kind;  // srun, torchrun, accelerate, megatron
  std::string_view text;  // the template file as shipped
};

// Every shipped template, srun first.
const std::vector<StarterTemplate>& starter_templates();

}  // namespace mlsup::cli
