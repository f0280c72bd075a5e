#pragma once
// What `mlsup --version` says: mlsup's version, the Slurm release it was built against and that
// release's libslurm API, and a warning when the libslurm loaded at run time has another API (its
// structures and wire protocol differ). libslurm names its API, not its release, at run time.
#include <string>

namespace mlsup::cli {

// "22.05.8" from a Slurm version number (SLURM_VERSION_NUM: a << 16 | b << 8 | c).
std::string slurm_version_name(long number);

// The --version text: mlsup's version, the Slurm release and libslurm API built against, the API running.
std::string version_text(long built_release, long built_api, long running_api);

// The warning for stderr when the API built against (its current number) differs from the running
// one (slurm_api_version(): current << 16 | revision << 8 | age); "" when they agree.
std::string version_warning(long built_release, long built_api, long running_api);

// The --version text of this binary; prints the warning, if any, to stderr.
std::string version_flag();

}  // namespace mlsup::cli
