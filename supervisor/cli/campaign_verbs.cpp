#include "cli/campaign_verbs.h"

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

// For run and tick: a template that cannot be read now is no obstacle once the campaign has a snapshot.
std::optional<config::Config> load_to_supervise(const std::string& path) {
  return print_errors(engine::load_config_to_supervise(path));
}

std::string clock_time(double t) {
  const std::time_t s = static_cast<std::time_t>(t);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", std::localtime(&s));
  return text;
}

int finish(const engine::RunResult& r) {
  std::cout << "mlsup: " << r.reason << std::endl;
  return r.exit_code;
}

// The journal's records, read without taking the lease (status must work beside a running supervisor).
std::vector<engine::JournalRecord> journal_records(const config::Config& c) {
  std::vector<engine::JournalRecord> out;
  auto text = journal::read_file(c.state_dir + "/journal.jsonl");
  if (!text) return out;
  for (const auto& line : util::split(*text, '\n')) {
    const auto j = json::parse(line, nullptr, false);
    if (j.is_object() && j.contains("type")) out.push_back({j.value("time", 0.0), j.value("type", ""), j});
  }
  return out;
}

}  // namespace

int run_verb(const std::string& config_path) {
  const auto c = load_to_supervise(config_path);
  return c ? finish(engine::run(*c)) : kBadInput;
}

int tick_verb(const std::string& config_path) {
  const auto c = load_to_supervise(config_path);
  return c ? finish(engine::tick(*c)) : kBadInput;
}

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
  const auto s = engine::replay(journal_records(*c));
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
  if (auto last = journal::read_file(c->state_dir + "/status.json")) j["last_pass"] = json::parse(*last, nullptr, false);
  if (auto lease = journal::read_lease(c->state_dir + "/lease.json"))
    j["supervisor"] = {{"host", lease->host}, {"pid", lease->pid}, {"until", clock_time(lease->expires)}};
  if (as_json) {
    std::cout << j.dump(2) << "\n";
    return kOk;
  }
  for (const auto& [key, value] : j.items()) std::cout << key << ": " << (value.is_string() ? value.get<std::string>() : value.dump()) << "\n";
  return kOk;
}

int events_verb(const std::string& config_path, bool as_json) {
  const auto c = load(config_path);
  if (!c) return kBadInput;
  for (const auto& e : journal::EventLog::read(c->state_dir + "/events.jsonl")) {
    if (as_json) {
      std::cout << e.dump() << "\n";
      continue;
    }
    std::cout << clock_time(e.value("time", 0.0)) << " " << e.value("event", "?");
    for (const auto& [key, value] : e.items()) {
      if (key == "time" || key == "event" || key == "campaign" || key == "output_tail") continue;
      std::cout << " " << key << "=" << (value.is_string() ? value.get<std::string>() : value.dump());
    }
    std::cout << "\n";
  }
  return kOk;
}

}  // namespace mlsup::cli
