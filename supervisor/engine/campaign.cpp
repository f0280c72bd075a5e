#include "engine/campaign.h"
#include "engine/chain.h"

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <unistd.h>

#include "checkpoint/checkpoints.h"
#include "checkpoint/retention.h"
#include "decide/ending.h"
#include "decide/pending.h"
#include "decide/policy.h"
#include "decide/submit_retry.h"
#include "edges/process.h"
#include "journal/atomic_file.h"
#include "journal/journal.h"
#include "observe/node_records.h"
#include "render/submission.h"
#include "slurm/sbatch.h"
#include "slurm/srun_messages.h"
#include "util/files.h"
#include "util/json.h"
#include "util/strings.h"

namespace mlsup::engine {
namespace fs = std::filesystem;
namespace {

using nlohmann::json;

// Test hook: MLSUP_CRASH_AT=<point> kills this process (SIGKILL) when it reaches that point.
void crash_point(const char* point) {
  const char* at = std::getenv("MLSUP_CRASH_AT");
  if (at && std::string(at) == point) ::kill(::getpid(), SIGKILL);
}

std::string random_id() {
  std::random_device rd;
  std::ostringstream out;
  out << std::hex << rd() << rd();
  return out.str().substr(0, 8);
}

// The last lines of a job's output file, for events.
std::string tail(const std::string& path, std::size_t lines) {
  const std::string text = util::read_end(path, 64 * 1024);
  if (text.empty()) return "";
  const auto all = util::split(text, '\n');
  std::vector<std::string> last(all.end() - static_cast<long>(std::min(lines + 1, all.size())), all.end());
  return util::join(last, "\n");
}

util::Error error(std::string message) { return util::Error{.message = std::move(message)}; }

// How far an ended attempt got: the step it reached, the newest complete checkpoint's, and whether
// that is past the checkpoint it resumed from.
struct Reached {
  long long step = 0, checkpoint_step = 0;
  bool progressed = false;
};

// The `ended` record's fields: what ended, how it is classed, how far it got, what was decided and why.
json ended_fields(const AttemptState& a, const slurm::Job& job, decide::EndClass cls, const Reached& r,
                  const decide::Decision& d) {
  static const char* kActions[] = {"finish", "resubmit", "stop"};
  return {{"attempt", a.number},           {"job_id", job.job_id},
          {"class", std::string(decide::class_name(cls))},
          {"slurm_state", std::string(slurm::state_name(job.state))},
          {"exit_code", job.exit_code},    {"signal", job.exit_signal},
          {"nodes", job.nodes},            {"step", r.step},
          {"checkpoint_step", r.checkpoint_step}, {"resumed_from", a.resume_from},
          {"progressed", r.progressed},    {"action", kActions[static_cast<int>(d.action)]},
          {"delay", d.delay_seconds},      {"reason", d.reason}};
}

// Claims checkpoint_dir for this campaign with a marker file; refuses one claimed by another.
util::Result<void> claim_checkpoint_dir(const config::Config& c, const std::string& campaign_id) {
  std::error_code ec;
  fs::create_directories(c.checkpoint.dir, ec);
  const std::string marker = c.checkpoint.dir + "/.mlsup-campaign";
  if (const auto text = util::read_file(marker)) {
    const auto claim = json::parse(*text, nullptr, false);
    const std::string owner = util::string_field(claim, "campaign_id");
    if (owner == campaign_id) return {};
    return std::unexpected(error("checkpoint.dir " + c.checkpoint.dir + " belongs to campaign \"" +
                                 util::string_field(claim, "name", "?") + "\" (state in " +
                                 util::string_field(claim, "state_dir", "?") +
                                 "); give this campaign a checkpoint directory of its own"));
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
  fs::create_directories(config.state_dir + "/logs", ec);
  if (ec) return std::unexpected(error("cannot create the state directory " + config.state_dir + ": " + ec.message()));
  std::unique_ptr<Campaign> c(new Campaign(std::move(config), std::move(edges)));
  auto j = journal::Journal::open(c->config_.state_dir + "/journal.jsonl", c->config_.name);
  if (!j) return std::unexpected(j.error());
  c->journal_ = std::make_unique<journal::Journal>(std::move(*j));
  c->journal_->set_epoch(c->edges_.epoch);
  c->events_ = std::make_unique<journal::EventLog>(c->config_.state_dir + "/events.jsonl");
  for (const auto& w : c->journal_->warnings()) c->event("journal-repaired", {{"detail", w}});
  auto state = replay(c->records());
  if (!state.problems.empty()) return c;  // every pass reports them; no new id, no claim on a state that lacks records
  if (state.campaign_id.empty()) {
    state.campaign_id = random_id();
    if (auto ok = c->record("campaign", {{"id", state.campaign_id}, {"name", c->config_.name}}); !ok)
      return std::unexpected(ok.error());
  }
  if (auto ok = claim_checkpoint_dir(c->config_, state.campaign_id); !ok) return std::unexpected(ok.error());
  c->campaign_id_ = state.campaign_id;
  c->load_memory();
  if (!state.finished_code) c->take_template();
  return c;
}

void Campaign::reload(config::Config config) {
  event("config-reloaded", {{"file", config.source_file}});
  config_ = std::move(config);
  notifier_ = Notifier(config_.notify, config_.state_dir, config_.base_dir);
  template_problem_.clear();  // asked for: a template that does not render is told again
  take_template();
}

std::vector<JournalRecord> Campaign::records() const {
  std::vector<JournalRecord> out;
  for (const auto& r : journal_->records()) out.push_back({r.time, r.type, r.data, r.line});
  return out;
}

double Campaign::mono() const { return edges_.mono ? edges_.mono() : edges_.now(); }

util::Result<void> Campaign::hold(double seconds) {
  if (!edges_.hold) return {};
  return edges_.hold(seconds);
}

util::Result<void> Campaign::record(const std::string& type, json fields) {
  if (auto held = hold(0); !held) return held;
  auto r = journal_->append(type, std::move(fields), edges_.now());
  if (!r) return std::unexpected(r.error());
  return {};
}

void Campaign::event(const std::string& what, json fields) {
  fields["event"] = what;
  fields["time"] = edges_.now();
  fields["campaign"] = config_.name;
  emit(fields);
  if (!fields.value("alert", false)) return;
  if (!hold(kNotifyBound)) return;  // another supervisor holds the campaign now; it tells people
  const std::string outcome = notifier_.alert(fields, edges_.now());
  if (outcome == "none configured") return;
  emit({{"event", "notified"}, {"time", edges_.now()}, {"campaign", config_.name}, {"about", what}, {"outcome", outcome}});
}

void Campaign::emit(const json& e) {
  (void)events_->append(e);  // the event log is for people; a failed append must not stop a decision
  if (edges_.on_event) edges_.on_event(e);
}

std::string Campaign::tag(int attempt) const {
  return render::job_tag(config_.name, campaign_id_, attempt);
}

bool Campaign::kill_switch() const {
  std::error_code ec;
  return fs::exists(config_.switches.kill, ec);
}

util::Result<std::optional<Outcome>> Campaign::pass() {
  CampaignState s = replay(records(), journal_->path());
  if (!s.problems.empty()) return std::unexpected(s.problems.front());  // nothing is done on an incomplete state
  for (int round = 0; round < 2 && !s.finished_code; ++round) {
    const bool was_awaiting = s.awaiting_submit;
    auto acted = act(s);
    save_memory();
    if (!acted) return std::unexpected(acted.error());
    s = replay(records());
    // An ending whose resubmission needs no wait is followed by the submission in the same pass.
    if (was_awaiting || !s.awaiting_submit || !submit_due(s)) break;
  }
  if (s.finished_code) return std::optional<Outcome>(Outcome{*s.finished_code, s.finished_reason});
  return std::optional<Outcome>();
}

util::Result<void> Campaign::act(const CampaignState& s) {
  const AttemptState* a = s.current();
  if (!a) {
    return kill_switch() ? finish(decide::kStoppedBySwitch, "the kill switch was set before the first attempt") : submit(1);
  }
  if (!a->ended) return a->job_id ? watch(s, *a) : recover_submission(*a);
  if (!s.awaiting_submit) return {};
  if (kill_switch()) return finish(decide::kStoppedBySwitch, "the kill switch was set: nothing more is submitted");
  if (submit_due(s)) return submit(a->number + 1);
  return {};
}

bool Campaign::submit_due(const CampaignState& s) {
  const AttemptState* a = s.current();
  return !a || waited(memory_.resubmit, a->number, 0, s.next_submit_at, {edges_.now(), mono(), edges_.clock_id});
}

util::Result<void> Campaign::finish(int code, const std::string& reason) {
  cancel_rest_of_chain(replay(records()));
  event(code == 0 ? "completed" : "stopped", {{"exit_code", code}, {"reason", reason}, {"alert", true}});
  return record("finished", {{"code", code}, {"reason", reason}});
}

util::Result<void> Campaign::submit(int number) {
  if (auto held = hold(0); !held) return held;  // nothing, not even a checkpoint's deletion, without the lease
  const bool renders = take_template();
  const auto scan = checkpoint::scan(config_.checkpoint);
  const auto newest = checkpoint::newest_complete(scan);
  if (!scan.pointer_problem.empty()) event("checkpoint-pointer-ignored", {{"detail", scan.pointer_problem}});
  const std::string resume_from = newest ? newest->path : "";
  prune_checkpoints(scan, resume_from);
  const auto s = replay(records());
  json intent = {{"attempt", number}, {"tag", tag(number)}, {"resume_from", resume_from},
                 {"resume_step", newest ? newest->step : 0}, {"exclude", exclusions_for(s, number)}};
  // Chain mode: a task already queued runs this attempt; nothing is submitted.
  const auto queued = queued_task(s.current());
  if (!queued) {  // ask again next pass rather than start a second chain
    event("slurm-unavailable", {{"attempt", number}, {"detail", queued.error().message},
                                {"decision", "ask again before submitting anything"}});
    return {};
  }
  if (!*queued && !renders) return {};  // no template has rendered yet: told, and looked at again next pass
  if (*queued) {
    intent["chain"] = true;
    intent["chain_job"] = *s.current()->job_id;
    intent["tag"] = s.current()->tag;
  }
  if (auto ok = record("submit-intent", intent); !ok) return ok;
  crash_point("after-intent");
  if (*queued) return hand_over(replay(records()).attempts.back(), **queued, s.current()->exclude);
  return send(replay(records()).attempts.back());
}

void Campaign::prune_checkpoints(const checkpoint::Scan& scan, const std::string& resume_from) {
  for (const auto& old : checkpoint::deletable(scan, config_.checkpoint.keep, {resume_from})) {
    std::error_code ec;
    std::filesystem::remove_all(old.path, ec);
    event("checkpoint-deleted", {{"path", old.path}, {"step", old.step},
                                 {"reason", ec ? "could not delete: " + ec.message()
                                               : "checkpoint.keep is " + std::to_string(config_.checkpoint.keep)}});
  }
}

util::Result<void> Campaign::recover_submission(const AttemptState& a) {
  auto found = edges_.slurm->find_by_tag(a.tag);
  if (!found) {
    event("slurm-unavailable", {{"attempt", a.number}, {"detail", found.error().message}});
    return {};
  }
  if (found->empty()) {  // not submitted: again, once the failures so far allow it
    const auto retry = decide::submit_retry(a.submit_failures, config_, edges_.now());
    if (retry.step == decide::SubmitStep::Stop) return finish(decide::kCannotGoOn, retry.reason);
    const int failures = static_cast<int>(a.submit_failures.size());
    if (failures > 0 && !waited(memory_.sbatch_retry, a.number, failures, retry.next_try, {edges_.now(), mono(), edges_.clock_id}))
      return {};
    return take_template() ? send(a) : util::Result<void>{};
  }
  const auto& job = found->front();
  const slurm::JobId id = job.array_job_id ? job.array_job_id : job.job_id;
  event("adopted", {{"attempt", a.number}, {"job_id", id}, {"detail", "a job with this attempt's tag already exists"}});
  return record("adopted", {{"attempt", a.number}, {"job_id", id}, {"chain", job.array_job_id != 0}});
}

util::Result<void> Campaign::send(const AttemptState& a) {
  if (!template_) return {};  // no template has rendered yet (told by take_template)
  auto plan = render::plan_submission(config_, *template_, {a.number, a.resume_from, a.exclude, a.tag});
  if (!plan) {  // this attempt's values break a template that renders: told, tried again next pass
    event("template-unusable", {{"attempt", a.number}, {"file", config_.template_path}, {"detail", plan.error().str()},
                                {"alert", true}, {"decision", "nothing is submitted; tried again next pass"}});
    return {};
  }
  const std::string dir = config_.state_dir + "/attempts/" + std::to_string(a.number);
  std::error_code ec;
  fs::create_directories(dir, ec);
  fs::create_directories(config_.heartbeat.dir, ec);
  const std::string script = dir + "/job.sbatch";
  if (auto ok = journal::write_atomically(script, plan->script, 0644); !ok) return std::unexpected(ok.error());
  if (plan->array) write_chain_values(a);  // the first task may start the moment sbatch returns
  if (auto held = hold(static_cast<double>(slurm::kSbatchTimeout.count())); !held) return held;
  auto id = edges_.slurm->submit({plan->options, plan->environment, script, config_.base_dir});
  crash_point("after-sbatch");
  if (!id) return submit_failed(a, id.error());
  if (auto ok = record("submitted", {{"attempt", a.number}, {"job_id", *id}, {"chain", plan->array.has_value()}}); !ok)
    return ok;
  event("submitted", {{"attempt", a.number}, {"job_id", *id}, {"resume_from", a.resume_from}, {"exclude", a.exclude},
                      {"script", script}, {"reason", a.number == 1 ? "first attempt" : "resubmission"}});
  crash_point("after-submitted");
  return {};
}

util::Result<void> Campaign::watch(const CampaignState& s, const AttemptState& a) {
  auto jobs = edges_.slurm->jobs({*a.job_id});
  if (!jobs) {
    if (jobs.error().message != last_slurm_error_)
      event("slurm-unavailable", {{"attempt", a.number}, {"job_id", *a.job_id}, {"kind", slurm::error_kind_name(jobs.error().kind)},
                                  {"detail", jobs.error().message}, {"decision", "wait and ask again; nothing is decided"}});
    last_slurm_error_ = jobs.error().message;
    return {};
  }
  last_slurm_error_.clear();
  focus(memory_, a.number);
  if (a.chain && !a.task_job_id) return watch_chain(s, a, *jobs);
  const slurm::JobId id = a.task_job_id.value_or(*a.job_id);
  const auto it = std::find_if(jobs->begin(), jobs->end(),
                               [&](const slurm::Job& j) { return j.job_id == id && (!a.chain || j.array_task_id); });
  if (it == jobs->end()) return end_attempt(s, a, slurm::Job{.job_id = id}, true);
  const slurm::Job& job = *it;
  write_status(s, job);
  if (slurm::is_final(job.state)) return end_attempt(s, a, job, false, a.chain && chain_goes_on(*jobs, id));
  note_suspension(job.state);
  if (a.cancel_reason) return retry_cancel(a);
  if (job.state == slurm::JobState::Pending) return watch_pending(a, job);
  if (job.state == slurm::JobState::Running) return watch_running(a, job);
  return {};
}

util::Result<void> Campaign::watch_pending(const AttemptState& a, const slurm::Job& job) {
  if (kill_switch()) return cancel(a, decide::EndClass::KillSwitch, "the kill switch was set while the job was pending");
  const double now = mono();
  const bool unavailable = decide::waiting_for_nodes(job.reason, !a.exclude.empty());
  if (!unavailable) memory_.unavailable_since = 0;
  else if (memory_.unavailable_since <= 0) memory_.unavailable_since = now;
  if (memory_.pending_since <= 0) memory_.pending_since = now;
  const double waited = now - memory_.pending_since;
  const auto step = decide::judge_pending({job.reason, !a.exclude.empty(), unavailable ? now - memory_.unavailable_since : 0,
                                           waited, a.pending_alerted,
                                           static_cast<double>(config_.policy.exclusion_relax_after.count()),
                                           static_cast<double>(config_.policy.pending_alert_after.count())});
  if (step == decide::PendingStep::Relax) return relax_exclusion(a, job);
  if (step == decide::PendingStep::Wait) return {};
  if (auto ok = record("pending-alert", {{"attempt", a.number}, {"job_id", job.job_id}, {"reason", job.reason}}); !ok) return ok;
  event("pending-stuck", {{"attempt", a.number}, {"job_id", job.job_id}, {"slurm_reason", job.reason}, {"alert", true},
                          {"reason", "job " + std::to_string(job.job_id) + " has been pending " +
                                         std::to_string(static_cast<long long>(waited)) + "s for " + job.reason +
                                         ", which waiting does not end: fix the request or the limit, or `mlsup stop`"}});
  return {};
}

util::Result<void> Campaign::end_attempt(const CampaignState& s, const AttemptState& a, const slurm::Job& job,
                                         bool vanished, bool chain_goes_on) {
  look_at_heartbeat(a.number, mono());  // its last word
  const auto newest = checkpoint::newest_complete(checkpoint::scan(config_.checkpoint));
  const decide::EndingFacts facts{job.state, job.exit_code, job.exit_signal, vanished, a.cancel_reason, kill_switch(),
                                  combined(memory_.heartbeat).step, newest ? newest->step : 0, a.resume_step,
                                  chain_goes_on};
  const auto v = decide::judge_ending(facts, s.restarts, config_, edges_.now());
  const auto cls = v.cls;
  const auto& d = v.decision;
  json context = ended_fields(a, job, cls, {v.step, facts.checkpoint_step, v.progressed}, d);
  // A hang was judged when it was cancelled; other endings about nodes are judged now (one RPC).
  if (cls != decide::EndClass::Hang && decide::node_related(cls)) {
    const auto evidence = ending_evidence(job, context);
    context["suspects"] = decide::suspects(evidence);
    if (auto ok = exclude_blamed(s, a, cls, evidence); !ok) return ok;
  }
  if (auto ok = record("ended", context); !ok) return ok;
  json ev = context;
  ev["output"] = job.std_out;
  ev["output_tail"] = job.std_out.empty() ? "" : tail(job.std_out, 10);
  event("attempt-ended", ev);
  crash_point("after-ended");
  if (d.action != decide::Action::Resubmit) return finish(d.exit_code, d.reason);
  start_wait(memory_.resubmit, a.number, 0, d.delay_seconds, mono());
  return {};
}

void Campaign::write_status(const CampaignState& s, const std::optional<slurm::Job>& job) {
  json j = {{"version", 1}, {"campaign", config_.name}, {"updated", edges_.now()}, {"attempts", s.attempts.size()}};
  if (job) {
    j["job_id"] = job->job_id;
    j["job_state"] = std::string(slurm::state_name(job->state));
    j["nodes"] = job->nodes;
    j["reason"] = job->reason;
  }
  j["step"] = combined(memory_.heartbeat).step;
  (void)journal::write_atomically(config_.state_dir + "/status.json", util::dump_json(j) + "\n");
}

}  // namespace mlsup::engine
