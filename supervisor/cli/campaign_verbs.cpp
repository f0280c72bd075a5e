#include "cli/campaign_verbs.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/exit_codes.h"
#include "config/load.h"
#include "engine/loop.h"
#include "engine/state.h"
#include "engine/template_snapshot.h"
#include "journal/atomic_file.h"
#include "journal/journal.h"
#include "journal/lease.h"
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

// The records of the campaign's journal at path, each with its line, read by the journal's own reader
// without changing the file (status works beside a running supervisor); what it cannot read goes to
// problems.
std::vector<engine::JournalRecord> journal_records(const std::string& path, const std::string& campaign,
                                                  std::vector<util::Error>& problems) {
  auto [records, unread] = journal::Journal::read_only(path, campaign);
  problems.insert(problems.end(), unread.begin(), unread.end());
  std::vector<engine::JournalRecord> out;
  for (auto& r : records) out.push_back({r.time, r.type, std::move(r.data), r.line});
  return out;
}

// One event as `events` prints it: its local time, its kind, then its other fields as key=value.
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

}  // namespace

int run_verb(const engine::Supervise& what) { return finish(engine::run(what)); }

int tick_verb(const engine::Supervise& what) { return finish(engine::tick(what)); }

int switch_verb(const std::string& config_path, bool kill) {
  const auto c = load(config_path);
  if (!c) return kBadInput;
  const std::string path = kill ? c->switches.kill : c->switches.save;
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  const double now = static_cast<double>(std::time(nullptr));
  if (auto ok = journal::write_atomically(path, std::string(kill ? "stop" : "save") + " requested " + clock_time(now) + "\n"); !ok) {
    std::cerr << ok.error().str() << "\n";
    return kRuntimeFailure;
  }
  std::cout << (kill ? "kill switch set: " : "save switch set: ") << path << "\n"
            << (kill ? "the training saves and exits; nothing more is submitted\n"
                     : "the training saves a checkpoint at its next step and goes on\n");
  return kOk;
}

int status_verb(const std::string& config_path, bool as_json) {
  const auto c = load(config_path);
  if (!c) return kBadInput;
  const std::string path = c->state_dir + "/journal.jsonl";
  std::vector<util::Error> problems;
  auto s = engine::replay(journal_records(path, c->name, problems), path);
  json j = {{"campaign", c->name}, {"state_dir", c->state_dir}, {"attempts", s.attempts.size()}};
  j["state"] = s.finished_code ? (*s.finished_code == 0 ? "completed" : "stopped")
                               : (s.attempts.empty() ? "not started" : "running");
  if (s.finished_code) j["exit_code"] = *s.finished_code, j["reason"] = s.finished_reason;
  if (const auto* a = s.current()) {
    j["attempt"] = a->number;
    j["job_id"] = a->job_id ? json(*a->job_id) : json(nullptr);
    j["resume_from"] = a->resume_from;
    if (a->end_class) j["last_end"] = std::string(decide::class_name(*a->end_class));
  }
  problems.insert(problems.end(), s.problems.begin(), s.problems.end());
  std::stable_sort(problems.begin(), problems.end(), [](const auto& a, const auto& b) { return a.line < b.line; });
  for (const auto& p : problems) j["problems"].push_back(p.str());
  if (auto last = journal::read_file(c->state_dir + "/status.json")) {
    if (auto pass = json::parse(*last, nullptr, false); !pass.is_discarded()) j["last_pass"] = std::move(pass);
  }
  const auto lease = journal::read_lease(c->state_dir + "/lease.json");
  j["supervisor"] = nullptr;  // none holds the campaign now (a lease released or run out)
  if (lease && lease->expires > static_cast<double>(std::time(nullptr)))
    j["supervisor"] = {{"host", lease->host}, {"pid", lease->pid}, {"until", clock_time(lease->expires)},
                       {"epoch", lease->epoch}};
  if (as_json) {
    std::cout << util::dump_json(j, 2) << "\n";
    return kOk;
  }
  for (const auto& [key, value] : j.items()) std::cout << key << ": " << util::json_text(value) << "\n";
  return kOk;
}

int events_verb(const std::string& config_path, bool as_json) {
  const auto c = load(config_path);
  if (!c) return kBadInput;
  for (const auto& e : journal::EventLog::read(c->state_dir + "/events.jsonl"))
    std::cout << (as_json ? util::dump_json(e) : event_line(e)) << "\n";
  return kOk;
}

}  // namespace mlsup::cli
