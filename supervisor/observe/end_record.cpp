#include "observe/end_record.h"

#include <charconv>

#include "util/strings.h"

namespace mlsup::observe {
namespace {

// "key=N" with N in 0..255 into out; false for another key or value.
bool read_value(std::string_view line, std::string_view key, std::optional<int>& out) {
  if (!util::starts_with(line, key) || line.size() <= key.size() || line[key.size()] != '=') return false;
  const std::string_view value = line.substr(key.size() + 1);
  int v = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || end != value.data() + value.size() || v < 0 || v > 255) return false;
  out = v;
  return true;
}

}  // namespace

std::optional<decide::ExitSeen> parse_end_record(std::string_view text) {
  std::optional<int> code, signal;
  std::optional<slurm::JobState> said;
  for (const auto& raw : util::split(std::string(text), '\n')) {
    const std::string_view line = util::trim(raw);
    if (line.empty()) continue;
    if (util::starts_with(line, "slurm=")) {  // Slurm's record of the job as the SIGTERM came ("" when not asked)
      said = decide::ended_by(line.substr(6));
      continue;
    }
    if (!read_value(line, "exit_code", code) && !read_value(line, "signal", signal)) return std::nullopt;
  }
  if (!code || !signal) return std::nullopt;
  return decide::ExitSeen{*code, *signal, said};
}

}  // namespace mlsup::observe
