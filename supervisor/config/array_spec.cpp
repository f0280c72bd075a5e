#include "config/array_spec.h"

#include <algorithm>
#include <charconv>

#include "util/strings.h"

namespace mlsup::config {
namespace {

constexpr std::uint32_t kMaxTaskId = 4'000'000;  // Slurm's MaxArraySize ceiling

std::optional<std::uint32_t> task_number(std::string_view s) {
  std::uint32_t v = 0;
  const auto* end = s.data() + s.size();
  const auto [ptr, ec] = std::from_chars(s.data(), end, v);
  if (s.empty() || ec != std::errc() || ptr != end) return std::nullopt;
  return v;
}

std::string bad(std::string_view text, std::string_view part, std::string_view why) {
  return "array spec \"" + std::string(text) + "\": \"" + std::string(part) + "\" " + std::string(why) +
         " (examples: \"1-10%1\", \"0,4,8-12:2\")";
}

// Adds the ids of one comma-separated element: "N", "A-B" or "A-B:STEP".
std::expected<void, std::string> add_range(std::string_view text, std::string_view part, std::vector<std::uint32_t>& ids) {
  std::string_view range = part;
  std::uint32_t step = 1;
  if (const auto colon = part.find(':'); colon != std::string_view::npos) {
    const auto s = task_number(part.substr(colon + 1));
    if (!s || *s == 0) return std::unexpected(bad(text, part, "has a step that is not a positive integer"));
    step = *s;
    range = part.substr(0, colon);
  }
  const auto dash = range.find('-');
  const auto first = task_number(range.substr(0, dash));
  const auto last = dash == std::string_view::npos ? first : task_number(range.substr(dash + 1));
  if (!first || !last) return std::unexpected(bad(text, part, "is not a task id or a range A-B"));
  if (*last < *first) return std::unexpected(bad(text, part, "ends before it starts"));
  if (*last > kMaxTaskId) return std::unexpected(bad(text, part, "has a task id above Slurm's limit"));
  if (ids.size() + (*last - *first) / step >= kMaxTaskId + 1)  // only repeats can list more ids than there are
    return std::unexpected(bad(text, part, "lists more task ids than Slurm's limit allows"));
  for (std::uint32_t id = *first;; id += step) {
    ids.push_back(id);
    if (*last - id < step) break;  // the next id would pass last (or wrap around)
  }
  return {};
}

}  // namespace

std::expected<ArraySpec, std::string> parse_array_spec(std::string_view text) {
  ArraySpec spec;
  spec.text = std::string(util::trim(text));
  std::string_view body = spec.text;
  if (body.empty()) return std::unexpected(bad(text, body, "is empty"));
  if (const auto pct = body.find('%'); pct != std::string_view::npos) {
    const auto limit = task_number(body.substr(pct + 1));
    if (!limit || *limit == 0) return std::unexpected(bad(text, body.substr(pct), "is not a positive task limit"));
    spec.max_running = *limit;
    body = body.substr(0, pct);
  }
  for (const auto& part : util::split(body, ',')) {
    if (auto added = add_range(text, part, spec.task_ids); !added) return std::unexpected(added.error());
  }
  std::sort(spec.task_ids.begin(), spec.task_ids.end());
  spec.task_ids.erase(std::unique(spec.task_ids.begin(), spec.task_ids.end()), spec.task_ids.end());
  return spec;
}

}  // namespace mlsup::config
