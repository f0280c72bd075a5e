#pragma once
// Before anything calls into Slurm: is there a slurm.conf to read? libslurm and the Slurm commands
// end the process (or print resolver errors) when there is none; mlsup says what to set instead.
#include <optional>
#include <string>
#include <vector>

namespace mlsup::slurm {

// Where Slurm looks when SLURM_CONF is not set: the packaged default and slurmd's configless cache.
const std::vector<std::string>& default_config_paths();

// What is wrong with Slurm's configuration as seen from here, or nullopt when a slurm.conf is found:
// slurm_conf is the SLURM_CONF environment value (nullptr when unset), defaults the paths tried without it.
std::optional<std::string> config_problem(const char* slurm_conf, const std::vector<std::string>& defaults);

// config_problem for this process's environment.
std::optional<std::string> config_problem();

}  // namespace mlsup::slurm
