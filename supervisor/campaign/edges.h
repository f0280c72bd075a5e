#pragma once
// The world outside a campaign's core, injected so tests can replace it: Slurm, the clocks, the lease,
// processes, the file system's fill.
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "decide/disk.h"
#include "edges/process.h"
#include "state/memory.h"
#include "slurm/client.h"
#include "util/error.h"

namespace mlsup::engine {

struct Edges {
  slurm::Client* slurm = nullptr;
  std::function<double()> now;  // unix seconds
  std::function<void(const nlohmann::json&)> on_event;  // also told of every event; may be empty
  // The nodes of a running job that do not answer a probe; empty function = no probing.
  std::function<std::vector<std::string>(slurm::JobId, const std::vector<std::string>&, std::chrono::seconds)> probe;
  // The dump step at a hang over nodes of a running job (slurm/node_dump.h); empty function = no dump.
  std::function<edges::ProcessResult(slurm::JobId, const std::vector<std::string>&, std::chrono::seconds)> node_dump;
  std::function<double()> mono;  // seconds on a clock that never steps; empty function = now
  std::string clock_id;          // which monotonic clock mono reads (host and boot)
  // Confirms that this supervisor still holds the campaign and will for seconds more (renewing the
  // lease as needed); an error of kind Superseded when another took over. Empty function = always.
  std::function<util::Result<void>(double seconds)> keep_lease;
  long long epoch = 0;           // the lease's epoch, stamped on every journal record (0 = none)
  // Waits for the supervisor's turn to call sbatch (its submit rate), returning the seconds waited;
  // empty function = no wait.
  std::function<double()> pace_submit;
  // Takes the supervisor's next turn to call sbatch without waiting, returning the seconds until it
  // comes (0: now); a new submission then waits for it in no pass. Empty function = it waits in
  // pace_submit (a tick, a verb).
  std::function<double()> reserve_submit;
  // How full the file system holding a folder is; empty function = statvfs (edges/disk_use.h).
  std::function<std::optional<decide::DiskUse>(const std::string& folder)> disk;
  // The file server's clock, as the lease reads it (nullopt: it cannot be read); empty function = now.
  std::function<std::optional<double>()> server_now;
  // When process pid of this host started (edges::process_start_ticks); empty function = that one.
  std::function<std::optional<long long>(int pid)> process_start;
  // Ends the process group of a process of this host (an earlier supervisor's sbatch past its deadline).
  std::function<void(int pid)> kill_group;
  // Waits this many seconds (the ranks' stacks at a hang); empty function = the thread sleeps.
  std::function<void(double seconds)> sleep;

  // The monotonic clock's seconds (the wall clock's when none is given).
  double monotonic() const { return mono ? mono() : now(); }
  // Both clocks at once, with the monotonic one's identity.
  Clocks clocks() const { return {now(), monotonic(), clock_id}; }
};

}  // namespace mlsup::engine
