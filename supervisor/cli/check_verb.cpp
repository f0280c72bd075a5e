#include "cli/check_verb.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>

#include <nlohmann/json.hpp>

#include "config/duration.h"
#include "config/load.h"
#include "campaign/disk_facts.h"
#include "edges/disk_use.h"
#include "state/lifecycle.h"
#include "supervise/loop.h"
#include "state/memory.h"
#include "supervise/set_runs.h"
#include "cli/window_now.h"
#include "slurm/client.h"
#include "slurm/config_check.h"
#include "store/read_campaign.h"
#include "util/files.h"

namespace mlsup::cli {
namespace {

using engine::AttemptPhase;
using engine::CheckFacts;

// Where the campaign's current attempt stands in its journal, and what Slurm is to be asked about.
void attempt_facts(const engine::CampaignState& s, CheckFacts& f) {
  const auto* a = s.current();
  if (!a) return;
  f.attempt = a->number;
  f.failed_submissions = a->failed_submissions;
  f.phase = a->ended ? AttemptPhase::Ended : a->job_id ? AttemptPhase::Job : AttemptPhase::Submitting;
  if (a->job_id) f.job_id = static_cast<long long>(*a->job_id);
}

// The lease: whether a supervisor holds it now, and how long ago one last wrote it (each pass of a
// tick takes and releases it, `run` renews it once half its ttl is gone), both on the file server's clock.
void lease_facts(const store::LeaseSeen& seen, CheckFacts& f) {
  f.supervised = seen.held();
  if (seen.written) f.since_pass = seen.now - *seen.written;
}

void disk_use_facts(const config::Config& c, const engine::Memory& memory, CheckFacts& f) {
  const auto use = edges::disk_usage(c.checkpoint.dir);
  if (!use) {
    f.disk_error = use.error().str();
    return;
  }
  f.disk = engine::DiskUse{use->path, use->bytes_percent, use->inodes_percent, use->free_bytes, use->free_inodes, use->device};
  const auto in = engine::runway_inputs(c, engine::pace_figures(memory.pace), engine::disk_facts(c, memory));
  f.runway = decide::runway(*f.disk, in);
  f.runway_text = decide::runway_text(*f.runway, *f.disk, in);
  f.runway_alert = static_cast<double>(c.disk.runway_alert.count());
}

// What the journal, memory, lease, set and file system say of one campaign (Slurm is asked afterwards).
// backend: the campaign's Slurm backend, when it is the first loaded.
CheckFacts campaign_facts(const std::string& file, std::optional<double> stale_after, const engine::Clocks& now,
                          std::string& backend) {
  CheckFacts f{.name = file};
  auto c = config::load_config_file(file);
  if (!c) {
    f.load_error = "the config has errors: " + (c.error().empty() ? std::string("?") : c.error().front().str());
    return f;
  }
  f.name = c->set_run.empty() ? c->name : c->set_run;
  if (backend.empty()) backend = c->slurm.backend;
  const auto journal = store::read_journal(*c);  // the memory and the lease only when it can be read
  const auto& s = journal.state;
  if (!journal.problems.empty()) {
    f.load_error = "its journal cannot be read: " + journal.problems.front().str();
    return f;
  }
  f.state = engine::lifecycle_of(s);
  std::error_code ec;
  f.stopping = s.cancel_requested || std::filesystem::exists(c->switches.kill, ec);
  if (const auto g = engine::gate_of(*c)) f.held_back = g->gate == engine::Gate::Wait || g->gate == engine::Gate::Blocked;
  if (const auto w = cli::window_now(*c, now.wall); w && !w->open) f.held_back = true;  // not expected to run now
  attempt_facts(s, f);
  const auto memory = store::read_memory(*c, now);
  f.backing_off = f.phase == AttemptPhase::Ended && memory.resubmit.at > now.mono;
  if (f.phase == AttemptPhase::Job) f.shortfall = memory.shortfall;
  lease_facts(store::read_lease(*c, now.wall, true), f);
  f.stale_after = stale_after.value_or(default_stale_after(static_cast<double>(c->lease_ttl.count())));
  disk_use_facts(*c, memory, f);
  return f;
}

// Asks Slurm, in one query, whether each campaign's job is pending or running.
void job_facts(std::vector<CheckFacts>& all, const std::string& backend) {
  std::vector<slurm::JobId> ids;
  for (const auto& f : all)
    if (f.load_error.empty() && f.phase == AttemptPhase::Job) ids.push_back(static_cast<slurm::JobId>(f.job_id));
  if (ids.empty()) return;
  std::string error;
  std::map<long long, std::string> seen;  // job (an array by its id) -> Slurm's state of it
  std::map<long long, bool> alive;
  slurm::Result<std::vector<slurm::Job>> jobs = std::unexpected(slurm::Error{});
  if (const auto problem = slurm::config_problem()) error = *problem;
  else if (auto client = slurm::make_client(backend); !client) error = "no Slurm backend " + backend;
  else if (jobs = client->jobs(ids); !jobs) error = jobs.error().message;
  if (jobs)
    for (const auto& j : *jobs) {
      const long long id = j.array_job_id ? static_cast<long long>(j.array_job_id) : static_cast<long long>(j.job_id);
      seen[id] = std::string(slurm::state_name(j.state));
      alive[id] = alive[id] || !slurm::is_final(j.state);
    }
  for (auto& f : all) {
    if (!f.load_error.empty() || f.phase != AttemptPhase::Job) continue;
    if (!jobs) {
      f.slurm_error = error;
      continue;
    }
    f.job_alive = alive[f.job_id];
    f.job_state = seen[f.job_id];
  }
}

}  // namespace

double default_stale_after(double lease_ttl_seconds) { return std::max(600.0, lease_ttl_seconds); }

CLI::App* add_check_command(CLI::App& app, CheckOptions& o) {
  auto* sub = app.add_subcommand(
      "check", "the dead-man, for monitoring systems: one status line (a campaign that should run neither running nor "
               "queued, no supervisor pass for too long, a checkpoint file system nearly full); exits 0 OK, 1 WARNING, "
               "2 CRITICAL, 3 UNKNOWN");
  sub->add_option("CONFIG", o.sources, "campaign configs (YAML), folders, campaign sets, SET:RUN")->required();
  sub->add_option("--stale-after", o.stale_after,
                  "a supervisor's pass is overdue after this long (WARNING; twice it: CRITICAL); default 10m, or the "
                  "campaign's lease_ttl when longer");
  sub->add_option("--disk-warning", o.disk.warning, "percent of the checkpoint file system used (bytes or inodes) that "
                                                    "warns (default 80)")
      ->check(CLI::Range(0.0, 100.0));
  sub->add_option("--disk-critical", o.disk.critical, "percent used that is critical (default 95)")
      ->check(CLI::Range(0.0, 100.0));
  return sub;
}

int check_verb(const CheckOptions& o) {
  std::optional<double> stale_after;
  if (!o.stale_after.empty()) {
    const auto d = config::parse_duration(o.stale_after);
    if (!d || d->count() <= 0) {
      std::cout << "MLSUP UNKNOWN - --stale-after: \"" << o.stale_after << "\" is not a duration (try 15m)" << std::endl;
      return kCheckUsage;
    }
    stale_after = static_cast<double>(d->count());
  }
  std::vector<std::string> problems;
  const auto files = engine::config_files(o.sources, problems);
  const auto now = engine::clocks_now();
  std::vector<CheckFacts> all;
  for (const auto& p : problems) all.push_back({.name = "mlsup", .load_error = p});
  std::string backend;
  for (const auto& file : files) all.push_back(campaign_facts(file, stale_after, now, backend));
  job_facts(all, backend.empty() ? "auto" : backend);
  const auto findings = engine::check_findings(all, o.disk);
  std::cout << engine::check_line(findings, all) << std::endl;
  return static_cast<int>(engine::worst(findings));
}

}  // namespace mlsup::cli
