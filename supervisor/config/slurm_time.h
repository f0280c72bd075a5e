#pragma once
// Slurm time limits as sbatch --time takes them.
#include <expected>
#include <optional>
#include <string>
#include <string_view>

#include "config/duration.h"

namespace mlsup::config {

// Parses "M", "M:S", "H:M:S", "D-H", "D-H:M", "D-H:M:S"; "INFINITE"/"UNLIMITED" give nullopt (no limit).
std::expected<std::optional<Seconds>, std::string> parse_slurm_time(std::string_view text);

}  // namespace mlsup::config
