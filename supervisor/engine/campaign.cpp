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
#include "decide/policy.h"
#include "journal/atomic_file.h"
#include "journal/journal.h"
#include "observe/node_records.h"
#include "render/submission.h"
#include "slurm/srun_messages.h"
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

std::optional<std::string> read_small(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The last max_bytes of a file (a job's output can be gigabytes; what matters is at its end).
std::string read_end(const std::string& path, std::streamoff max_bytes) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return "";
  const std::streamoff size = in.tellg();
  in.seekg(std::max<std::streamoff>(0, size - max_bytes));
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The last lines of a job's output file, for events.
std::string tail(const std::string& path, std::size_t lines) {
  const std::string text = read_end(path, 64 * 1024);
  if (text.empty()) return "";
  const auto all = util::split(text, '\n');
  std::vector<std::string> last(all.end() - static_cast<long>(std::min(lines + 1, all.size())), all.end());
  return util::join(last, "\n");
}

// One look at an attempt's heartbeat files: P itself (key "") and every P.d/<name> the SPANK plugin's
// per-task paths give (hidden files, such as a writer's temporary ones, are skipped). One listing.
std::map<std::string, std::string> read_heartbeats(const std::string& path) {
  std::map<std::string, std::string> out;
  if (auto p = read_small(path)) out[""] = std::move(*p);
  std::error_code ec;
  std::size_t seen = 0;
  for (fs::directory_iterator it(path + ".d", ec), end; !ec && it != end && seen < 4096; it.increment(ec), ++seen) {
    const std::string name = it->path().filename().string();
    std::error_code gone;  // a file renamed away meanwhile is skipped; the listing goes on
    if (name.empty() || name[0] == '.' || !it->is_regular_file(gone)) continue;
    if (auto text = read_small(it->path().string())) out[name] = std::move(*text);
  }
  return out;
}

util::Error error(std::string message) { return util::Error{.message = std::move(message)}; }

// Claims checkpoint_dir for this campaign with a marker file; refuses one claimed by another.
util::Result<void> claim_checkpoint_dir(const config::Config& c, const std::string& campaign_id) {
  std::error_code ec;
  fs::create_directories(c.checkpoint.dir, ec);
  const std::string marker = c.checkpoint.dir + "/.mlsup-campaign";
  if (const auto text = read_small(marker)) {
    const auto claim = json::parse(*text, nullptr, false);
    const std::string owner = claim.is_object() ? claim.value("campaign_id", "") : "";
    if (owner == campaign_id) return {};
    return std::unexpected(error("checkpoint.dir " + c.checkpoint.dir + " belongs to campaign \"" +
                                 (claim.is_object() ? claim.value("name", "?") : "?") + "\" (state in " +
                                 (claim.is_object() ? claim.value("state_dir", "?") : "?") +
                                 "); give this campaign a checkpoint directory of its own"));
  }
  const json claim = {{"campaign_id", campaign_id}, {"name", c.name}, {"state_dir", c.state_dir}};
  return journal::write_atomically(marker, claim.dump() + "\n");
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
  c->events_ = std::make_unique<journal::EventLog>(c->config_.state_dir + "/events.jsonl");
  for (const auto& w : c->journal_->warnings()) c->event("journal-repaired", {{"detail", w}});
  auto state = replay(c->records());
  if (state.campaign_id.empty()) {
    state.campaign_id = random_id();
    if (auto ok = c->record("campaign", {{"id", state.campaign_id}, {"name", c->config_.name}}); !ok)
      return std::unexpected(ok.error());
  }
  if (auto ok = claim_checkpoint_dir(c->config_, state.campaign_id); !ok) return std::unexpected(ok.error());
  c->campaign_id_ = state.campaign_id;
  return c;
}

void Campaign::reload(config::Config config) {
  event("config-reloaded", {{"file", config.source_file}});
  config_ = std::move(config);
  notifier_ = Notifier(config_.notify, config_.state_dir, config_.base_dir);
}

std::vector<JournalRecord> Campaign::records() const {
  std::vector<JournalRecord> out;
  for (const auto& r : journal_->records()) out.push_back({r.time, r.type, r.data});
  return out;
}

util::Result<void> Campaign::record(const std::string& type, json fields) {
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
  const std::string outcome = notifier_.alert(fields, edges_.now());
  if (outcome == "none configured") return;
  emit({{"event", "notified"}, {"time", edges_.now()}, {"campaign", config_.name}, {"about", what}, {"outcome", outcome}});
}

void Campaign::emit(const json& e) {
  (void)events_->append(e);  // the event log is for people; a failed append must not stop a decision
  if (edges_.on_event) edges_.on_event(e);
}

std::string Campaign::tag(int attempt) const {
  return "mlsup:" + config_.name + ":" + campaign_id_ + ":" + std::to_string(attempt);
}

bool Campaign::kill_switch() const {
  std::error_code ec;
  return fs::exists(config_.switches.kill, ec);
}

util::Result<std::optional<Outcome>> Campaign::pass() {
  CampaignState s = replay(records());
  for (int round = 0; round < 2 && !s.finished_code; ++round) {
    const bool was_awaiting = s.awaiting_submit;
    if (auto acted = act(s); !acted) return std::unexpected(acted.error());
    s = replay(records());
    // An ending whose resubmission needs no wait is followed by the submission in the same pass.
    if (was_awaiting || !s.awaiting_submit || edges_.now() < s.next_submit_at) break;
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
  if (edges_.now() >= s.next_submit_at) return submit(a->number + 1);
  return {};
}

util::Result<void> Campaign::finish(int code, const std::string& reason) {
  cancel_rest_of_chain(replay(records()));
  event(code == 0 ? "completed" : "stopped", {{"exit_code", code}, {"reason", reason}, {"alert", true}});
  return record("finished", {{"code", code}, {"reason", reason}});
}

util::Result<void> Campaign::submit(int number) {
  const auto scan = checkpoint::scan(config_.checkpoint);
  const auto newest = checkpoint::newest_complete(scan);
  if (!scan.pointer_problem.empty()) event("checkpoint-pointer-ignored", {{"detail", scan.pointer_problem}});
  const std::string resume_from = newest ? newest->path : "";
  prune_checkpoints(scan, resume_from);
  const auto s = replay(records());
  json intent = {{"attempt", number}, {"tag", tag(number)}, {"resume_from", resume_from},
                 {"resume_step", newest ? newest->step : 0}, {"exclude", exclusions_for(s, number)}};
  // Chain mode: a task already queued runs this attempt; nothing is submitted.
  auto queued = queued_task(s.current());
  if (!queued) return {};  // Slurm did not answer: ask again next pass rather than start a second chain
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
  if (found->empty()) return send(a);
  const auto& job = found->front();
  const slurm::JobId id = job.array_job_id ? job.array_job_id : job.job_id;
  event("adopted", {{"attempt", a.number}, {"job_id", id}, {"detail", "a job with this attempt's tag already exists"}});
  return record("adopted", {{"attempt", a.number}, {"job_id", id}, {"chain", job.array_job_id != 0}});
}

util::Result<void> Campaign::send(const AttemptState& a) {
  const auto text = read_small(config_.template_path);
  if (!text) return finish(decide::kCannotGoOn, "cannot read the template " + config_.template_path);
  auto plan = render::plan_submission(config_, *text, {a.number, a.resume_from, a.exclude, a.tag});
  if (!plan) return finish(decide::kCannotGoOn, plan.error().str());
  const std::string dir = config_.state_dir + "/attempts/" + std::to_string(a.number);
  std::error_code ec;
  fs::create_directories(dir, ec);
  fs::create_directories(config_.heartbeat.dir, ec);
  const std::string script = dir + "/job.sbatch";
  if (auto ok = journal::write_atomically(script, plan->script, 0644); !ok) return std::unexpected(ok.error());
  if (plan->array) write_chain_values(a);  // the first task may start the moment sbatch returns
  auto id = edges_.slurm->submit({plan->options, plan->environment, script, config_.base_dir});
  crash_point("after-sbatch");
  if (!id) {
    const auto& e = id.error();
    event("submit-failed", {{"attempt", a.number}, {"kind", slurm::error_kind_name(e.kind)}, {"detail", e.message},
                            {"transient", e.transient()}, {"decision", e.transient() ? "look for the job by its tag, then retry" : "stop"}});
    if (e.transient() || e.kind == slurm::ErrorKind::Other) return {};
    return finish(decide::kCannotGoOn, "Slurm refused the job: " + e.message);
  }
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
  if (a.chain && !a.task_job_id) return watch_chain(s, a, *jobs);
  load_heartbeat(a.number);
  const slurm::JobId id = a.task_job_id.value_or(*a.job_id);
  const auto it = std::find_if(jobs->begin(), jobs->end(),
                               [&](const slurm::Job& j) { return j.job_id == id && (!a.chain || j.array_task_id); });
  if (it == jobs->end()) return end_attempt(s, a, slurm::Job{.job_id = id}, true);
  const slurm::Job& job = *it;
  write_status(s, job);
  if (slurm::is_final(job.state)) return end_attempt(s, a, job, false, a.chain && chain_goes_on(*jobs, id));
  if (job.state == slurm::JobState::Pending) return watch_pending(a, job);
  if (job.state == slurm::JobState::Running) return watch_running(a, job);
  return {};
}

util::Result<void> Campaign::watch_pending(const AttemptState& a, const slurm::Job& job) {
  if (kill_switch()) return cancel(a, decide::EndClass::KillSwitch, "the kill switch was set while the job was pending");
  // Reasons a job does not leave by waiting: a limit, a hold, a bad request.
  static const std::vector<std::string> kStuck = {
      "PartitionConfig", "PartitionNodeLimit", "PartitionTimeLimit", "PartitionDown", "PartitionInactive",
      "JobHeldUser", "JobHeldAdmin", "InvalidQOS", "InvalidAccount", "BadConstraints", "DependencyNeverSatisfied",
      "QOSMaxWallDurationPerJobLimit", "QOSMaxNodePerJobLimit", "QOSMaxCpuPerJobLimit", "AssocMaxWallDurationPerJobLimit",
      "AssocMaxNodesPerJobLimit", "AssocMaxCpuPerJobLimit"};
  // Nodes it may use are missing: after a while, drop mlsup's oldest exclusion (one per wait).
  const bool unavailable = util::starts_with(job.reason, "ReqNodeNotAvail") && !a.exclude.empty();
  if (!unavailable) unavailable_since_ = 0;
  else if (unavailable_since_ == 0) unavailable_since_ = edges_.now();
  if (unavailable && edges_.now() - std::max(unavailable_since_, a.relaxed_at) >=
                         static_cast<double>(config_.policy.exclusion_relax_after.count()))
    return relax_exclusion(a, job);
  const double waited = edges_.now() - a.intent_time;
  if (a.pending_alerted || waited < static_cast<double>(config_.policy.pending_alert_after.count())) return {};
  if (std::find(kStuck.begin(), kStuck.end(), job.reason) == kStuck.end()) return {};
  if (auto ok = record("pending-alert", {{"attempt", a.number}, {"job_id", job.job_id}, {"reason", job.reason}}); !ok) return ok;
  event("pending-stuck", {{"attempt", a.number}, {"job_id", job.job_id}, {"slurm_reason", job.reason}, {"alert", true},
                          {"reason", "job " + std::to_string(job.job_id) + " has been pending " +
                                         std::to_string(static_cast<long long>(waited)) + "s for " + job.reason +
                                         ", which waiting does not end: fix the request or the limit, or `mlsup stop`"}});
  return {};
}

util::Result<void> Campaign::relax_exclusion(const AttemptState& a, const slurm::Job& job) {
  const std::string node = a.exclude.back();  // the oldest
  std::vector<std::string> keep;
  for (const auto& n : slurm::expand_hostlist(job.excluded_nodes))
    if (n != node) keep.push_back(n);
  if (auto done = edges_.slurm->set_excluded(job.job_id, util::join(keep, ",")); !done) {
    event("relax-failed", {{"attempt", a.number}, {"job_id", job.job_id}, {"node", node}, {"detail", done.error().message},
                           {"decision", "retry next pass"}});
    return {};
  }
  if (auto ok = record("relaxed", {{"attempt", a.number}, {"job_id", job.job_id}, {"node", node}}); !ok) return ok;
  const auto now = edges_.slurm->jobs({job.job_id});  // read the change back
  event("exclusions-relaxed", {{"attempt", a.number}, {"job_id", job.job_id}, {"node", node},
                               {"exc_node_list", now && !now->empty() ? now->front().excluded_nodes : "?"},
                               {"reason", "pending for " + job.reason + " while mlsup excludes " + util::join(a.exclude, ",") +
                                              ": the oldest exclusion is dropped so that the job can run"}});
  return {};
}

util::Result<void> Campaign::watch_running(const AttemptState& a, const slurm::Job& job) {
  const double now = edges_.now();
  if (heartbeat_.running_since <= 0) heartbeat_.running_since = now;
  observe(heartbeat_, read_heartbeats(render::heartbeat_file(config_, a.number)), now);
  save_heartbeat(a.number);
  if (a.cancel_reason) return {};
  const std::string hung = hang_reason(heartbeat_, config_.heartbeat, now);
  if (hung.empty()) return {};
  // Before giving up on the attempt, find out which of its nodes still answer.
  std::vector<decide::NodeEvidence> evidence;
  const auto nodes = slurm::expand_hostlist(job.nodes);
  event("hang-detected", {{"attempt", a.number}, {"job_id", job.job_id}, {"reason", hung}, {"probing", nodes}});
  const auto stale = stale_first(heartbeat_, stale_margin(config_.heartbeat));
  for (const auto& n : nodes) {
    evidence.push_back({n});
    for (const auto& st : stale) {
      if (st.node != n) continue;
      evidence.back().heartbeat_stale_first = true;
      evidence.back().heartbeat_lead = st.lead;
    }
  }
  if (!stale.empty()) {
    json named = json::array();
    for (const auto& st : stale) named.push_back({{"node", st.node}, {"lead", st.lead}});
    event("heartbeat-stale-first", {{"attempt", a.number}, {"job_id", job.job_id}, {"nodes", named},
                                    {"margin", stale_margin(config_.heartbeat)}});
  }
  const auto silent = edges_.probe ? edges_.probe(job.job_id, nodes, config_.heartbeat.probe_timeout) : std::vector<std::string>{};
  for (auto& e : evidence) e.not_responding = std::find(silent.begin(), silent.end(), e.name) != silent.end();
  if (auto ok = exclude_blamed(replay(records()), a, decide::EndClass::Hang, evidence); !ok) return ok;
  return cancel(a, decide::EndClass::Hang, hung);
}

util::Result<void> Campaign::cancel(const AttemptState& a, decide::EndClass why, const std::string& reason) {
  if (a.cancel_reason) return {};
  const slurm::JobId id = a.task_job_id.value_or(*a.job_id);  // in a chain, the task only
  std::error_code ec;
  fs::create_directories(config_.state_dir + "/fenced", ec);
  if (auto ok = journal::write_atomically(config_.state_dir + "/fenced/" + std::to_string(a.number), reason + "\n"); !ok)
    return ok;
  if (auto ok = record("cancel-intent", {{"attempt", a.number}, {"job_id", id},
                                         {"class", std::string(decide::class_name(why))}, {"reason", reason}});
      !ok)
    return ok;
  event("cancelling", {{"attempt", a.number}, {"job_id", id}, {"class", std::string(decide::class_name(why))},
                       {"reason", reason}, {"fenced", true}});
  // A hung job's tasks are killed at once: Slurm's grace would only keep its nodes from the replacement.
  if (why == decide::EndClass::Hang) (void)edges_.slurm->kill_steps(id);
  auto done = edges_.slurm->cancel(id);
  if (!done && done.error().kind != slurm::ErrorKind::UnknownJob)
    event("cancel-failed", {{"attempt", a.number}, {"detail", done.error().message}, {"decision", "retry next pass"}});
  return {};
}

util::Result<void> Campaign::end_attempt(const CampaignState& s, const AttemptState& a, const slurm::Job& job,
                                         bool vanished, bool chain_goes_on) {
  if (vanished && a.cancel_reason) vanished = false;
  observe(heartbeat_, read_heartbeats(render::heartbeat_file(config_, a.number)), edges_.now());  // its last word
  const auto newest = checkpoint::newest_complete(checkpoint::scan(config_.checkpoint));
  const long long ck_step = newest ? newest->step : 0;
  const long long step = std::max(ck_step, combined(heartbeat_).step);
  // Without a target, a clean exit is the end; a job Slurm forgot needs evidence (a target reached).
  const bool target_reached = config_.target_steps == 0 ? !vanished : step >= config_.target_steps;
  decide::Ending ending{job.state, job.exit_code, job.exit_signal, a.cancel_reason, kill_switch(),
                        target_reached, config_.policy.no_retry_exit_code, vanished};
  const auto cls = decide::classify(ending);
  const bool progressed = ck_step > a.resume_step;  // what a resume keeps: work past the last checkpoint is lost
  auto d = decide::decide(cls, progressed, s.restarts, config_, edges_.now());
  if (chain_goes_on && d.action == decide::Action::Resubmit && d.delay_seconds > 0) {
    d.delay_seconds = 0;  // the chain's next task is queued already and waits for its values
    d.reason += "; the chain's next task takes over without a backoff";
  }
  static const char* kActions[] = {"finish", "resubmit", "stop"};
  json context = {{"attempt", a.number},
                        {"job_id", job.job_id},
                        {"class", std::string(decide::class_name(cls))},
                        {"slurm_state", std::string(slurm::state_name(job.state))},
                        {"exit_code", job.exit_code},
                        {"signal", job.exit_signal},
                        {"nodes", job.nodes},
                        {"step", step},
                        {"checkpoint_step", ck_step},
                        {"resumed_from", a.resume_from},
                        {"progressed", progressed},
                        {"action", kActions[static_cast<int>(d.action)]},
                        {"delay", d.delay_seconds},
                        {"reason", d.reason}};
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
  if (d.action == decide::Action::Resubmit) return {};
  return finish(d.exit_code, d.reason);
}

std::vector<decide::NodeEvidence> Campaign::ending_evidence(const slurm::Job& job, json& context) {
  auto evidence = node_states(job.nodes);
  std::string output = read_end(job.std_err.empty() ? job.std_out : job.std_err, 64 * 1024);
  if (!job.std_err.empty() && job.std_err != job.std_out) output += read_end(job.std_out, 64 * 1024);
  const auto failed = slurm::failed_task_nodes(slurm::srun_task_reports(output));
  for (auto& e : evidence) e.task_failed = std::find(failed.begin(), failed.end(), e.name) != failed.end();
  // The SPANK plugin's records, when it is installed: the first failing task of the job's steps (the
  // batch script and the extern step fail as a consequence) and the failed health checks.
  const auto records = observe::read_node_records(config_.state_dir, job.job_id);
  if (!records.problems.empty())
    event("node-records-problems", {{"job_id", job.job_id}, {"problems", records.problems},
                                    {"decision", "the readable records are used; the others are ignored"}});
  std::vector<observe::TaskExit> step_exits;
  for (const auto& x : records.exits)
    if (x.step >= 0) step_exits.push_back(x);
  const auto first = observe::first_failure(step_exits);
  const auto sick = observe::failed_health(records.health);
  for (auto& e : evidence) {
    e.failed_first = first && first->node == e.name;
    e.health_failed = std::find(sick.begin(), sick.end(), e.name) != sick.end();
  }
  if (first)
    context["first_failure"] = {{"node", first->node}, {"step", first->step}, {"rank", first->rank},
                                {"exit_code", first->exit_code}, {"signal", first->signal}};
  if (!sick.empty()) context["health_failed"] = sick;
  return evidence;
}

std::vector<decide::NodeEvidence> Campaign::node_states(const std::string& hostlist) {
  std::vector<decide::NodeEvidence> evidence;
  const auto all = edges_.slurm->nodes();
  for (const auto& name : slurm::expand_hostlist(hostlist)) {
    decide::NodeEvidence e{name};
    if (all) {
      for (const auto& n : *all)
        if (n.name == name) e = {name, n.kept_off(), n.not_responding};
    }
    evidence.push_back(e);
  }
  return evidence;
}

util::Result<void> Campaign::exclude_blamed(const CampaignState& s, const AttemptState& a, decide::EndClass cls,
                                            const std::vector<decide::NodeEvidence>& evidence) {
  const double now = edges_.now();
  const decide::BlameInput in{cls, evidence, s.failures, now,
                              static_cast<double>(config_.policy.budgets.at("failed").window.count()), 2};
  for (const auto& b : decide::blame(in)) {
    const double until = now + static_cast<double>(config_.policy.exclusion_ttl.count());
    if (auto ok = record("exclude", {{"attempt", a.number}, {"node", b.node}, {"reason", b.reason}, {"until", until}}); !ok)
      return ok;
    event("excluded", {{"attempt", a.number}, {"node", b.node}, {"reason", b.reason},
                       {"for", config::format_duration(config_.policy.exclusion_ttl)}});
  }
  return {};
}

std::vector<std::string> Campaign::exclusions_for(const CampaignState& s, int number) {
  const std::size_t live = decide::excluded_nodes(s.ledger, edges_.now(), -1).size();
  if (live == 0) return {};
  // The cap depends on the job's size, which the rendered script knows.
  const auto shape = render::plan_submission(config_, read_small(config_.template_path).value_or(""), {number});
  const int job_nodes = shape ? shape->nodes : 1;
  int usable = 0;
  if (const auto all = edges_.slurm->nodes()) {
    for (const auto& n : *all)
      if (!n.kept_off()) ++usable;
  }
  const int cap = decide::exclusion_cap(config_.policy.exclusion_cap, usable, job_nodes);
  auto nodes = decide::excluded_nodes(s.ledger, edges_.now(), cap);
  if (nodes.size() < live)
    event("exclusions-relaxed", {{"kept", nodes}, {"cap", cap},
                                 {"reason", "excluding every blamed node would leave too few for the job"}});
  return nodes;
}

void Campaign::load_heartbeat(int attempt) {
  if (heartbeat_attempt_ == attempt) return;
  heartbeat_ = {};
  heartbeat_attempt_ = attempt;
  const auto text = read_small(config_.state_dir + "/heartbeat.json");
  if (!text) return;
  const auto j = json::parse(*text, nullptr, false);
  if (!j.is_object() || j.value("attempt", 0) != attempt) return;
  heartbeat_.running_since = j.value("running_since", 0.0);
  // Each file's observation; a file of an older mlsup has only P's, at the top level.
  const json files = j.contains("files") && j["files"].is_object() ? j["files"] : json{{"", j}};
  for (const auto& [name, f] : files.items()) {
    if (!f.is_object()) continue;
    auto seen = parse_heartbeat(f.value("content", ""));
    seen.changed_at = f.value("changed_at", 0.0);
    seen.progress_at = f.value("progress_at", seen.waiting ? 0.0 : seen.changed_at);
    seen.running_since = heartbeat_.running_since;
    heartbeat_.files[name] = seen;
  }
}

void Campaign::save_heartbeat(int attempt) {
  const auto all = combined(heartbeat_);
  json files = json::object();
  for (const auto& [name, f] : heartbeat_.files)
    files[name] = {{"content", f.content}, {"changed_at", f.changed_at}, {"progress_at", f.progress_at}};
  const json j = {{"attempt", attempt}, {"content", all.content}, {"changed_at", all.progress_at},
                  {"running_since", heartbeat_.running_since}, {"files", files}};
  (void)journal::write_atomically(config_.state_dir + "/heartbeat.json", j.dump() + "\n");
}

void Campaign::write_status(const CampaignState& s, const std::optional<slurm::Job>& job) {
  json j = {{"version", 1}, {"campaign", config_.name}, {"updated", edges_.now()}, {"attempts", s.attempts.size()}};
  if (job) {
    j["job_id"] = job->job_id;
    j["job_state"] = std::string(slurm::state_name(job->state));
    j["nodes"] = job->nodes;
    j["reason"] = job->reason;
  }
  j["step"] = combined(heartbeat_).step;
  (void)journal::write_atomically(config_.state_dir + "/status.json", j.dump() + "\n");
}

}  // namespace mlsup::engine
