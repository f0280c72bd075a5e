#pragma once
// Job array specifications as sbatch --array takes them: "1-10%1", "0,4,8-12:2", "0-99%8".
#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mlsup::config {

struct ArraySpec {
  std::vector<std::uint32_t> task_ids;  // ascending, no duplicates
  std::optional<std::uint32_t> max_running;  // the "%N" limit, if given
  std::string text;  // as written
};

// Parses an array spec; the error says which part is wrong.
std::expected<ArraySpec, std::string> parse_array_spec(std::string_view text);

}  // namespace mlsup::config
