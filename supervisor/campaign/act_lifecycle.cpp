// act for the lifecycle verbs (state/lifecycle.h): a request journaled and its file removed; a held
// job, a released one, the kill switch set for a pause --now or a cancel; an exclusion lifted (unexclude).
#include <algorithm>
#include <filesystem>

#include "campaign/actor.h"
#include "reconcile/reconcile.h"
#include "journal/atomic_file.h"
#include "util/files.h"
#include "util/json.h"

namespace mlsup::engine {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr int kRequestsPerPass = 16;  // more wait for the next pass

}  // namespace

std::vector<Request> read_requests(const std::string& dir) {
  std::vector<Request> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const auto name = it->path().filename().string();
    if (!name.ends_with(".json")) continue;  // a request being written is a temporary file beside it
    const auto text = journal::read_file(it->path().string());
    if (!text) continue;
    if (auto r = request_from_json(name.substr(0, name.size() - 5), json::parse(*text, nullptr, false))) out.push_back(*r);
  }
  return out;
}

util::Result<void> Actor::take_requests() {
  for (int n = 0; n < kRequestsPerPass; ++n) {
    auto next = next_request(state(), read_requests(config_.dir().requests()));
    if (!next) return {};
    if (auto ok = act(state(), *next); !ok) return ok;
  }
  return {};
}

util::Result<void> Actor::take(const records::Asked& asked, const Request& r, const std::string& reason) {
  switch (r.verb) {
    case Verb::Resume: return fact(records::Resumed{asked, r.from, r.from_step}, events::CampaignResumed{{reason}});
    case Verb::Pause: return fact(records::Paused{asked, r.now}, events::CampaignPaused{{reason}});
    case Verb::Cancel: return fact(records::CancelRequested{asked}, events::CancelRequested{{reason}});
    case Verb::Unexclude: return fact(records::Unexcluded{asked, r.node, r.why}, events::Unexcluded{{reason}});
  }
  return {};
}

util::Result<void> Actor::act(const CampaignState& s, const intent::TakeRequest& i) {
  const auto& r = i.request;
  const std::string file = config_.dir().requests() + "/" + r.id + ".json";
  const records::Asked asked{r.id, std::string(verb_name(r.verb)), r.by};
  if (!i.done && i.refused) {
    if (auto ok = fact(records::RequestRefused{asked, i.refused->code, i.refused->message}, events::RequestRefused{}); !ok) return ok;
  } else if (!i.done) {
    if (r.verb == Verb::Resume && fs::exists(config_.switches.kill)) {  // the resumed campaign is not stopped again
      std::error_code ec;
      if (!fs::remove(config_.switches.kill, ec) && ec) {
        event(events::RequestFailed{r.id, "resume", "cannot remove the kill switch " + config_.switches.kill + ": " + ec.message(),
                                    "tried again next pass"});
        return {};
      }
    }
    if (auto ok = take(asked, r, what_happens(s, r)); !ok) return ok;
    if (r.verb == Verb::Resume && !templates_.text()) take_template();  // opened while it had ended
  }
  std::error_code ec;
  fs::remove(file, ec);
  return {};
}

util::Result<void> Actor::act(const CampaignState&, const intent::Hold& i) {
  if (auto leased = keep_lease(kSlurmCallBound); !leased) return leased;
  if (auto done = edges_.slurm->hold(i.job_id); !done) {
    event(events::HoldFailed{{i.attempt.number, i.job_id, done.error().message, "tried again next pass"}});
    return {};
  }
  const bool window = i.why == "window";
  return fact(records::Held{i.attempt.number, i.job_id, i.why},
              events::JobHeld{{window ? "outside the campaign's window: its queued job waits for the next opening"
                                      : "the campaign is paused: its queued job waits until `mlsup resume`"}});
}

util::Result<void> Actor::act(const CampaignState& s, const intent::Release& i) {
  if (auto leased = keep_lease(kSlurmCallBound); !leased) return leased;
  if (auto done = edges_.slurm->release(i.job_id); !done) {
    if (done.error().kind == slurm::ErrorKind::Rejected)  // Slurm holds the job to what it asks, which it cannot give
      return act(s, intent::Cancel{i.attempt, decide::EndClass::Refused,
                                   "Slurm refuses to let job " + std::to_string(i.job_id) + " start: " +
                                       done.error().message + "; it can never start as asked and is cancelled"});
    release_failed(i.attempt.number, i.job_id, done.error(), "tried again next pass");
    return {};
  }
  if (i.attempt.held_for == "submission")  // a submission's release, which an earlier pass could not make
    return record(records::Released{i.attempt.number, i.job_id, "submission"});
  return fact(records::Released{i.attempt.number, i.job_id, ""}, events::JobReleased{{"the pause is over: the job may start"}});
}

namespace {

// Why the training is asked to save and exit, as the kill-switch-set event says it.
std::string stop_reason(const std::string& why) {
  if (why == "pause") return "`mlsup pause --now`: the training saves and exits; the campaign is paused, not stopped";
  if (why == "window") return "the campaign's window closed: the training saves and exits; the next window carries it on";
  return "`mlsup cancel`: the training saves and exits, then its job is cancelled";
}

}  // namespace

util::Result<void> Actor::act(const CampaignState&, const intent::AskToStop& i) {
  if (auto leased = keep_lease(0); !leased) return leased;
  const std::string path = config_.switches.kill;
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  if (auto ok = journal::write_atomically(path, i.why + " requested\n"); !ok) {
    event(events::SwitchFailed{i.attempt.number, path, ok.error().str(), "tried again next pass"});
    return {};
  }
  return fact(records::SwitchSet{i.attempt.number, i.why}, events::KillSwitchSet{{path, stop_reason(i.why)}});
}

util::Result<void> Actor::act(const CampaignState&, const intent::ClearSwitch& i) {
  const std::string path = config_.switches.kill;
  const bool ours = util::read_file(path).value_or("").starts_with("window requested");
  std::error_code ec;
  if (ours && !fs::remove(path, ec) && ec) {
    event(events::SwitchFailed{i.attempt.number, path, "cannot remove it: " + ec.message(), "tried again next pass"});
    return {};
  }
  return fact(records::SwitchCleared{i.attempt.number, ours},
              events::KillSwitchCleared{
                  {path, ours ? "the window opened: the kill switch set at its end is removed, and the next attempt goes on"
                              : "the kill switch now holds a person's stop, not the window's: it is left, and followed"}});
}

}  // namespace mlsup::engine
