#include "store/replay_snapshot.h"

#include <utility>

#include <nlohmann/json.hpp>

#include "journal/atomic_file.h"
#include "state/snapshot.h"
#include "store/read_campaign.h"
#include "util/files.h"
#include "util/json.h"

namespace mlsup::store {
namespace {
using nlohmann::json;

constexpr int kFormat = 1;  // of replay.json around the state (whose codec has its own version)

json mark_json(const journal::Mark& m) {
  return {{"bytes", m.bytes}, {"count", m.count}, {"last_seq", m.last_seq}, {"newest_epoch", m.newest_epoch},
          {"last_line", m.last_line}};
}

std::optional<journal::Mark> mark_from(const json& j) {
  try {
    return journal::Mark{j.at("bytes").get<std::size_t>(), j.at("count").get<std::size_t>(), j.at("last_seq").get<long long>(),
                         j.at("newest_epoch").get<long long>(), j.at("last_line").get<std::string>()};
  } catch (const json::exception&) {
    return std::nullopt;
  }
}

}  // namespace

std::optional<ReplaySnapshot> read_replay_snapshot(const std::string& path, const std::string& campaign,
                                                   const std::string& journal_path) {
  const auto text = util::read_file(path);
  if (!text) return std::nullopt;
  const json j = json::parse(*text, nullptr, false);
  if (!j.is_object() || j.value("mlsup_replay", 0) != kFormat || j.value("campaign", "") != campaign || !j.contains("state") ||
      !j.contains("journal"))
    return std::nullopt;
  auto mark = mark_from(j["journal"]);
  if (!mark || !journal::Journal::continues(journal_path, *mark)) return std::nullopt;
  auto state = engine::state_from_json(j["state"]);
  if (!state) return std::nullopt;
  return ReplaySnapshot{std::move(*mark), std::move(*state)};
}

util::Result<void> write_replay_snapshot(const std::string& path, const std::string& campaign, const ReplaySnapshot& s) {
  const json j = {{"mlsup_replay", kFormat}, {"campaign", campaign}, {"journal", mark_json(s.mark)},
                  {"state", engine::state_to_json(s.state)}};
  return journal::write_atomically(path, util::dump_json(j) + "\n", 0644, journal::Sync::None);
}

std::optional<AfterSnapshot> open_after_snapshot(const config::Config& c, engine::CampaignState& s,
                                                 const std::function<void(journal::Record&&)>& sink) {
  const std::string path = c.dir().journal();
  auto snap = read_replay_snapshot(c.dir().replay(), c.name, path);
  if (!snap) return std::nullopt;
  engine::CampaignState before = std::exchange(s, std::move(snap->state));
  auto j = journal::Journal::open(path, c.name, sink, snap->mark);
  if (!j) {
    s = std::move(before);  // what the sink applied before the failure goes with it
    return std::nullopt;
  }
  return AfterSnapshot{std::move(*j), snap->mark.count};
}

engine::CampaignState replayed_state(const config::Config& c) { return read_journal(c, Replay::FromSnapshot).state; }

}  // namespace mlsup::store
