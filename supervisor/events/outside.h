#pragma once
// One struct per event told outside a campaign's decisions: by the supervisor's loop, by a verb, or about
// an alert sent; its kind beside it and its JSON both ways (outside.cpp). line() makes any event
// struct a line of the event log.
#include <string>

#include <nlohmann/json.hpp>

#include "events/kinds.h"
#include "util/json_fields.h"

namespace mlsup::events {

// A supervisor's pass failed; the next pass tries again.
struct PassFailed {
  static constexpr EventKind kKind{"pass-failed"};
  std::string detail;
};

// `mlsup stop` / `mlsup save` set its switch file.
struct SwitchAsked {
  std::string by, switch_, reason;
};
struct StopRequested : SwitchAsked {
  static constexpr EventKind kKind{"stop-requested"};
};
struct SaveRequested : SwitchAsked {
  static constexpr EventKind kKind{"save-requested"};
};

// An alert about an event of kind `about` was sent (outcome: what the channels answered).
struct Notified {
  static constexpr EventKind kKind{"notified"};
  std::string about, outcome;
};

// The morning report, as it is sent to a channel.
struct Report {
  static constexpr EventKind kKind{"report"};
  std::string alert_kind = "report", reason;
};

#define MLSUP_OUTSIDE_EVENTS(X) \
  X(PassFailed)                 \
  X(StopRequested)              \
  X(SaveRequested)              \
  X(Notified)                   \
  X(Report)

MLSUP_OUTSIDE_EVENTS(MLSUP_FIELDS_JSON_DECLARE)

// An event of kind what with these fields as a line of campaign's event log at time: the fields with
// "event", "time" and "campaign" added.
inline nlohmann::json line(EventKind what, nlohmann::json fields, double time, const std::string& campaign) {
  fields["event"] = what.name();
  fields["time"] = time;
  fields["campaign"] = campaign;
  return fields;
}
// Event e (a struct of events/) as such a line.
template <class E>
nlohmann::json line(const E& e, double time, const std::string& campaign) {
  return line(E::kKind, nlohmann::json(e), time, campaign);
}

}  // namespace mlsup::events
