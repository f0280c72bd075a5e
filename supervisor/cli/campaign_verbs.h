#pragma once
// The verbs that act on a campaign: run, tick, status, stop, save, events.
#include <chrono>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/events_view.h"
#include "supervise/loop.h"
#include "state/state.h"
#include "store/read_campaign.h"

namespace mlsup::cli {

// `mlsup run CONFIG...`: supervises until every campaign ends; prints the reason last.
int run_verb(const engine::Supervise& what);

// `mlsup tick CONFIG...`: one reconcile pass of every campaign, for cron.
int tick_verb(const engine::Supervise& what, bool verbose = false);

// How many of the newest attempts status shows in its history by default (the earlier ones are
// counted: "history_earlier"); kAllHistory shows every one.
inline constexpr std::size_t kStatusHistory = 50;
inline constexpr std::size_t kAllHistory = static_cast<std::size_t>(-1);

// `mlsup status CONFIG [--json] [--history N|all]`: the campaign's state from its journal and last pass,
// with the history of its newest attempts (history of them) and the exclusion ledger.
int status_verb(const std::string& config_path, bool json, std::size_t history = kStatusHistory);
// The full view of one campaign as `status --json` prints it, from its state folder as read (read with
// server_clock false, the lease's expiry is compared with this host's clock and nothing is written), its
// ages and figures taken at the clocks given.
nlohmann::json status_json(const config::Config& c, const store::StoredCampaign& stored, const engine::Clocks& now,
                           std::size_t history = kStatusHistory);
// With several configs and folders: one line per campaign (--json: an array of the full views, each
// with its "config"); one config alone: its full view.
int status_verb(const std::vector<std::string>& sources, bool json, std::size_t history = kStatusHistory);
// One campaign's line among several: "NAME  STATE  attempt N  job J JOBSTATE  last: CLASS".
std::string status_line(const nlohmann::json& view);

// `mlsup stop CONFIG` / `mlsup save CONFIG`: create the kill / save switch.
int switch_verb(const std::string& config_path, bool kill);
// With several configs and folders: every campaign's switch, one line each (a config with errors is
// told and skipped: exit 3); one config alone: as above.
int switch_verb(const std::vector<std::string>& sources, bool kill);

// `mlsup events CONFIG [--json]`: the event log, oldest first.
int events_verb(const std::string& config_path, bool json);
// With several configs and folders: every campaign's events merged by time, each line naming its campaign.
int events_verb(const std::vector<std::string>& sources, bool json);

// How `mlsup events` shows the log: JSON lines or text, the filter, and whether it follows the log.
struct EventsOptions {
  bool json = false;
  bool follow = false;  // after the log, print what is appended until SIGINT or SIGTERM
  EventFilter filter;
  std::chrono::milliseconds poll{500};  // --follow: how often the logs are looked at
};
// The events of the campaigns the sources name (several: merged by time, each line naming its campaign).
int events_verb(const std::vector<std::string>& sources, const EventsOptions& options);

// One event as `mlsup events` prints it: its local time, its name, then its other fields as key=value.
std::string event_line(const nlohmann::json& event);

}  // namespace mlsup::cli
