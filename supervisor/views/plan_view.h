#pragma once
// `mlsup plan` and the disk runway (pure): the campaign's measured checkpoint cost, failure rate and pace
// turned into advice (the Young/Daly interval, goodput now and advised, the wall time and node-hours to
// target.steps, the time limit and signal lead, the runway of every file system it writes). README
// ("mlsup plan", "Disk runway") gives the definitions.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "decide/runway.h"
#include "observe/pace.h"
#include "slurm_model/accounting.h"
#include "state/memory.h"
#include "state/state.h"

namespace mlsup::engine {

// A file system the campaign writes, and what of the campaign's lies on it.
struct FileSystemSeen {
  decide::DiskUse use;
  std::vector<std::string> roles;  // "checkpoints", "state", "heartbeats"
};

// What was measured on disk: the file systems, the newest complete checkpoint's size, the complete ones' steps.
struct DiskFacts {
  std::vector<FileSystemSeen> file_systems;
  std::optional<decide::CheckpointSize> checkpoint_size;
  std::vector<long long> checkpoint_steps;  // ascending
};

// The checkpoint file system's runway inputs: the size, the cadence (the compute between saves, from the
// checkpoints' steps and the step time, and a save), checkpoint.keep and the complete ones now.
decide::RunwayInputs runway_inputs(const config::Config& c, const PaceFigures& pace, const DiskFacts& disk);

// status --json's "disk": {checkpoint_bytes, checkpoint_files, cadence, runway_alert, file_systems: [{path, roles,
// free_bytes, free_inodes, bytes_percent, inodes_percent, runway: {state, seconds, inodes, short, text}}]}.
nlohmann::json disk_json(const config::Config& c, const PaceFigures& pace, const DiskFacts& disk);

// One line per file system for status's text ("disk: runway 14h on /scratch at ...").
std::vector<std::string> disk_lines(const nlohmann::json& disk);

struct PlanInputs {
  const config::Config& config;
  const CampaignState& state;
  const Memory& memory;  // on the clock of now
  DiskFacts disk;
  std::optional<double> mtbf_given;  // --mtbf, seconds
  Clocks now;
  std::optional<slurm::NodeFailureHistory> history;  // the cluster's accounting over the window asked; nullopt: not had
  std::string accounting_error;  // why the history was asked and not had ("" when it was had, or not asked)
};

// True when the MTBF would come from the cluster's accounting history if it had one: no --mtbf and no
// failure in the campaign's journal (its own figure is then only a lower bound).
bool wants_history(const PlanInputs& in);

// The plan as JSON (README "mlsup plan"): inputs {step, steps_left, nodes, step_seconds, save_seconds, save_every_steps,
// interval, mtbf {seconds, source, failures, exposure, lower_bound; node_failures, node_seconds where the cluster's
// history was had; accounting_error where it was asked and not had}, restart {seconds, source, samples}}, advised
// {interval, every_steps}, goodput {current, advised}, to_target {current, advised: {wall, node_hours}}, time_limit
// {configured, advised, limits_left}, signal_lead {configured, auto, needed, advised}, disk, advice [sentences].
nlohmann::json plan_json(const PlanInputs& in);

// The plan for people: its inputs, figures and advice, a line each.
std::string plan_text(const nlohmann::json& plan);

}  // namespace mlsup::engine
