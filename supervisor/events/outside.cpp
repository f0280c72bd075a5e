// Each event's JSON from a table of its fields (util/json_fields.h), read back leniently as reconcile.cpp's.
#include "events/outside.h"

#include <tuple>


namespace mlsup::events {
using nlohmann::json;

namespace {

using util::fields::lenient;

auto fields(const PassFailed*) { return std::tuple{lenient("detail", &PassFailed::detail)}; }
auto fields(const SwitchAsked*) {
  using E = SwitchAsked;
  return std::tuple{lenient("by", &E::by), lenient("switch", &E::switch_), lenient("reason", &E::reason)};
}
auto fields(const StopRequested*) { return fields(static_cast<const SwitchAsked*>(nullptr)); }
auto fields(const SaveRequested*) { return fields(static_cast<const SwitchAsked*>(nullptr)); }
auto fields(const Notified*) { return std::tuple{lenient("about", &Notified::about), lenient("outcome", &Notified::outcome)}; }
auto fields(const Report*) { return std::tuple{lenient("alert_kind", &Report::alert_kind), lenient("reason", &Report::reason)}; }

}  // namespace

MLSUP_OUTSIDE_EVENTS(MLSUP_FIELDS_JSON_DEFINE)

}  // namespace mlsup::events
