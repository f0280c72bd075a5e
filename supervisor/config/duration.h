#pragma once
// Durations in config files: an integer and a unit, e.g. "90s", "5m", "2h", "1d", or sums like "1h30m".
#include <chrono>
#include <expected>
#include <string>
#include <string_view>

namespace mlsup::config {

using Seconds = std::chrono::seconds;
using Millis = std::chrono::milliseconds;

// Parses "90s", "5m", "2h", "1d", "1h30m", "0s"; a bare number is refused (the unit is required).
std::expected<Seconds, std::string> parse_duration(std::string_view text);

// The shortest text that parse_duration reads back as d, e.g. "1h30m".
std::string format_duration(Seconds d);

// Like parse_duration, and also takes milliseconds: "500ms", "1s500ms".
std::expected<Millis, std::string> parse_interval(std::string_view text);

// The shortest text that parse_interval reads back as d, e.g. "1s500ms".
std::string format_interval(Millis d);

}  // namespace mlsup::config
