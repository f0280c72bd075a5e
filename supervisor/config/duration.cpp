#include "config/duration.h"

#include <array>
#include <cctype>
#include <utility>

#include "util/strings.h"

namespace mlsup::config {
namespace {

constexpr std::array<std::pair<char, long long>, 4> kUnits{{{'d', 86400}, {'h', 3600}, {'m', 60}, {'s', 1}}};

long long unit_seconds(char unit) {
  for (const auto& [name, seconds] : kUnits)
    if (name == unit) return seconds;
  return 0;
}

// The longest duration read, in milliseconds: 100,000,000 days (a sum beyond it would overflow).
constexpr long long kMaxMillis = 100'000'000LL * 86'400'000;

std::string too_long(std::string_view text) { return "\"" + std::string(text) + "\" is too long a duration"; }

std::string not_a_duration(std::string_view text) {
  return "\"" + std::string(text) + "\" is not a duration (try \"90s\", \"5m\", \"2h\", \"1d\" or \"1h30m\")";
}

}  // namespace

std::expected<Millis, std::string> parse_interval(std::string_view text) {
  const std::string_view s = util::trim(text);
  if (s.empty()) return std::unexpected(not_a_duration(text));
  long long total = 0;
  std::size_t i = 0;
  while (i < s.size()) {
    const std::size_t digits_start = i;
    long long value = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
      value = value * 10 + (s[i] - '0');
      if (value > 100'000'000) return std::unexpected(too_long(text));
      ++i;
    }
    if (i == digits_start || i == s.size()) return std::unexpected(not_a_duration(text));
    const bool millis = s.substr(i, 2) == "ms";
    const long long unit = millis ? 1 : unit_seconds(s[i]) * 1000;
    if (unit == 0) return std::unexpected(not_a_duration(text));
    total += value * unit;
    if (total > kMaxMillis) return std::unexpected(too_long(text));
    i += millis ? 2 : 1;
  }
  return Millis(total);
}

std::expected<Seconds, std::string> parse_duration(std::string_view text) {
  const auto ms = parse_interval(text);
  if (!ms) return std::unexpected(ms.error());
  if (ms->count() % 1000 != 0) return std::unexpected("\"" + std::string(text) + "\" is not a whole number of seconds");
  return std::chrono::duration_cast<Seconds>(*ms);
}

std::string format_interval(Millis d) {
  const long long ms = d.count() % 1000;
  const std::string whole = d.count() >= 1000 ? format_duration(std::chrono::duration_cast<Seconds>(d)) : "";
  if (ms == 0) return whole.empty() ? "0s" : whole;
  return whole + std::to_string(ms) + "ms";
}

std::string format_duration(Seconds d) {
  long long left = d.count();
  if (left == 0) return "0s";
  std::string out;
  for (const auto& [name, seconds] : kUnits) {
    if (left >= seconds) {
      out += std::to_string(left / seconds) + name;
      left %= seconds;
    }
  }
  return out;
}

}  // namespace mlsup::config
