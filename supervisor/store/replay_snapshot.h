#pragma once
// The replay snapshot (<state_dir>/replay.json): the campaign's state as its journal told it up to a
// mark, kept so that the next process to open a long journal parses only the records after the mark.
// A cache, never the truth: one that is missing, of another version, or whose mark the journal no
// longer holds is ignored and the journal replayed whole.
#include <cstddef>
#include <functional>
#include <optional>
#include <string>

#include "config/config.h"
#include "journal/journal.h"
#include "state/state.h"
#include "util/error.h"

namespace mlsup::store {

struct ReplaySnapshot {
  journal::Mark mark;           // the journal up to here ...
  engine::CampaignState state;  // ... replayed (attempts trimmed as the supervisor keeps them)
};

// A supervisor keeps a new snapshot once its journal has gained this many records since the last.
inline constexpr std::size_t kReplaySnapshotEvery = 200;

// The snapshot at path written for campaign, when this mlsup reads it and the journal at journal_path
// still holds its mark; nullopt otherwise.
std::optional<ReplaySnapshot> read_replay_snapshot(const std::string& path, const std::string& campaign,
                                                   const std::string& journal_path);

// Writes it whole (not synced: one lost in a crash costs a full replay, nothing else).
util::Result<void> write_replay_snapshot(const std::string& path, const std::string& campaign, const ReplaySnapshot& s);

// The campaign's journal opened after its snapshot's mark, when it has a snapshot the journal still
// holds: s becomes the snapshot's state and sink (which applies to s) is given only the records after
// the mark; covered is how many records the snapshot stands for. nullopt otherwise, s as it was.
struct AfterSnapshot {
  journal::Journal journal;
  std::size_t covered = 0;
};
std::optional<AfterSnapshot> open_after_snapshot(const config::Config& c, engine::CampaignState& s,
                                                 const std::function<void(journal::Record&&)>& sink);

// The campaign's state as its journal tells it, from the snapshot and the records after its mark when
// it has one, else from the whole journal; changes nothing (store::read_journal's state, read
// Replay::FromSnapshot).
engine::CampaignState replayed_state(const config::Config& c);

}  // namespace mlsup::store
