#pragma once
// A campaign's state folder as the read-only verbs see it: read without changing it, beside a
// running supervisor (which writes it with the journal's own writer and write_atomically).

#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "journal/lease.h"
#include "state/memory.h"
#include "state/state.h"
#include "util/error.h"
#include "util/journal_record.h"

namespace mlsup::store {

struct StoredJournal {
  std::vector<util::JournalRecord> records;  // every record that could be read, in order (Replay::Whole), or
                                             // those after the replay snapshot's mark
  engine::CampaignState state;               // replayed from them (and from the snapshot)
  std::vector<util::Error> problems;         // lines unread and records not applied, in line order
  std::size_t earlier = 0;                   // records the snapshot stood for (not in records)
};

// Whether the journal is read whole, or after the replay snapshot's mark when it has one that the
// journal still holds: records then holds only what follows the mark, and the state holds the
// attempts the supervisor kept (the newest), the earlier ones counted in state.earlier.
enum class Replay { Whole, FromSnapshot };

// The journal read and replayed (a campaign never started: no records, no problems).
StoredJournal read_journal(const config::Config& c, Replay how = Replay::Whole);

// memory.json (an older mlsup's heartbeat.json) on the clocks of now; a campaign never run remembers nothing.
engine::Memory read_memory(const config::Config& c, const engine::Clocks& now);

struct LeaseSeen {
  std::optional<journal::LeaseInfo> lease;  // as written; nullopt: none, or not readable as one
  double now = 0;                           // on the lease's clock: the file server's where asked for, else wall
  std::optional<double> written;            // when a supervisor last wrote it, on that clock; none: never
  bool held() const { return lease && lease->expires > now; }  // a supervisor holds the campaign now
};

// The lease. server_clock: measure the file server's clock (touches "lease.json.clock"); else wall.
LeaseSeen read_lease(const config::Config& c, double wall, bool server_clock);

// status.json: the last pass's view as its supervisor wrote it; nullopt: none yet, or not JSON.
std::optional<nlohmann::json> read_last_pass(const config::Config& c);

// All of the above, for the verbs that show a campaign.
struct StoredCampaign {
  StoredJournal journal;
  engine::Memory memory;
  LeaseSeen lease;
  std::optional<nlohmann::json> last_pass;
};
StoredCampaign read_campaign(const config::Config& c, const engine::Clocks& now, bool server_clock,
                             Replay how = Replay::Whole);

}  // namespace mlsup::store
