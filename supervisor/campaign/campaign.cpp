#include "campaign/campaign.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <random>
#include <sstream>

#include "config/diff.h"
#include "events/kinds.h"
#include "reconcile/reconcile.h"
#include "journal/atomic_file.h"
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
    : config_(std::move(config)),
      edges_(std::move(edges)),
      actor_(config_, edges_, memory_, campaign_id_, templates_),
      observer_(config_, edges_, memory_, campaign_id_, templates_, actor_.teller()) {}
Campaign::~Campaign() = default;

util::Result<std::unique_ptr<Campaign>> Campaign::open(config::Config config, Edges edges) {
  std::error_code ec;
  fs::create_directories(config.dir().logs(), ec);
  if (ec) return std::unexpected(error("cannot create the state directory " + config.state_dir + ": " + ec.message()));
  std::unique_ptr<Campaign> c(new Campaign(std::move(config), std::move(edges)));
  if (auto zone = c->observer_.window_zone(); !zone) return std::unexpected(zone.error());
  if (auto opened = c->actor_.open(); !opened) return std::unexpected(opened.error());
  auto& actor = c->actor_;
  if (!actor.state().problems.empty()) return c;  // every pass reports them; no new id, no claim on a state that lacks records
  if (actor.state().campaign_id.empty()) {
    if (auto ok = actor.record(records::Campaign{random_id(), c->config_.name}); !ok)
      return std::unexpected(ok.error());
  }
  c->campaign_id_ = actor.state().campaign_id;
  if (auto ok = claim_checkpoint_dir(c->config_, c->campaign_id_); !ok) return std::unexpected(ok.error());
  c->load_memory();
  if (!actor.state().finished_code) actor.take_template();
  return c;
}

void Campaign::reload(config::Config config) {
  actor_.event(events::ConfigReloaded{.file = config.source_file, .changed = config::changed_keys(config_, config)});
  config_ = std::move(config);
  if (auto zone = observer_.window_zone(); !zone)
    actor_.event(events::ConfigReloaded{.file = config_.source_file,
                                        .detail = zone.error().str(),
                                        .decision = "the window is read in UTC until its zone can be loaded"});
  actor_.reload();
  templates_.retell();  // asked for: a template that does not render is told again
  actor_.take_template();
}

util::Result<void> Campaign::requests() {
  if (const auto& s = actor_.state(); !s.problems.empty()) return std::unexpected(s.problems.front());
  return actor_.take_requests();
}

util::Result<std::optional<Outcome>> Campaign::pass() {
  if (const auto& s = actor_.state(); !s.problems.empty()) return std::unexpected(s.problems.front());  // nothing is done on an incomplete state
  if (auto taken = actor_.take_requests(); !taken) return std::unexpected(taken.error());
  for (int r = 0; r < 2 && !actor_.state().finished_code; ++r) {
    const Progress before = progress(actor_.state());
    auto acted = round(actor_.state());
    if (actor_.lease_lost()) return std::unexpected(acted ? util::Error{.kind = util::ErrorKind::Superseded, .message = "lost the lease"}
                                                          : acted.error());
    save_memory(false);
    if (!acted) return std::unexpected(acted.error());
    if (!due_at_once(before, actor_.state(), memory_, config_, edges_.clocks())) break;
  }
  const auto& s = actor_.state();
  if (s.finished_code) return std::optional<Outcome>(Outcome{*s.finished_code, s.finished_reason});
  return std::optional<Outcome>();
}

int Campaign::last_ended() {
  const auto& attempts = actor_.state().attempts;  // the newest few (Actor::state): the newest ended is among them
  const auto it = std::find_if(attempts.rbegin(), attempts.rend(), [](const AttemptState& a) { return a.ended; });
  return it == attempts.rend() ? 0 : it->number;
}

std::optional<double> Campaign::submit_turn_in() const {
  const auto at = actor_.submit_turn_at();
  return at ? std::optional<double>(std::max(0.0, *at - edges_.monotonic())) : std::nullopt;
}

std::optional<double> Campaign::quiet_for() const {
  const double left = quiet_until_ - edges_.monotonic();
  return left > 0 ? std::optional<double>(left) : std::nullopt;
}

util::Result<void> Campaign::round(const CampaignState& s) {
  const World w = observer_.observe(s);
  auto decided = reconcile(s, w, memory_, config_, campaign_id_);
  memory_ = std::move(decided.memory);
  queued_ = decided.queued;
  quiet_until_ = decided.quiet_until;
  for (const auto& i : decided.intents)
    if (auto ok = actor_.carry_out(s, i); !ok) return ok;
  return {};
}

void Campaign::load_memory() {
  memory_ = store::read_memory(config_, edges_.clocks());
  std::error_code ec;
  if (!fs::exists(config_.dir().memory(), ec)) return;  // none yet, or an older name's: the first pass writes it
  memory_saved_ = comparable_text(memory_);
  memory_checked_ = memory_;
  observed_saved_at_ = edges_.monotonic();
}

std::string Campaign::comparable_text(const Memory& m) {
  auto j = to_json(m);
  j["clock"]["wall"] = nullptr;  // compared without the save times, written with them
  j["clock"]["mono"] = nullptr;
  return util::dump_json(j);
}

// A change a decision made is written at once and synced; observations alone wait for
// memory_save_interval (or flush) and are not synced: a crash loses what the next pass sees again.
void Campaign::save_memory(bool now) {
  memory_.clock_id = edges_.clock_id;
  if (memory_unchanged()) return;  // an idle pass builds no JSON
  const auto decisions = [this](const Memory& m) { return decisions_of(m, config_.heartbeat, config_.poll_interval); };
  const bool decided = !memory_checked_ || decisions(*memory_checked_) != decisions(memory_);
  const double mono = edges_.monotonic();
  const double interval = std::chrono::duration<double>(config_.memory_save_interval).count();
  if (!decided && !now && mono - observed_saved_at_ < interval) return;
  const std::string text = comparable_text(memory_);
  if (text == memory_saved_) {
    memory_checked_ = memory_;
    return;
  }
  memory_.saved_wall = edges_.now();
  memory_.saved_mono = mono;
  const auto sync = decided ? journal::Sync::Durable : journal::Sync::None;
  if (!journal::write_atomically(config_.dir().memory(), util::dump_json(to_json(memory_)) + "\n", 0644, sync)) return;
  memory_saved_ = text;
  memory_checked_ = memory_;
  observed_saved_at_ = mono;
}

void Campaign::flush() {
  if (!actor_.state().problems.empty() || !actor_.holds_lease()) return;  // another supervisor's to write now
  save_memory(true);
  actor_.flush_status();
}

bool Campaign::memory_unchanged() {
  if (!memory_checked_) return false;
  auto& was = *memory_checked_;  // alike but for the save times
  was.saved_wall = memory_.saved_wall;
  was.saved_mono = memory_.saved_mono;
  return was == memory_;
}

}  // namespace mlsup::engine
