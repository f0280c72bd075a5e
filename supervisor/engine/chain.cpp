// Chain mode's part of the reconcile pass: the next attempt goes to the array's next queued task,
// which takes its values at its start; mlsup learns which task claimed it, keeps excluded nodes off
// the queued tasks, and submits a new chain when the old one runs out.
#include "engine/chain.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "checkpoint/checkpoints.h"
#include "engine/campaign.h"
#include "journal/atomic_file.h"
#include "journal/journal.h"
#include "render/chain.h"
#include "util/files.h"
#include "util/strings.h"

namespace mlsup::engine {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string read_file(const std::string& path) { return util::read_file(path).value_or(""); }

bool live(const slurm::Job& j) { return j.state == slurm::JobState::Pending || j.state == slurm::JobState::Running; }

std::string claim_dir(const config::Config& c, int attempt) {
  return render::chain_dir(c) + "/claims/" + std::to_string(attempt);
}

}  // namespace

std::optional<Claim> parse_claim(const std::string& text) {
  if (text.empty() || text.back() != '\n') return std::nullopt;
  const std::string line = text.substr(0, text.size() - 1);
  std::vector<std::string> parts;
  std::size_t at = 0;
  for (int i = 0; i < 3; ++i) {
    const auto sp = line.find(' ', at);
    if (sp == std::string::npos) return std::nullopt;
    parts.push_back(line.substr(at, sp - at));
    at = sp + 1;
  }
  Claim c{0, parts[1], parts[2], line.substr(at)};
  try {
    c.job_id = static_cast<slurm::JobId>(std::stoul(parts[0]));
  } catch (...) {
    return std::nullopt;
  }
  if (c.job_id == 0 || (c.how != "prepared" && c.how != "fallback")) return std::nullopt;
  return c;
}

bool chain_goes_on(const std::vector<slurm::Job>& jobs, slurm::JobId ended_task) {
  return std::any_of(jobs.begin(), jobs.end(), [&](const slurm::Job& j) {
    return live(j) && !(j.job_id == ended_task && j.array_task_id);
  });
}

const slurm::Job* queued_remainder(const std::vector<slurm::Job>& jobs) {
  const auto it = std::find_if(jobs.begin(), jobs.end(), [](const slurm::Job& j) {
    return !j.array_task_id && j.state == slurm::JobState::Pending;
  });
  return it == jobs.end() ? nullptr : &*it;
}

// The previous attempt's chain's task that is queued or running (its pending remainder first), or
// none when there is no chain to go on with.
slurm::Result<std::optional<slurm::Job>> Campaign::queued_task(const AttemptState* previous) {
  if (!previous || !previous->chain || !previous->job_id) return std::nullopt;
  auto jobs = edges_.slurm->jobs({*previous->job_id});
  if (!jobs) return std::unexpected(jobs.error());
  if (const auto* rest = queued_remainder(*jobs)) return *rest;
  for (const auto& j : *jobs)
    if (live(j) && j.array_task_id && j.job_id != previous->task_job_id.value_or(0)) return j;
  return std::nullopt;
}

void Campaign::write_chain_values(const AttemptState& a, const std::string* resume_from) {
  const std::string dir = render::chain_dir(config_);
  const std::string text = render::chain_values(config_, {a.number, resume_from ? *resume_from : a.resume_from, a.exclude});
  if (read_file(dir + "/next.env") == text) return;
  std::error_code ec;
  fs::create_directories(dir + "/claims", ec);
  if (auto ok = journal::write_atomically(dir + "/next.env", text, 0644); !ok)
    event("chain-values-failed", {{"attempt", a.number}, {"detail", ok.error().message}});
}

std::optional<std::string> Campaign::patch_queued(const AttemptState& a, const slurm::Job& queued,
                                                  const std::vector<std::string>& before) {
  if (queued.state != slurm::JobState::Pending) return std::nullopt;
  const auto now = slurm::expand_hostlist(queued.excluded_nodes);
  std::vector<std::string> nodes;
  for (const auto& n : now)
    if (std::find(before.begin(), before.end(), n) == before.end()) nodes.push_back(n);
  for (const auto& n : a.exclude)
    if (std::find(nodes.begin(), nodes.end(), n) == nodes.end()) nodes.push_back(n);
  if (util::join(nodes, ",") == util::join(now, ",")) return std::nullopt;
  if (auto held = hold(kSlurmCallBound); !held) return "not updated: " + held.error().message;
  const auto done = edges_.slurm->set_excluded(queued.job_id, util::join(nodes, ","));
  if (!done) return "not updated: " + done.error().message;
  const auto back = edges_.slurm->jobs({queued.job_id});  // read it back
  const auto* rest = back ? queued_remainder(*back) : nullptr;
  return rest ? rest->excluded_nodes : "?";
}

util::Result<void> Campaign::hand_over(const AttemptState& a, const slurm::Job& queued, const std::vector<std::string>& before) {
  write_chain_values(a);
  json ev = {{"attempt", a.number}, {"job_id", *a.job_id}, {"resume_from", a.resume_from}, {"exclude", a.exclude},
             {"reason", "the chain's next queued task runs it, with these values"}};
  if (const auto list = patch_queued(a, queued, before)) ev["exc_node_list"] = *list;
  event("handed-over", ev);
  return {};
}

util::Result<void> Campaign::watch_chain(const CampaignState& s, const AttemptState& a, const std::vector<slurm::Job>& jobs) {
  write_chain_values(a);  // again: a supervisor may have died between the intent and the hand-over
  if (const auto claim = parse_claim(read_file(claim_dir(config_, a.number) + "/task"))) {
    if (auto ok = record("claimed", {{"attempt", a.number}, {"job_id", claim->job_id}, {"task", claim->task},
                                     {"how", claim->how}, {"resume_from", claim->resume_from}});
        !ok)
      return ok;
    event("claimed", {{"attempt", a.number}, {"job_id", claim->job_id}, {"array_job_id", *a.job_id}, {"task", claim->task},
                      {"values", claim->how}, {"resume_from", claim->resume_from}});
    return {};
  }
  const auto* rest = queued_remainder(jobs);
  if (rest) {  // the hand-over's patch, again, for a supervisor that died before it
    const auto previous = std::find_if(s.attempts.begin(), s.attempts.end(),
                                       [&](const AttemptState& p) { return p.number == a.number - 1; });
    const auto list = patch_queued(a, *rest, previous == s.attempts.end() ? std::vector<std::string>{} : previous->exclude);
    if (list) event("chain-excluded", {{"attempt", a.number}, {"job_id", rest->job_id}, {"exc_node_list", *list}});
  }
  const bool starting = std::any_of(jobs.begin(), jobs.end(), [](const slurm::Job& j) {
    return j.array_task_id && j.state == slurm::JobState::Running;
  });
  if (rest) write_status(s, *rest);
  if (rest && !starting) return watch_pending(a, *rest);
  if (rest || starting) return {};
  if (a.cancel_reason)  // mlsup cancelled the chain before a task took the attempt (the kill switch)
    return end_attempt(s, a, slurm::Job{.job_id = *a.job_id, .state = slurm::JobState::Cancelled}, false);
  // The chain ran out before a task took the attempt: a new chain, under a tag of its own.
  std::error_code ec;
  fs::remove_all(claim_dir(config_, a.number), ec);  // a claim its task never completed
  const std::string new_tag = tag(a.number) + "-r" + std::to_string(static_cast<long long>(edges_.now()));
  if (auto ok = record("chain-exhausted", {{"attempt", a.number}, {"job_id", *a.job_id}, {"tag", new_tag}}); !ok) return ok;
  event("chain-exhausted", {{"attempt", a.number}, {"job_id", *a.job_id},
                            {"reason", "the chain has no task left to run this attempt: a new chain is submitted"}});
  return {};
}

void Campaign::refresh_chain_fallback(const AttemptState& a) {
  const double period = std::max(10.0, 10.0 * static_cast<double>(config_.poll_interval.count()) / 1000.0);
  if (mono() - memory_.chain_refreshed_at < period) return;
  memory_.chain_refreshed_at = mono();
  const auto newest = checkpoint::newest_complete(checkpoint::scan(config_.checkpoint));
  if (newest) write_chain_values(a, &newest->path);
}

void Campaign::cancel_rest_of_chain(const CampaignState& s) {
  const AttemptState* a = s.current();
  if (!a || !a->chain || !a->job_id || (!a->ended && a->task_job_id)) return;
  if (!hold(kSlurmCallBound)) return;  // another supervisor holds the campaign now
  const auto done = edges_.slurm->cancel(*a->job_id);
  event("chain-cancelled", {{"attempt", a->number}, {"job_id", *a->job_id},
                            {"detail", done ? "the chain's remaining tasks are cancelled" : done.error().message}});
}

}  // namespace mlsup::engine
