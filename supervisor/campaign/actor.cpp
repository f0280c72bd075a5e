// The actor's books: the journal and the state replayed from it, the event log and alerts, all written
// under the lease.
#include "campaign/actor.h"

#include "journal/journal.h"
#include "store/replay_snapshot.h"
#include "views/status_view.h"
#include "views/alert_kinds.h"

namespace mlsup::engine {
using nlohmann::json;

Actor::Actor(const config::Config& config, const Edges& edges, Memory& memory, const std::string& campaign_id,
             TemplateKeeper& templates)
    : config_(config), edges_(edges), memory_(memory), campaign_id_(campaign_id), templates_(templates),
      notifier_(config.notify, config.state_dir, config.base_dir) {}
Actor::~Actor() = default;

util::Result<void> Actor::open() {
  const std::string path = config_.dir().journal();
  // each record applied as it is read: the records are never all in memory
  const std::function<void(journal::Record&&)> sink = [this, &path](journal::Record&& r) { apply(state_, r, path); };
  if (auto after = store::open_after_snapshot(config_, state_, sink)) {  // the records after its mark only
    snapshot_count_ = after->covered;
    journal_ = std::make_unique<journal::Journal>(std::move(after->journal));
  } else {
    auto j = journal::Journal::open(path, config_.name, sink);
    if (!j) return std::unexpected(j.error());
    journal_ = std::make_unique<journal::Journal>(std::move(*j));
  }
  journal_->set_epoch(edges_.epoch);
  events_ = std::make_unique<journal::EventLog>(config_.dir().events());
  for (const auto& w : journal_->warnings()) event(events::JournalRepaired{w});
  return {};
}

void Actor::reload() { notifier_ = Notifier(config_.notify, config_.state_dir, config_.base_dir); }

bool Actor::take_template() {
  return templates_.take(config_, teller());
}

render::Attempt Actor::rendered(const AttemptState& a, bool own_job, const std::string* resume_from) const {
  return {a.number, resume_from ? *resume_from : a.resume_from, a.exclude, a.tag, campaign_id_, own_job ? a.signal_lead : 0,
          !a.debug.empty()};
}

util::Result<void> Actor::keep_lease(double seconds) {
  if (!edges_.keep_lease) return {};
  auto held = edges_.keep_lease(seconds);
  if (!held && (held.error().kind == util::ErrorKind::Superseded || held.error().kind == util::ErrorKind::Held))
    lease_lost_ = true;  // from now on this supervisor writes nothing another one reads
  return held;
}

util::Result<void> Actor::append(const std::string& type, json fields) {
  if (auto leased = keep_lease(0); !leased) return leased;
  auto r = journal_->append(type, std::move(fields), edges_.now());
  if (!r) return std::unexpected(r.error());
  return {};
}

void Actor::tell(events::EventKind what, json fields) {
  fields = events::line(what, std::move(fields), edges_.now(), config_.name);
  const auto kind = chosen_alert(fields, config_.notify.on);
  if (kind) fields["alert_kind"] = std::string(*kind);
  emit(fields);
  if (!kind) return;
  if (!keep_lease(kNotifyBound)) return;  // another supervisor holds the campaign now; it tells people
  const std::string outcome = notifier_.alert(fields, edges_.now());
  if (outcome == "none configured") return;
  emit(events::line(events::Notified{std::string(what.name()), outcome}, edges_.now(), config_.name));
}

void Actor::emit(const json& e) {
  (void)events_->append(e);  // the event log is for people; a failed append must not stop a decision
  if (edges_.on_event) edges_.on_event(e);
}

util::Result<void> Actor::append_fact(const std::string& type, const json& fields, events::EventKind what, json extra) {
  if (auto ok = append(type, fields); !ok) return ok;
  json ev = fields;
  ev.update(extra);
  tell(what, std::move(ev));
  return {};
}

const CampaignState& Actor::state() {
  for (const auto& r : journal_->take()) apply(state_, r, journal_->path());
  // Decisions look at the newest attempt and the one before it (chain mode); older ones are history,
  // counted in state_.earlier for status (and replayed whole by the verbs that show every one).
  constexpr std::size_t kKept = 2;
  if (state_.attempts.size() > 2 * kKept) fold_earlier(state_, kKept);
  decide::compact_restarts(state_.restarts, state_.restarts_earlier, edges_.now(), decide::restart_horizon(config_));
  keep_snapshot();
  return state_;
}

void Actor::keep_snapshot() {
  if (lease_lost_ || !state_.problems.empty() || journal_->count() < snapshot_count_ + store::kReplaySnapshotEvery) return;
  const auto mark = journal_->mark();
  snapshot_count_ = mark.count;  // tried once per that many records, whether the write goes through or not
  (void)store::write_replay_snapshot(config_.dir().replay(), config_.name, {mark, state_});
}

}  // namespace mlsup::engine
