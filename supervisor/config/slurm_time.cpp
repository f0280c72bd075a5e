#include "config/slurm_time.h"

#include <charconv>
#include <vector>

#include "util/strings.h"

namespace mlsup::config {
namespace {

// A field of a time: a count of days, hours, minutes or seconds; up to 10^9, so no sum of them overflows.
std::optional<long long> number(std::string_view s) {
  long long v = 0;
  const auto* end = s.data() + s.size();
  const auto [ptr, ec] = std::from_chars(s.data(), end, v);
  if (s.empty() || ec != std::errc() || ptr != end || v < 0 || v > 1'000'000'000) return std::nullopt;
  return v;
}

std::string bad_time(std::string_view text) {
  return "\"" + std::string(text) +
         "\" is not a Slurm time (use minutes \"90\", \"H:M:S\" such as \"20:00:00\", or \"D-H:M:S\" such as \"1-12:00:00\")";
}

}  // namespace

std::expected<std::optional<Seconds>, std::string> parse_slurm_time(std::string_view text) {
  const std::string_view s = util::trim(text);
  if (s == "INFINITE" || s == "UNLIMITED" || s == "infinite" || s == "unlimited") return std::optional<Seconds>{};
  long long days = 0;
  std::string_view clock = s;
  const auto dash = s.find('-');
  if (dash != std::string_view::npos) {
    const auto d = number(s.substr(0, dash));
    if (!d) return std::unexpected(bad_time(text));
    days = *d;
    clock = s.substr(dash + 1);
  }
  std::vector<long long> parts;
  for (const auto& field : util::split(clock, ':')) {
    const auto v = number(field);
    if (!v) return std::unexpected(bad_time(text));
    parts.push_back(*v);
  }
  long long seconds = 0;
  if (dash != std::string_view::npos) {
    // D-H, D-H:M, D-H:M:S
    if (parts.size() > 3) return std::unexpected(bad_time(text));
    const long long weights[] = {3600, 60, 1};
    for (std::size_t i = 0; i < parts.size(); ++i) seconds += parts[i] * weights[i];
  } else if (parts.size() == 1) {
    seconds = parts[0] * 60;
  } else if (parts.size() == 2) {
    seconds = parts[0] * 60 + parts[1];
  } else if (parts.size() == 3) {
    seconds = parts[0] * 3600 + parts[1] * 60 + parts[2];
  } else {
    return std::unexpected(bad_time(text));
  }
  seconds += days * 86400;
  if (seconds <= 0) return std::unexpected("\"" + std::string(text) + "\" is a zero time limit");
  return std::optional<Seconds>(Seconds(seconds));
}

}  // namespace mlsup::config
