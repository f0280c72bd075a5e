#include "campaign/campaign.h"

#include <cmath>
#include <filesystem>
#include <random>
#include <sstream>

#include "config/diff.h"
#include "decide/event_kinds.h"
#include "views/alert_kinds.h"
#include "reconcile/reconcile.h"
#include "journal/atomic_file.h"
#include "journal/journal.h"
#include "render/submission.h"
#include "store/read_campaign.h"
#include "util/files.h"
#include "util/json.h"

namespace mlsup::engine {
namespace fs = std::filesystem;
namespace {

using nlohmann::json;

std::string random_id() {
  std::random_device rd;
  std::ostringstream out;
  out << std::hex << rd() << rd();
  return out.str().substr(0, 8);
}

util::Error error(std::string message) { return util::Error{.message = std::move(message)}; }

// Claims checkpoint_dir for this campaign with a marker file; refuses one claimed by another.
util::Result<void> claim_checkpoint_dir(const config::Config& c, const std::string& campaign_id) {
  std::error_code ec;
  fs::create_directories(c.checkpoint.dir, ec);
  const std::string marker = c.checkpoint.dir + "/.mlsup-campaign";
  if (const auto text = util::read_file(marker)) {
    const auto claim = json::parse(*text, nullptr, false);
    const std::string owner = util::string_field(claim, "campaign_id");
    if (owner == campaign_id) return {};
    return std::unexpected(util::Error{
        .kind = util::ErrorKind::Config, .file = c.source_file, .subject = "checkpoint.dir",
        .message = c.checkpoint.dir + " belongs to campaign \"" + util::string_field(claim, "name", "?") + "\" (state in " +
                   util::string_field(claim, "state_dir", "?") + "); give this campaign a checkpoint directory of its own"});
  }
  const json claim = {{"campaign_id", campaign_id}, {"name", c.name}, {"state_dir", c.state_dir}};
  return journal::write_atomically(marker, util::dump_json(claim) + "\n");
}

}  // namespace

Campaign::Campaign(config::Config config, Edges edges)
    : config_(std::move(config)), edges_(std::move(edges)), notifier_(config_.notify, config_.state_dir, config_.base_dir) {}
Campaign::~Campaign() = default;

util::Result<std::unique_ptr<Campaign>> Campaign::open(config::Config config, Edges edges) {
  std::error_code ec;
  fs::create_directories(config.dir().logs(), ec);
  if (ec) return std::unexpected(error("cannot create the state directory " + config.state_dir + ": " + ec.message()));
  std::unique_ptr<Campaign> c(new Campaign(std::move(config), std::move(edges)));
  if (auto zone = c->window_zone(); !zone) return std::unexpected(zone.error());
  const std::string path = c->config_.dir().journal();
  Campaign* campaign = c.get();  // each record applied as it is read: the records are never all in memory
  auto j = journal::Journal::open(path, c->config_.name, [campaign, &path](journal::Record&& r) {
    apply(campaign->state_, r, path);
  });
  if (!j) return std::unexpected(j.error());
  c->journal_ = std::make_unique<journal::Journal>(std::move(*j));
  c->journal_->set_epoch(c->edges_.epoch);
  c->events_ = std::make_unique<journal::EventLog>(c->config_.dir().events());
  for (const auto& w : c->journal_->warnings()) c->event("journal-repaired", {{"detail", w}});
  if (!c->state().problems.empty()) return c;  // every pass reports them; no new id, no claim on a state that lacks records
  if (c->state_.campaign_id.empty()) {
    if (auto ok = c->record("campaign", {{"id", random_id()}, {"name", c->config_.name}}); !ok)
      return std::unexpected(ok.error());
  }
  c->campaign_id_ = c->state().campaign_id;
  if (auto ok = claim_checkpoint_dir(c->config_, c->campaign_id_); !ok) return std::unexpected(ok.error());
  c->load_memory();
  if (!c->state_.finished_code) c->take_template();
  return c;
}

void Campaign::reload(config::Config config) {
  event("config-reloaded", {{"file", config.source_file}, {"changed", config::changed_keys(config_, config)}});
  config_ = std::move(config);
  if (auto zone = window_zone(); !zone)
    event("config-reloaded", {{"file", config_.source_file}, {"detail", zone.error().str()},
                              {"decision", "the window is read in UTC until its zone can be loaded"}});
  notifier_ = Notifier(config_.notify, config_.state_dir, config_.base_dir);
  template_problem_.clear();  // asked for: a template that does not render is told again
  take_template();
}

util::Result<void> Campaign::window_zone() {
  zone_.reset();
  window_ = {};
  if (config_.window.hours.empty()) return {};
  auto z = util::load_zone(config_.window.zone);
  if (z) {
    zone_ = std::move(*z);
    return {};
  }
  zone_ = util::Zone{"UTC", {}, {}, 0, std::nullopt};
  return std::unexpected(util::Error{.kind = util::ErrorKind::Config, .file = config_.source_file, .subject = "window.zone", .message = z.error().message});
}

double Campaign::mono() const { return edges_.mono ? edges_.mono() : edges_.now(); }

util::Result<void> Campaign::keep_lease(double seconds) {
  if (!edges_.keep_lease) return {};
  auto held = edges_.keep_lease(seconds);
  if (!held && (held.error().kind == util::ErrorKind::Superseded || held.error().kind == util::ErrorKind::Held))
    lease_lost_ = true;  // from now on this supervisor writes nothing another one reads
  return held;
}

util::Result<void> Campaign::record(const std::string& type, json fields) {
  if (auto leased = keep_lease(0); !leased) return leased;
  auto r = journal_->append(type, std::move(fields), edges_.now());
  if (!r) return std::unexpected(r.error());
  return {};
}

void Campaign::event(decide::EventKind what, json fields) {
  fields["event"] = what.name();
  fields["time"] = edges_.now();
  fields["campaign"] = config_.name;
  const auto kind = chosen_alert(fields, config_.notify.on);
  if (kind) fields["alert_kind"] = std::string(*kind);
  emit(fields);
  if (!kind) return;
  if (!keep_lease(kNotifyBound)) return;  // another supervisor holds the campaign now; it tells people
  const std::string outcome = notifier_.alert(fields, edges_.now());
  if (outcome == "none configured") return;
  emit({{"event", decide::EventKind("notified").str()}, {"time", edges_.now()}, {"campaign", config_.name}, {"about", what.name()}, {"outcome", outcome}});
}

void Campaign::emit(const json& e) {
  (void)events_->append(e);  // the event log is for people; a failed append must not stop a decision
  if (edges_.on_event) edges_.on_event(e);
}

util::Result<void> Campaign::fact(const std::string& type, const json& fields, decide::EventKind what, json extra) {
  if (auto ok = record(type, fields); !ok) return ok;
  json ev = fields;
  ev.update(extra);
  event(what, std::move(ev));
  return {};
}

Clocks Campaign::clocks() const { return {edges_.now(), mono(), edges_.clock_id}; }

const CampaignState& Campaign::state() {
  for (const auto& r : journal_->take()) apply(state_, r, journal_->path());
  // Decisions look at the newest attempt and the one before it (chain mode); older ones are history
  // that `status` reads from the journal.
  constexpr std::size_t kKept = 2;
  auto& attempts = state_.attempts;
  if (attempts.size() > 2 * kKept) {
    attempts.erase(attempts.begin(), attempts.end() - kKept);
    attempts.shrink_to_fit();  // what a long journal's replay grew is given back
  }
  return state_;
}

util::Result<std::optional<Outcome>> Campaign::pass() {
  if (!state().problems.empty()) return std::unexpected(state_.problems.front());  // nothing is done on an incomplete state
  if (auto taken = take_requests(); !taken) return std::unexpected(taken.error());
  for (int r = 0; r < 2 && !state_.finished_code; ++r) {
    const Progress before = progress(state_);
    auto acted = round(state_);
    if (lease_lost_) return std::unexpected(acted ? util::Error{.kind = util::ErrorKind::Superseded, .message = "lost the lease"}
                                                  : acted.error());
    save_memory();
    if (!acted) return std::unexpected(acted.error());
    if (!due_at_once(before, state(), memory_, config_, clocks())) break;
  }
  const auto& s = state();
  if (s.finished_code) return std::optional<Outcome>(Outcome{*s.finished_code, s.finished_reason});
  return std::optional<Outcome>();
}

util::Result<void> Campaign::round(const CampaignState& s) {
  const World w = observe(s);
  auto decided = reconcile(s, w, memory_, config_, campaign_id_);
  memory_ = std::move(decided.memory);
  queued_ = decided.queued;
  for (const auto& i : decided.intents)
    if (auto ok = carry_out(s, i); !ok) return ok;
  return {};
}

void Campaign::load_memory() {
  memory_ = store::read_memory(config_, clocks());
}

// memory.json is written when it changed: an idle pass writes nothing. The time the job was last seen
// running moves every pass; alone, it is written every 30 s (a tick's estimate of when a suspension
// began is that much early at most).
void Campaign::save_memory() {
  constexpr double kSeenRefresh = 30;
  memory_.clock_id = edges_.clock_id;
  const double seen = memory_.running_seen_at;
  const bool seen_fresh = std::abs(seen - seen_saved_) < kSeenRefresh;
  if (seen_fresh && memory_unchanged()) return;  // an idle pass builds no JSON
  auto j = to_json(memory_);
  j["clock"]["wall"] = nullptr;  // compared without the save times and that time, written with them
  j["clock"]["mono"] = nullptr;
  j["running_seen_at"] = nullptr;
  const std::string text = util::dump_json(j);
  if (text == memory_saved_ && seen_fresh) {
    memory_checked_ = memory_;
    return;
  }
  memory_.saved_wall = edges_.now();
  memory_.saved_mono = mono();
  j["clock"]["wall"] = memory_.saved_wall;
  j["clock"]["mono"] = memory_.saved_mono;
  j["running_seen_at"] = seen;
  if (!journal::write_atomically(config_.dir().memory(), util::dump_json(j) + "\n")) return;
  memory_saved_ = text;
  seen_saved_ = seen;
  memory_checked_ = memory_;
}

bool Campaign::memory_unchanged() {
  if (!memory_checked_) return false;
  auto& was = *memory_checked_;  // alike but for what is compared without: the save times, running_seen_at
  was.saved_wall = memory_.saved_wall;
  was.saved_mono = memory_.saved_mono;
  was.running_seen_at = memory_.running_seen_at;
  return was == memory_;
}

}  // namespace mlsup::engine
