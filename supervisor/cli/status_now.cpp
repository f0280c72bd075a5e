#include "cli/status_now.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "cli/status_watch.h"
#include "slurm/client.h"
#include "slurm/config_check.h"
#include "util/json.h"

namespace mlsup::cli {
using nlohmann::json;

namespace {

json seen(const char* source, double at, double now) {
  return {{"source", source}, {"at", at > 0 ? json(at) : json(nullptr)}, {"age", at > 0 ? json(std::max(0.0, now - at)) : json(nullptr)}};
}

// When the supervisor last saw attempt's job running, as its memory saved it (wall time; 0: not saved).
double seen_running(const store::StoredCampaign& stored, int attempt) {
  const auto& m = stored.memory;
  if (m.attempt != attempt || m.running_seen_at <= 0 || m.saved_wall <= 0) return 0;
  return m.saved_wall - std::max(0.0, m.saved_mono - m.running_seen_at);
}

}  // namespace

void stored_job(json& view, const store::StoredCampaign& stored, double now) {
  view["job_state"] = nullptr;
  view["nodes"] = nullptr;
  view["job_seen"] = nullptr;
  const auto* a = stored.journal.state.current();
  if (!a) return;
  if (a->ended) {  // as its ended record told
    if (a->ended_at <= 0) return;
    view["job_state"] = a->end_slurm_state.empty() ? json(nullptr) : json(a->end_slurm_state);
    view["nodes"] = a->end_nodes;
    view["job_seen"] = seen("journal", a->ended_at, now);
    return;
  }
  const auto id = open_job(stored);
  if (!id || !stored.last_pass || !stored.last_pass->is_object()) return;
  const auto& pass = *stored.last_pass;
  if (!pass.contains("job_id") || !pass["job_id"].is_number() || pass["job_id"].get<long long>() != static_cast<long long>(*id))
    return;  // the last pass looked at another job (an earlier attempt's)
  view["job_state"] = pass.value("job_state", json(nullptr));
  view["nodes"] = pass.value("nodes", json(nullptr));
  view["job_seen"] = seen("supervisor", std::max(util::number_field(pass, "updated", 0), seen_running(stored, a->number)), now);
}

std::optional<slurm::JobId> open_job(const store::StoredCampaign& stored) {
  const auto* a = stored.journal.state.current();
  if (!a || a->ended) return std::nullopt;
  return a->task_job_id ? a->task_job_id : a->job_id;
}

std::optional<slurm::JobId> job_to_ask(const store::StoredCampaign& stored) {
  return stored.lease.held() ? std::nullopt : open_job(stored);
}

slurm::Result<std::vector<slurm::Job>> ask_jobs(const std::string& backend, const std::vector<slurm::JobId>& ids,
                                               double deadline) {
  if (const auto problem = slurm::config_problem()) return std::unexpected(slurm::Error{.message = *problem});
  // The question runs on a thread of its own; one that outlives the deadline is left to finish alone.
  struct Shared {
    std::mutex mutex;
    std::condition_variable done;
    std::optional<slurm::Result<std::vector<slurm::Job>>> answer;
  };
  auto shared = std::make_shared<Shared>();
  std::thread([shared, backend, ids] {
    auto client = slurm::make_client(backend);
    slurm::Result<std::vector<slurm::Job>> answer =
        client ? client->jobs(ids) : slurm::Result<std::vector<slurm::Job>>(std::unexpected(slurm::Error{.message = "no Slurm backend " + backend}));
    std::lock_guard lock(shared->mutex);
    shared->answer = std::move(answer);
    shared->done.notify_all();
  }).detach();
  std::unique_lock lock(shared->mutex);
  if (!shared->done.wait_for(lock, std::chrono::duration<double>(deadline), [&] { return shared->answer.has_value(); }))
    return std::unexpected(slurm::Error{.message = "Slurm did not answer within " + std::to_string(static_cast<int>(deadline)) + "s"});
  return std::move(*shared->answer);
}

void slurm_job(json& view, slurm::JobId id, const slurm::Result<std::vector<slurm::Job>>& answer, double now) {
  if (!answer) {
    if (view["job_seen"].is_null()) view["job_seen"] = seen("none", 0, now);
    view["job_seen"]["slurm_error"] = answer.error().message;
    return;
  }
  const auto it = std::find_if(answer->begin(), answer->end(), [&](const slurm::Job& j) { return j.job_id == id; });
  if (it == answer->end()) {
    view["job_state"] = "gone";
    view["nodes"] = nullptr;
  } else {
    view["job_state"] = std::string(slurm::state_name(it->state));
    view["nodes"] = it->nodes;
  }
  view["job_seen"] = seen("slurm", now, now);
}

void live_step(json& view, const config::Config& c, const store::StoredCampaign& stored, double now) {
  const auto* a = stored.journal.state.current();
  if (!a || a->ended) return;
  const auto hb = live_heartbeat(c, a->number, now);
  if (!hb) return;
  const bool behind = util::string_field(view, "step_source") != "heartbeat" || !view["step"].is_number() ||
                      view["step"].get<long long>() < hb->step;
  if (!behind) return;  // memory knows when that step was first seen: its age stays
  view["step"] = hb->step;
  view["step_source"] = "heartbeat";
  view["heartbeat_age"] = hb->age;  // written since the step memory holds: the file's write time
}

}  // namespace mlsup::cli
