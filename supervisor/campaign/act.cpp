// act: each intent of the pass carried out as intent record -> side effect -> fact record, and each
// fact told as an event built from its record. A submission is rendered once, when it is sent.
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <unistd.h>

#include "campaign/actor.h"
#include "reconcile/reconcile.h"
#include "edges/process.h"
#include "journal/atomic_file.h"
#include "journal/lease.h"
#include "render/submission.h"
#include "slurm/sbatch.h"
#include "util/files.h"
#include "util/json.h"
#include "util/strings.h"

namespace mlsup::engine {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Test hook: MLSUP_CRASH_AT=<point> kills this process (SIGKILL) when it reaches that point.
void crash_point(const char* point) {
  const char* at = std::getenv("MLSUP_CRASH_AT");
  if (at && std::string(at) == point) ::kill(::getpid(), SIGKILL);
}

// The last lines of a job's output file, for events.
std::string tail(const std::string& path, std::size_t lines) {
  const std::string text = util::read_end(path, 64 * 1024);
  if (text.empty()) return "";
  const auto all = util::split(text, '\n');
  std::vector<std::string> last(all.end() - static_cast<long>(std::min(lines + 1, all.size())), all.end());
  return util::join(last, "\n");
}

}  // namespace

util::Result<void> Actor::carry_out(const CampaignState& s, const Intent& i) {
  return std::visit([&](const auto& one) { return act(s, one); }, i);
}

util::Result<void> Actor::act(const CampaignState&, const intent::Report& i) {
  tell(i.event, i.fields);
  return {};
}

util::Result<void> Actor::act(const CampaignState&, const intent::Prune& i) {
  if (auto leased = keep_lease(0); !leased) return leased;  // no checkpoint is deleted without the lease
  for (const auto& old : i.old) {
    std::error_code ec;
    fs::remove_all(old.path, ec);
    event(events::CheckpointDeleted{
        old.path, old.step,
        ec ? "could not delete: " + ec.message() : "checkpoint.keep is " + std::to_string(config_.checkpoint.keep)});
  }
  return {};
}

util::Result<void> Actor::act(const CampaignState&, const intent::Submit& i) {
  records::SubmitIntent intent{i.attempt, i.tag, i.resume_from, i.resume_step, i.exclude};
  intent.signal_lead = i.signal_lead;
  intent.debug = i.debug;
  if (i.queued) {
    intent.chain = true;
    intent.chain_job = *i.chain_job;
  }
  if (i.in_job) {
    intent.in_job = *i.in_job;
    intent.step_nodes = i.step_nodes;
  }
  const bool calls_sbatch = !i.queued && !i.in_job;
  if (calls_sbatch && !submit_turn(i.attempt)) return {};  // nothing journaled: decided again when the turn comes
  if (auto ok = record(intent); !ok) return ok;
  crash_point("after-intent");
  const AttemptState a = state().attempts.back();
  if (i.queued) return hand_over(a, *i.queued, i.before);
  if (i.in_job) return hand_over_in_job(a, *i.in_job, i.step_nodes);
  if (i.stop_job) write_spare_values(AttemptState{}, *i.stop_job, {});  // the old job waits for no hand-over
  return send(a, edges_.reserve_submit != nullptr);
}

bool Actor::submit_turn(int attempt) {
  if (!edges_.reserve_submit) return true;
  if (!turn_at_) {
    const double in = edges_.reserve_submit();
    if (in <= 0) return true;
    turn_at_ = mono() + in;
    if (in >= 1)
      event(events::SubmitPaced{attempt, in, "the supervisor spaces its sbatch calls out (run/tick --submit-rate): this "
                                             "submission waits its turn, journaled when it comes"});
  }
  if (mono() + 0.01 < *turn_at_) return false;
  turn_at_.reset();
  return true;
}

util::Result<void> Actor::act(const CampaignState&, const intent::Send& i) { return send(i.attempt); }

util::Result<void> Actor::send(const AttemptState& a, bool turn_taken) {
  if (!templates_.text()) return {};  // no template has rendered yet (told by take_template)
  auto plan = render::plan_submission(config_, *templates_.text(),
                                     rendered(a, true));
  if (!plan) {  // this attempt's values break a template that renders: told, tried again next pass
    event(events::TemplateUnusable{a.number, config_.template_path, plan.error().str(), true,
                                   "nothing is submitted; tried again next pass"});
    return {};
  }
  std::error_code ec;
  fs::create_directories(config_.dir().attempt(a.number), ec);
  fs::create_directories(config_.heartbeat.dir, ec);
  const std::string script = config_.dir().attempt_script(a.number);
  if (auto ok = journal::write_atomically(script, plan->script, 0644); !ok) return std::unexpected(ok.error());
  if (plan->array) write_chain_values(a, a.resume_from);  // the first task may start the moment sbatch returns
  if (const double waited = edges_.pace_submit && !turn_taken ? edges_.pace_submit() : 0; waited >= 1)
    event(events::SubmitPaced{a.number, waited, "the supervisor spaces its sbatch calls out (run/tick --submit-rate)"});
  if (auto leased = keep_lease(static_cast<double>(slurm::kSbatchTimeout.count())); !leased) return leased;
  // Held until the journal has it: a job no journal names (an sbatch that outlived its supervisor, or
  // one of a supervisor that lost its lease) never starts, and is cancelled as a duplicate.
  auto options = plan->options;
  options.push_back("--hold");
  auto id = edges_.slurm->submit({options, plan->environment, script, config_.base_dir,
                                  [&](int pid) { (void)sbatch_started(a.number, pid); }});
  crash_point("after-sbatch");
  if (!id) return submit_failed(a, id.error());
  auto ok = fact(records::Submitted{a.number, *id, plan->array.has_value(), true},
                 events::Submitted{a.resume_from, a.resume_step, a.exclude, script,
                                   a.number == 1 ? "first attempt" : "resubmission", a.signal_lead, a.debug});
  if (!ok) return ok;
  crash_point("after-submitted");
  return release_submission(a.number, *id);
}

// sbatch-started: the sbatch that runs for attempt now, so that a supervisor after this one (should this
// one die meanwhile) can tell whether it still may submit.
util::Result<void> Actor::sbatch_started(int attempt, int pid) {
  const auto me = journal::current_identity();
  records::SbatchStarted started{attempt, pid, edges::process_start_ticks(pid).value_or(0), me.host, me.boot_id, std::nullopt};
  if (edges_.server_now) started.server_time = edges_.server_now();
  return record(started);
}

// A failed release, told once while its reason stays the same (the pass after tries again).
void Actor::release_failed(int attempt, slurm::JobId id, const slurm::Error& error, const std::string& decision) {
  focus(memory_, attempt);  // a submission's release fails before any pass has looked at its attempt
  if (memory_.release_error == error.message) return;
  memory_.release_error = error.message;
  event(events::ReleaseFailed{{attempt, id, error.message, decision}});
}

// A submission journaled: its job may start (the pass after releases it when this fails).
util::Result<void> Actor::release_submission(int attempt, slurm::JobId id) {
  if (auto leased = keep_lease(kSlurmCallBound); !leased) return leased;
  if (auto done = edges_.slurm->release(id); !done) {
    release_failed(attempt, id, done.error(), "the job waits held; its release is tried again next pass");
    return {};
  }
  return record(records::Released{attempt, id, "submission"});
}

util::Result<void> Actor::act(const CampaignState&, const intent::Adopt& i) {
  auto ok = fact(records::Adopted{{i.attempt, i.job_id, i.chain, i.held}},
                 events::Adopted{"a job with this attempt's tag already exists"});
  if (!ok || !i.held) return ok;
  return release_submission(i.attempt, i.job_id);
}

util::Result<void> Actor::act(const CampaignState&, const intent::Exclude& i) {
  records::Exclude x{i.attempt, i.blamed.node, i.blamed.reason, i.until, "", -1, 0, i.gpus};
  if (i.blamed.first_evidence) {
    x.rule = "first_evidence";
    x.rank = i.first_end.rank;
    x.step = i.first_end.step;
  }
  if (!i.rule.empty()) x.rule = i.rule;
  const auto ttl = i.blamed.first_evidence ? config_.policy.exclusion_unexplained_ttl : config_.policy.exclusion_ttl;
  return fact(x, events::Excluded{config::format_duration(ttl)});
}

util::Result<void> Actor::act(const CampaignState&, const intent::MoveExclusion& i) {
  const auto& m = i.move;
  return fact(records::ExclusionMoved{i.attempt, m.from, m.to, m.gpus, m.until,
                                      "GPU " + decide::gpu_words(m.gpus) + ", excluded on " + m.from + " (" + m.reason +
                                          "), is now in " + m.to + ": " + m.to + " is kept out in its place"},
              events::ExclusionMoved{});
}

util::Result<void> Actor::act(const CampaignState&, const intent::Lift& i) {
  const auto& f = i.fault;
  const std::string rank = f.rank < 0 ? "the same tasks" : "rank " + std::to_string(f.rank);
  return fact(records::ExclusionLifted{i.attempt, i.nodes, f.rank, f.step, f.tolerance,
                                       rank + " failed first near step " + std::to_string(f.step) + " again, on another node: the "
                                              "failure follows the training, not the node; the first-evidence rule's exclusions "
                                              "for it are lifted and it no longer excludes nodes for this failure"},
              events::ExclusionLifted{});
}

util::Result<void> Actor::act(const CampaignState&, const intent::End& i) {
  auto ok = fact(i.ended, events::AttemptEnded{i.output, i.output.empty() ? "" : tail(i.output, 10)});
  if (ok) crash_point("after-ended");
  return ok;
}

util::Result<void> Actor::act(const CampaignState&, const intent::Finish& i) {
  if (i.cancel_chain && keep_lease(kSlurmCallBound)) {  // without the lease, the supervisor that holds it does this
    const auto [attempt, array] = *i.cancel_chain;
    const auto done = edges_.slurm->cancel(array);
    event(events::ChainCancelled{attempt, array,
                                 !done                          ? done.error().message
                                 : config_.slurm.spare_nodes > 0 ? "the job, which would run the next attempt, is cancelled"
                                                                 : "the chain's remaining tasks are cancelled"});
  }
  const records::Finished finished{i.code, i.reason};
  if (i.code == 0) return fact(finished, events::Completed{{i.code}});
  return fact(finished, events::Stopped{{i.code}});
}

util::Result<void> Actor::act(const CampaignState&, const intent::Relax& i) {
  if (auto leased = keep_lease(kSlurmCallBound); !leased) return leased;
  if (auto done = edges_.slurm->set_excluded(i.job.job_id, util::join(i.keep, ",")); !done) {
    event(events::RelaxFailed{i.attempt.number, i.job.job_id, i.node, done.error().message, "retry next pass"});
    return {};
  }
  memory_.unavailable_since = mono();  // the next one only after another full wait
  const auto now = edges_.slurm->jobs({i.job.job_id});  // read the change back
  return fact(records::Relaxed{i.attempt.number, i.job.job_id, i.node},
              events::ExclusionsRelaxed{
                  now && !now->empty() ? now->front().excluded_nodes : "?",
                  "pending for " + i.job.reason + " while mlsup excludes " + util::join(i.attempt.exclude, ",") +
                      ": the oldest exclusion is dropped so that the job can run"});
}

util::Result<void> Actor::act(const CampaignState&, const intent::PendingAlert& i) {
  const std::string job = "job " + std::to_string(i.job.job_id);
  const std::string why =
      i.never_starts ? job + " can never start as asked (Slurm: " + i.job.reason +
                           "): fix the request (nodes, time, constraints) or the partition, then `mlsup stop` and run again"
                     : job + " has been pending " + std::to_string(static_cast<long long>(i.waited)) + "s for " +
                           i.job.reason + ", which waiting does not end: fix the request or the limit, or `mlsup stop`";
  return fact(records::PendingAlert{i.attempt, i.job.job_id, i.job.reason},
              events::PendingStuck{i.job.reason, true, i.never_starts, why});
}

// status.json changes when what it says of the job changes ("updated": since when it says so): an idle
// pass compares what it would say with what it said, and builds no JSON. A new step alone is not
// written (status --json reads the heartbeat itself): it goes with the next change, or at flush. Never
// synced: the next pass says it again.
util::Result<void> Actor::act(const CampaignState& s, const intent::Status& i) {
  StatusSaid said{s.current() ? s.current()->number : 0, i.job.job_id, i.job.state, i.job.nodes, i.job.reason,
                  combined(memory_.heartbeat).step};
  if (!status_said_) status_said_ = status_in_file();  // a new process (a tick): what the last one wrote
  if (said == status_said_) {
    status_due_.reset();
    return {};
  }
  StatusSaid stepless = said;
  if (status_said_) stepless.step = status_said_->step;
  if (stepless == status_said_) status_due_ = std::move(said);
  else write_status(said);
  return {};
}

std::optional<Actor::StatusSaid> Actor::status_in_file() const {
  const auto text = util::read_file(config_.dir().status());
  if (!text) return std::nullopt;
  const auto j = json::parse(*text, nullptr, false);
  if (!j.is_object()) return std::nullopt;
  return StatusSaid{static_cast<int>(util::number_field(j, "attempts", 0)),
                    static_cast<slurm::JobId>(util::number_field(j, "job_id", 0)),
                    slurm::state_from_name(util::string_field(j, "job_state")), util::string_field(j, "nodes"),
                    util::string_field(j, "reason"), static_cast<long long>(util::number_field(j, "step", -1))};
}

void Actor::flush_status() {
  if (status_due_ && write_status(*status_due_)) status_due_.reset();
}

bool Actor::write_status(const StatusSaid& said) {
  if (!keep_lease(0)) return false;  // another supervisor's to write now
  const json j = {{"version", 1},          {"campaign", config_.name},   {"attempts", said.attempts},
                  {"job_id", said.job_id}, {"job_state", std::string(slurm::state_name(said.state))},
                  {"nodes", said.nodes},   {"reason", said.reason},      {"step", said.step},
                  {"updated", edges_.now()}};
  if (!journal::write_atomically(config_.dir().status(), util::dump_json(j) + "\n", 0644, journal::Sync::None)) return false;
  status_said_ = said;
  status_due_.reset();
  return true;
}

}  // namespace mlsup::engine
