#include "cli/campaign_verbs.h"

#include <sys/stat.h>

#include <algorithm>
#include <csignal>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "checkpoint/checkpoints.h"
#include "events/kinds.h"
#include "events/outside.h"
#include "cli/exit_codes.h"
#include "cli/metrics_text.h"
#include "cli/status_now.h"
#include "cli/status_text.h"
#include "config/load.h"
#include "decide/classify.h"
#include "decide/exit_codes.h"
#include "decide/ledger.h"
#include "state/lifecycle.h"
#include "supervise/loop.h"
#include "supervise/set_runs.h"
#include "state/state.h"
#include "views/plan_view.h"
#include "views/status_view.h"
#include "campaign/disk_facts.h"
#include "campaign/template_snapshot.h"
#include "cli/window_now.h"
#include "reconcile/window_now.h"
#include "journal/atomic_file.h"
#include "journal/journal.h"
#include "journal/lease.h"
#include "slurm/config_check.h"
#include "util/json.h"
#include "util/strings.h"

namespace mlsup::cli {
namespace {

using nlohmann::json;

std::optional<config::Config> print_errors(std::expected<config::Config, config::Errors> c) {
  if (c) return std::move(*c);
  for (const auto& e : c.error()) std::cerr << e.str() << "\n";
  return std::nullopt;
}

std::optional<config::Config> load(const std::string& path) { return print_errors(config::load_config_file(path)); }

// "YYYY-MM-DD HH:MM:SS" in local time; "?" for a time no calendar holds.
std::string clock_time(double t) {
  if (!(std::fabs(t) < 1e12)) return "?";
  const std::time_t s = static_cast<std::time_t>(t);
  std::tm local{};
  char text[32];
  if (!::localtime_r(&s, &local) || std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", &local) == 0) return "?";
  return text;
}

int finish(const engine::RunResult& r) {
  std::cout << "mlsup: " << r.reason << std::endl;
  return r.exit_code;
}

// A value that may be absent, as JSON: null when it is.
template <class T>
json or_null(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

// An ending class by its name, null when there is none.
json class_or_null(const std::optional<decide::EndClass>& c) {
  return c ? json(std::string(decide::class_name(*c))) : json(nullptr);
}

// One attempt as status --json shows it in "history".
json attempt_json(const engine::AttemptState& a) {
  return {{"number", a.number}, {"tag", a.tag}, {"job_id", or_null(a.job_id)}, {"task_job_id", or_null(a.task_job_id)},
          {"chain", a.chain}, {"resume_from", a.resume_from}, {"resume_step", a.resume_step}, {"exclude", a.exclude},
          {"relaxed", a.relaxed}, {"cancel_class", class_or_null(a.cancel_reason)}, {"ended", a.ended},
          {"class", class_or_null(a.end_class)},
          {"end_step", a.ended && a.end_step >= 0 ? json(a.end_step) : json(nullptr)},
          {"submit_failures", a.failed_submissions}, {"submissions", a.submissions}, {"in_job", a.in_job},
          {"step_nodes", a.step_nodes}, {"signal_lead", a.signal_lead > 0 ? json(a.signal_lead) : json(nullptr)},
          {"debug", a.debug.empty() ? json(nullptr) : json(a.debug)}};
}

// The attempts shown of s: the newest `history` of them (all when fewer), as offsets into s.attempts.
std::size_t first_shown(const engine::CampaignState& s, std::size_t history) {
  return s.attempts.size() > history ? s.attempts.size() - history : 0;
}

// How status reads the journal to show the newest `history` attempts: after the replay snapshot (which
// holds the newest few and counts the rest) unless every one is asked for.
store::Replay replay_for(std::size_t history) {
  return history == kAllHistory ? store::Replay::Whole : store::Replay::FromSnapshot;
}

// The newest `history` attempts, oldest first.
json history_json(const engine::CampaignState& s, std::size_t history) {
  json out = json::array();
  for (std::size_t i = first_shown(s, history); i < s.attempts.size(); ++i) out.push_back(attempt_json(s.attempts[i]));
  return out;
}

// The attempt the ledger's entry i was recorded for; 0 when the record did not say.
int ledger_attempt(const engine::CampaignState& s, std::size_t i) {
  return i < s.ledger_attempts.size() ? s.ledger_attempts[i] : 0;
}

// Every exclusion of the ledger, oldest first, each with whether it still holds at now.
json exclusions_json(const engine::CampaignState& s, double now) {
  json out = json::array();
  for (std::size_t i = 0; i < s.ledger.size(); ++i) {
    const auto& e = s.ledger[i];
    const int number = ledger_attempt(s, i);
    out.push_back({{"node", e.node}, {"attempt", number > 0 ? json(number) : json(nullptr)}, {"reason", e.reason},
                   {"since", e.since}, {"until", e.until}, {"live", e.until > now}, {"gpus", e.gpus},
                   {"ended_by", e.ended_by.empty() ? json(nullptr) : json(e.ended_by)}});
  }
  return out;
}

// How an attempt ended, or where it stands, in a few words.
std::string attempt_outcome(const engine::AttemptState& a) {
  if (!a.ended) return a.job_id ? "not ended" : "not submitted";
  std::string out = "ended " + (a.end_class ? std::string(decide::class_name(*a.end_class)) : std::string("?"));
  return a.end_step >= 0 ? out + " at step " + std::to_string(a.end_step) : out;
}

// One attempt in one line for people: its job, where it started, what it excluded, how it ended.
std::string history_line(const engine::AttemptState& a) {
  std::string line = "#" + std::to_string(a.number) + (a.chain ? " array " : " job ") +
                     (a.job_id ? std::to_string(*a.job_id) : std::string("-"));
  if (a.task_job_id) line += " task " + std::to_string(*a.task_job_id);
  line += a.resume_from.empty() ? ", fresh start" : ", from step " + std::to_string(a.resume_step);
  if (!a.exclude.empty()) line += ", excluding " + util::join(a.exclude, ",");
  if (a.relaxed > 0) line += ", " + std::to_string(a.relaxed) + " exclusion(s) relaxed";
  if (a.failed_submissions > 0) line += ", sbatch failed " + std::to_string(a.failed_submissions) + "x";
  if (!a.debug.empty()) line += ", with debug_on_retry.env";
  if (a.cancel_reason) line += ", cancelled by mlsup (" + std::string(decide::class_name(*a.cancel_reason)) + ")";
  return line + ": " + attempt_outcome(a);
}

// One exclusion in one line for people.
std::string exclusion_line(const decide::Exclusion& e, int attempt, double now) {
  return e.node + (attempt > 0 ? " after attempt " + std::to_string(attempt) : std::string()) + ", until " +
         clock_time(e.until) + (e.until > now ? " (live)" : " (ended)") + ": " + decide::exclusion_words(e.reason, e.gpus, e.ended_by);
}

// status without --json: the figures a line each, then the history and the exclusions one line per entry.
void print_status(const json& j, const engine::CampaignState& s, double now, std::size_t history) {
  for (const auto& line : status_lines(j)) std::cout << line << "\n";
  if (j.contains("set"))
    std::cout << "set: " << util::string_field(j["set"], "file") << ", run " << util::string_field(j["set"], "run") << ", "
              << util::string_field(j["set"], "gate", "?")
              << (j["set"]["gate_reason"].is_string() ? ": " + util::string_field(j["set"], "gate_reason") : "") << "\n";
  std::cout << "history:" << (s.attempts.empty() ? " none\n" : "\n");
  if (const auto earlier = s.earlier.count + first_shown(s, history); earlier > 0)
    std::cout << "  (" << earlier << " earlier attempt" << (earlier == 1 ? "" : "s") << ": status --history all)\n";
  for (std::size_t i = first_shown(s, history); i < s.attempts.size(); ++i) std::cout << "  " << history_line(s.attempts[i]) << "\n";
  std::cout << "exclusions:" << (s.ledger.empty() ? " none\n" : "\n");
  for (std::size_t i = 0; i < s.ledger.size(); ++i)
    std::cout << "  " << exclusion_line(s.ledger[i], ledger_attempt(s, i), now) << "\n";
}

}  // namespace

std::string event_line(const json& e) {
  const bool timed = e.contains("time") && e["time"].is_number();
  std::string line = (timed ? clock_time(e["time"].get<double>()) : "?") + " " +
                     (e.contains("event") ? util::json_text(e["event"]) : "?");
  for (const auto& [key, value] : e.items()) {
    if ((key == "time" && timed) || key == "event" || key == "campaign" || key == "output_tail") continue;
    line += " " + key + "=" + util::json_text(value);
  }
  return line;
}

namespace {

// Slurm's configuration checked before run and tick call into Slurm (libslurm ends the process without
// one): kOk, or the exit code. Without it, the configs' own errors come first (exit 3, as validate's):
// they are fixed without Slurm.
int slurm_configured(const char* verb, const std::vector<std::string>& sources) {
  const auto problem = slurm::config_problem();
  if (!problem) return kOk;
  std::vector<std::string> problems;
  bool bad = false;
  for (const auto& file : engine::config_files(sources, problems)) bad = !load(file) || bad;
  for (const auto& p : problems) std::cerr << "mlsup: " << p << "\n";
  if (bad || !problems.empty()) return kBadInput;
  std::cerr << "mlsup " << verb << ": " << *problem << "\n";
  return kRuntimeFailure;
}

}  // namespace

namespace {

// What run and tick supervise, their metrics made of status --json's views (cli/metrics_text.h).
engine::Supervise with_metrics(engine::Supervise what) {
  what.metrics.text = [](const std::vector<config::Config>& configs, const engine::PassFigures& figures) {
    std::vector<json> views;
    for (const auto& c : configs) {
      const auto now = engine::clocks_now();
      views.push_back(status_json(c, store::read_campaign(c, now, false, store::Replay::FromSnapshot), now));  // the state folders left as they are
    }
    return metrics_text(views, figures);
  };
  return what;
}

}  // namespace

int run_verb(const engine::Supervise& what) {
  if (const int code = slurm_configured("run", what.sources); code != kOk) return code;
  return finish(engine::run(with_metrics(what)));
}

int tick_verb(const engine::Supervise& what, bool verbose) {
  if (const int code = slurm_configured("tick", what.sources); code != kOk) return code;
  const auto r = engine::tick(with_metrics(what));
  return r.quiet && !verbose ? r.exit_code : finish(r);  // cron mails what a tick prints: nothing when nothing happened
}

namespace {

// Sets the kill (or save) switch of the campaign c and says so in its event log; the switch's path, or
// the error that kept it from being written.
util::Result<std::string> set_switch(const config::Config& c, bool kill) {
  const std::string path = kill ? c.switches.kill : c.switches.save;
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  const double now = static_cast<double>(std::time(nullptr));
  if (auto ok = journal::write_atomically(path, std::string(kill ? "stop" : "save") + " requested " + clock_time(now) + "\n"); !ok)
    return std::unexpected(ok.error());
  // People's acts are in the event log beside the supervisor's decisions (a failed append changes nothing else).
  std::filesystem::create_directories(c.state_dir, ec);
  const events::SwitchAsked asked{journal::requester(), path,
                                  kill ? "`mlsup stop`: the training saves and exits; nothing more is submitted"
                                       : "`mlsup save`: the training saves a checkpoint and goes on"};
  (void)journal::EventLog(c.dir().events())
      .append(kill ? events::line(events::StopRequested{asked}, now, c.name) : events::line(events::SaveRequested{asked}, now, c.name));
  return path;
}

}  // namespace

int switch_verb(const std::string& config_path, bool kill) {
  const auto c = load(config_path);
  if (!c) return kBadInput;
  const auto path = set_switch(*c, kill);
  if (!path) {
    std::cerr << path.error().str() << "\n";
    return kRuntimeFailure;
  }
  std::cout << (kill ? "kill switch set: " : "save switch set: ") << *path << "\n"
            << (kill ? "the training saves and exits; nothing more is submitted\n"
                     : "the training saves a checkpoint at its next step and goes on\n");
  return kOk;
}

int switch_verb(const std::vector<std::string>& sources, bool kill) {
  std::vector<std::string> problems;
  const auto files = engine::config_files(sources, problems);
  if (files.size() == 1 && problems.empty()) return switch_verb(files.front(), kill);
  std::vector<int> codes;
  for (const auto& p : problems) {
    std::cerr << "mlsup: " << p << "\n";
    codes.push_back(kBadInput);
  }
  for (const auto& file : files) {  // one line each: a config with errors does not keep the others' switches
    const auto c = load(file);
    if (!c) {
      std::cout << file << "  the config has errors (printed on stderr); no switch set\n";
      codes.push_back(kBadInput);
      continue;
    }
    const auto path = set_switch(*c, kill);
    if (path) std::cout << c->name << "  " << (kill ? "kill" : "save") << " switch set: " << *path << "\n";
    else std::cout << c->name << "  no switch set: " << path.error().str() << "\n";
    codes.push_back(path ? kOk : kRuntimeFailure);
  }
  if (std::count(codes.begin(), codes.end(), kOk) > 0)
    std::cout << (kill ? "their training saves and exits; nothing more is submitted\n"
                       : "their training saves a checkpoint at its next step and goes on\n");
  return codes.empty() ? kBadInput : decide::most_severe(codes);
}

namespace {

// The newest complete checkpoint of the campaign and when it was last written (0: unknown).
std::optional<engine::CheckpointSeen> newest_checkpoint(const checkpoint::Scan& scan) {
  const auto newest = checkpoint::newest_complete(scan);
  if (!newest) return std::nullopt;
  struct stat st{};
  const double written = ::stat(newest->path.c_str(), &st) == 0
                             ? static_cast<double>(st.st_mtim.tv_sec) + static_cast<double>(st.st_mtim.tv_nsec) / 1e9
                             : 0;
  return engine::CheckpointSeen{newest->path, newest->step, written};
}

// A run of a campaign set: its set, its name and the set's gate on it ("gate": started, may-start,
// waiting or blocked, with "gate_reason" for the last two).
json set_json(const config::Config& c) {
  json j = {{"file", c.set_file}, {"run", c.set_run}, {"gate", nullptr}, {"gate_reason", nullptr}};
  if (const auto g = engine::gate_of(c)) {
    j["gate"] = engine::gate_name(g->gate);
    if (!g->reason.empty()) j["gate_reason"] = g->reason;
  }
  return j;
}

// The set's gate in a few words ("  blocked: after a, which ..."); "" when it holds nothing back.
std::string gate_words(const json& j) {
  if (!j.contains("set") || !j["set"]["gate_reason"].is_string()) return "";
  return "  " + util::string_field(j["set"], "gate") + ": " + util::string_field(j["set"], "gate_reason");
}

}  // namespace

json status_json(const config::Config& c, const store::StoredCampaign& stored, const engine::Clocks& clocks,
                 std::size_t history) {
  const auto& s = stored.journal.state;
  json j = {{"campaign", c.name}, {"state_dir", c.state_dir}, {"attempts", s.earlier.count + s.attempts.size()},
            {"campaign_id", s.campaign_id.empty() ? json(nullptr) : json(s.campaign_id)}};
  j["state"] = engine::state_name(s);
  if (s.finished_code) j["exit_code"] = *s.finished_code, j["reason"] = s.finished_reason;
  if (const auto* a = s.current()) {
    j["attempt"] = a->number;
    j["job_id"] = a->job_id ? json(*a->job_id) : json(nullptr);
    j["resume_from"] = a->resume_from;
    if (a->end_class) j["last_end"] = std::string(decide::class_name(*a->end_class));
    if (!a->debug.empty()) j["debug"] = {{"why", a->debug}, {"env", c.debug_on_retry.env}};
  }
  for (const auto& p : stored.journal.problems) j["problems"].push_back(p.str());
  if (stored.last_pass) j["last_pass"] = *stored.last_pass;
  const double now = clocks.wall;
  j["now"] = now;  // when the ages and figures below were taken
  stored_job(j, stored, now);
  const auto checkpoints = checkpoint::scan(c.checkpoint);  // once, for the newest and for the disk's runway
  j.update(engine::status_figures({c, s, stored.memory, newest_checkpoint(checkpoints), clocks}));
  live_step(j, c, stored, now);
  j["disk"] = engine::disk_json(c, engine::pace_figures(stored.memory.pace), engine::disk_facts(c, stored.memory, checkpoints));
  j["history"] = history_json(s, history);
  j["history_earlier"] = s.earlier.count + first_shown(s, history);
  j["exclusions"] = exclusions_json(s, now);
  if (!c.set_file.empty()) j["set"] = set_json(c);
  j["window"] = engine::window_json(c, cli::window_now(c, now));
  j["supervisor"] = nullptr;  // none holds the campaign now (a lease released or run out)
  if (const auto& lease = stored.lease.lease; stored.lease.held())
    j["supervisor"] = {{"host", lease->host}, {"pid", lease->pid}, {"until", clock_time(lease->expires)},
                       {"epoch", lease->epoch}};
  return j;
}

std::string status_line(const json& j) {
  std::string line = util::string_field(j, "campaign", "?") + "  " + util::string_field(j, "state", "?");
  if (j.contains("attempt")) line += "  attempt " + util::json_text(j["attempt"]);
  if (j.contains("job_id") && !j["job_id"].is_null()) line += "  job " + util::json_text(j["job_id"]);
  if (j["job_state"].is_string()) line += " " + util::string_field(j, "job_state");
  line += status_brief(j);
  if (j.contains("last_end")) line += "  last end: " + util::string_field(j, "last_end");
  if (j.contains("exit_code")) line += "  exit " + util::json_text(j["exit_code"]);
  if (!j["supervisor"].is_null()) line += "  supervised by pid " + util::json_text(j["supervisor"]["pid"]);
  if (j.contains("problems")) line += "  (" + std::to_string(j["problems"].size()) + " journal problem(s))";
  if (j["window"].is_object() && !j["window"].value("open", true)) line += "  outside its window";
  return line + gate_words(j);
}

int status_verb(const std::string& config_path, bool as_json, std::size_t history) {
  const auto c = load(config_path);
  if (!c) return kBadInput;
  const auto now = engine::clocks_now();
  const auto stored = store::read_campaign(*c, now, true, replay_for(history));
  json j = status_json(*c, stored, now, history);
  if (const auto id = job_to_ask(stored)) slurm_job(j, *id, ask_jobs(c->slurm.backend, {*id}, kStatusSlurmDeadline), now.wall);
  if (as_json) std::cout << util::dump_json(j, 2) << "\n";
  else print_status(j, stored.journal.state, util::number_field(j, "now", static_cast<double>(std::time(nullptr))), history);
  return kOk;
}

int status_verb(const std::vector<std::string>& sources, bool as_json, std::size_t history) {
  std::vector<std::string> problems;
  const auto files = engine::config_files(sources, problems);
  if (files.size() == 1 && problems.empty()) return status_verb(files.front(), as_json, history);
  json all = json::array();
  int code = problems.empty() ? kOk : kBadInput;
  for (const auto& p : problems) std::cerr << "mlsup: " << p << "\n";
  std::vector<std::pair<std::size_t, slurm::JobId>> asked;  // (index in all, job): one question to Slurm for all
  std::string backend = "auto";
  for (const auto& file : files) {
    const auto c = load(file);
    if (!c) {
      code = kBadInput;
      all.push_back({{"config", file}, {"error", "the config has errors (printed on stderr)"}});
      continue;
    }
    const auto now = engine::clocks_now();
    const auto stored = store::read_campaign(*c, now, true, replay_for(history));
    json j = status_json(*c, stored, now, history);
    j["config"] = file;
    if (const auto id = job_to_ask(stored)) asked.emplace_back(all.size(), *id), backend = c->slurm.backend;
    all.push_back(std::move(j));
  }
  if (!asked.empty()) {
    std::vector<slurm::JobId> ids;
    for (const auto& [i, id] : asked) ids.push_back(id);
    const auto answer = ask_jobs(backend, ids, kStatusSlurmDeadline);
    const double now = engine::clocks_now().wall;
    for (const auto& [i, id] : asked) slurm_job(all[i], id, answer, now);
  }
  if (as_json) {
    std::cout << util::dump_json(all, 2) << "\n";
    return code;
  }
  for (const auto& j : all)
    std::cout << (j.contains("error") ? util::string_field(j, "config") + "  " + util::string_field(j, "error") : status_line(j))
              << "\n";
  return code;
}

int events_verb(const std::string& config_path, bool as_json) {
  return events_verb(std::vector<std::string>{config_path}, EventsOptions{.json = as_json});
}

int events_verb(const std::vector<std::string>& sources, bool as_json) {
  return events_verb(sources, EventsOptions{.json = as_json});
}

namespace {

volatile std::sig_atomic_t interrupted = 0;

// One campaign's event log, followed.
struct FollowedLog {
  std::string campaign;
  LogFollower log;
};

// The event logs of the campaigns the sources name (a config with errors is skipped: code kBadInput).
std::vector<FollowedLog> event_logs(const std::vector<std::string>& sources, int& code) {
  std::vector<std::string> problems;
  const auto files = engine::config_files(sources, problems);
  code = problems.empty() ? kOk : kBadInput;
  for (const auto& p : problems) std::cerr << "mlsup: " << p << "\n";
  std::vector<FollowedLog> logs;
  for (const auto& file : files) {
    const auto c = load(file);
    if (!c) {
      code = kBadInput;
      continue;
    }
    std::error_code ec;
    if (files.size() == 1 && !std::filesystem::exists(c->dir().events(), ec))
      std::cerr << "mlsup: no events yet: campaign " << c->name << " has not run (its state would be in " << c->state_dir
                << "); `mlsup run " << file << "` starts it\n";
    logs.push_back({c->name, LogFollower(c->dir().events())});
  }
  return logs;
}

// Prints what the logs gained since their last poll and the filter keeps, merged by time.
void print_new(std::vector<FollowedLog>& logs, const EventsOptions& o) {
  std::vector<nlohmann::json> all;
  for (auto& l : logs)
    for (auto& e : l.log.poll())
      if (o.filter.keep(e)) all.push_back(std::move(e));
  std::stable_sort(all.begin(), all.end(), [](const json& a, const json& b) {
    return util::number_field(a, "time") < util::number_field(b, "time");
  });
  const bool named = logs.size() > 1;
  for (const auto& e : all)
    std::cout << (o.json ? util::dump_json(e) : (named ? "[" + util::string_field(e, "campaign", "?") + "] " : "") + event_line(e))
              << "\n";
  std::cout.flush();
}

}  // namespace

int events_verb(const std::vector<std::string>& sources, const EventsOptions& o) {
  if (auto known = check_kinds(o.filter.kinds); !known) {
    std::cerr << "mlsup events: " << known.error().message << "\n";
    return kUsage;
  }
  int code = kOk;
  auto logs = event_logs(sources, code);
  print_new(logs, o);
  if (!o.follow || logs.empty()) return code;
  interrupted = 0;
  const auto previous = std::signal(SIGINT, [](int) { interrupted = 1; });
  std::signal(SIGTERM, [](int) { interrupted = 1; });
  while (!interrupted) {  // a stat per log and poll: cheap while nothing is appended
    std::this_thread::sleep_for(o.poll);
    print_new(logs, o);
  }
  std::signal(SIGINT, previous);
  return code;
}

}  // namespace mlsup::cli
