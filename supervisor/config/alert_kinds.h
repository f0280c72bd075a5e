#pragma once
// The kinds of alert people may choose with notify.on: each a stable name, what it tells, and
// whether it is chosen when notify.on is not written (what a person wants to be paged for).
#include <span>
#include <string_view>

namespace mlsup::config {

struct AlertKind {
  std::string_view name;  // "hang": the value written in notify.on, MLSUP_ALERT_KIND, the payload's alert_kind
  std::string_view doc;   // one line for the reference config and README
  bool by_default = false;
};

// Every kind, in the order the docs list them.
std::span<const AlertKind> alert_kinds();

// The names of the kinds chosen by default.
std::span<const std::string_view> default_alert_kinds();

}  // namespace mlsup::config
