#include "reconcile/window_now.h"

#include <cstdint>

#include "decide/window.h"

namespace mlsup::engine {

std::optional<WindowNow> window_in(const config::Config& c, const util::Zone& z, double t) {
  if (c.window.hours.empty()) return std::nullopt;
  const auto w = config::parse_window(c.window.hours, c.window.days);
  if (!w) return std::nullopt;
  const auto at = static_cast<std::int64_t>(t);
  return WindowNow{decide::window_open(*w, z, at), decide::next_change(*w, z, at)};
}

nlohmann::json window_json(const config::Config& c, const std::optional<WindowNow>& w) {
  if (c.window.hours.empty()) return nullptr;
  nlohmann::json j = {{"hours", c.window.hours}, {"days", c.window.days}, {"zone", c.window.zone}, {"at_end", c.window.at_end}};
  if (w) j.update({{"open", w->open}, {"until", w->changes_at}});
  return j;
}

}  // namespace mlsup::engine
