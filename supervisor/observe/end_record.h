#pragma once
// The end record a job's script writes as it ends (the lines mlsup adds to a shell batch script,
// render/end_record.h): "exit_code=N" and "signal=S" lines, and on a SIGTERM "slurm=" with Slurm's
// record of the job then (`scontrol -o show job`), renamed into place whole. Pure.
#include <optional>
#include <string_view>

#include "decide/recall.h"

namespace mlsup::observe {

// The exit an end record tells; nullopt for a text that is not one (both keys, small whole numbers).
std::optional<decide::ExitSeen> parse_end_record(std::string_view text);

}  // namespace mlsup::observe
