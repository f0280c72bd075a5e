#include "cli/version.h"

#include <iostream>

#include <fmt/format.h>
#include <slurm/slurm.h>
#include <slurm/slurm_version.h>

namespace mlsup::cli {

std::string slurm_version_name(long number) {
  return fmt::format("{}.{:02}.{}", (number >> 16) & 0xff, (number >> 8) & 0xff, number & 0xff);
}

std::string version_text(long built_release, long built_api, long running_api) {
  return fmt::format("mlsup {}\nbuilt against Slurm {} (libslurm API {})\nrunning libslurm API {}", MLSUP_VERSION,
                     slurm_version_name(built_release), built_api, (running_api >> 16) & 0xff);
}

std::string version_warning(long built_release, long built_api, long running_api) {
  const long running = (running_api >> 16) & 0xff;
  if (running == built_api) return "";
  return fmt::format(
      "mlsup: warning: built against Slurm {} (libslurm API {}) but the libslurm loaded has API {}; rebuild mlsup "
      "and its SPANK plugin against the cluster's Slurm\n",
      slurm_version_name(built_release), built_api, running);
}

std::string version_flag() {
  const long running = slurm_api_version();
  std::cerr << version_warning(SLURM_VERSION_NUMBER, MLSUP_SLURM_API, running);
  return version_text(SLURM_VERSION_NUMBER, MLSUP_SLURM_API, running);
}

}  // namespace mlsup::cli
