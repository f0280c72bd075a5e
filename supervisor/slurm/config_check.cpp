#include "slurm/config_check.h"

#include <cstdlib>
#include <filesystem>

#include "util/strings.h"

namespace mlsup::slurm {
namespace {

constexpr const char* kHowToSet =
    "set SLURM_CONF to the cluster's slurm.conf (export SLURM_CONF=/path/to/slurm.conf); for the local test cluster, "
    "`source DIR/env` (tests/cluster/cluster.sh start --dir DIR prints it)";

bool is_file(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec);
}

}  // namespace

const std::vector<std::string>& default_config_paths() {
  static const std::vector<std::string> paths = {"/etc/slurm/slurm.conf", "/run/slurm/conf/slurm.conf"};
  return paths;
}

std::optional<std::string> config_problem(const char* slurm_conf, const std::vector<std::string>& defaults) {
  if (slurm_conf && *slurm_conf) {
    if (is_file(slurm_conf)) return std::nullopt;
    return std::string("Slurm's configuration is missing: SLURM_CONF=") + slurm_conf + " is not a file; " + kHowToSet;
  }
  for (const auto& path : defaults)
    if (is_file(path)) return std::nullopt;
  return "Slurm's configuration is missing: SLURM_CONF is not set and there is no " + util::join(defaults, " nor ") +
         "; " + kHowToSet;
}

std::optional<std::string> config_problem() { return config_problem(std::getenv("SLURM_CONF"), default_config_paths()); }

}  // namespace mlsup::slurm
