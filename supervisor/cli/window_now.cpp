#include "cli/window_now.h"

#include "reconcile/window_now.h"
#include "util/zone.h"

namespace mlsup::cli {

std::optional<engine::WindowNow> window_now(const config::Config& c, double t) {
  if (c.window.hours.empty()) return std::nullopt;
  const auto z = util::load_zone(c.window.zone);
  return z ? engine::window_in(c, *z, t) : std::nullopt;
}

}  // namespace mlsup::cli
