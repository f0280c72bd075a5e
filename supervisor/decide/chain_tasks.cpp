// Chain mode's facts about an array: a task's claim file, and which of the array's tasks are left.
#include "decide/chain_tasks.h"

#include <algorithm>

namespace mlsup::engine {
namespace {

bool live(const slurm::Job& j) { return j.state == slurm::JobState::Pending || j.state == slurm::JobState::Running; }

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

bool task_running(const std::vector<slurm::Job>& jobs) {
  return std::any_of(jobs.begin(), jobs.end(),
                     [](const slurm::Job& j) { return j.array_task_id && j.state == slurm::JobState::Running; });
}

std::optional<slurm::Job> next_task(const std::vector<slurm::Job>& jobs, slurm::JobId previous_task) {
  if (const auto* rest = queued_remainder(jobs)) return *rest;
  for (const auto& j : jobs)
    if (live(j) && j.array_task_id && j.job_id != previous_task) return j;
  return std::nullopt;
}

std::optional<slurm::Job> unclaimed_task(const std::vector<slurm::Job>& jobs, const std::vector<slurm::JobId>& known,
                                         double now, double after) {
  for (const auto& j : jobs) {
    if (!j.array_task_id || j.state != slurm::JobState::Running || j.start_time <= 0) continue;
    if (now - static_cast<double>(j.start_time) < after) continue;
    if (std::find(known.begin(), known.end(), j.job_id) == known.end()) return j;
  }
  return std::nullopt;
}

}  // namespace mlsup::engine
