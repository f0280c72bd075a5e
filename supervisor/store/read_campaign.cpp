#include "store/read_campaign.h"

#include <sys/stat.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "journal/journal.h"
#include "store/replay_snapshot.h"
#include "util/files.h"

namespace mlsup::store {

namespace {

// The journal read whole and replayed.
StoredJournal read_whole(const config::Config& c) {
  const std::string path = c.dir().journal();
  auto [records, unread] = journal::Journal::read_only(path, c.name);
  StoredJournal out{std::move(records), {}, std::move(unread)};
  out.state = engine::replay(out.records, path);
  return out;
}

// The journal after the replay snapshot's mark, applied to the snapshot's state; nullopt without a
// snapshot the journal still holds.
std::optional<StoredJournal> read_after_snapshot(const config::Config& c) {
  const std::string path = c.dir().journal();
  auto snap = read_replay_snapshot(c.dir().replay(), c.name, path);
  if (!snap) return std::nullopt;
  auto [records, unread] = journal::Journal::read_only(path, c.name, snap->mark);
  StoredJournal out{std::move(records), std::move(snap->state), std::move(unread), snap->mark.count};
  for (const auto& r : out.records) engine::apply(out.state, r, path);
  return out;
}

}  // namespace

StoredJournal read_journal(const config::Config& c, Replay how) {
  auto after = how == Replay::FromSnapshot ? read_after_snapshot(c) : std::nullopt;
  StoredJournal out = after ? std::move(*after) : read_whole(c);
  out.problems.insert(out.problems.end(), out.state.problems.begin(), out.state.problems.end());
  std::stable_sort(out.problems.begin(), out.problems.end(), [](const auto& a, const auto& b) { return a.line < b.line; });
  return out;
}

engine::Memory read_memory(const config::Config& c, const engine::Clocks& now) {
  auto text = util::read_file(c.dir().memory());
  if (!text) text = util::read_file(c.dir().old_memory());
  if (!text) return {};
  auto m = engine::memory_from_json(nlohmann::json::parse(*text, nullptr, false));
  m.clock_id = m.clock_id.empty() ? "?" : m.clock_id;  // times on a clock it does not name: re-based by the save times
  engine::rebase(m, now);
  return m;
}

LeaseSeen read_lease(const config::Config& c, double wall, bool server_clock) {
  const std::string path = c.dir().lease();
  LeaseSeen seen{journal::read_lease(path), wall, std::nullopt};
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0) return seen;
  if (server_clock) seen.now = journal::file_server_time(path).value_or(wall);
  seen.written = static_cast<double>(st.st_mtim.tv_sec) + static_cast<double>(st.st_mtim.tv_nsec) / 1e9;
  return seen;
}

std::optional<nlohmann::json> read_last_pass(const config::Config& c) {
  const auto text = util::read_file(c.dir().status());
  if (!text) return std::nullopt;
  auto pass = nlohmann::json::parse(*text, nullptr, false);
  if (pass.is_discarded()) return std::nullopt;
  return pass;
}

StoredCampaign read_campaign(const config::Config& c, const engine::Clocks& now, bool server_clock, Replay how) {
  return {read_journal(c, how), read_memory(c, now), read_lease(c, now.wall, server_clock), read_last_pass(c)};
}

}  // namespace mlsup::store
