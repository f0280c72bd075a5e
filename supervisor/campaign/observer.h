#pragma once
// What observes a campaign's world for its pass (campaign/observe.cpp): each source reconcile's needs()
// asks for, read at most once per round. It decides nothing and writes nothing but the template's
// snapshot (campaign/template_snapshot.h).
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "campaign/edges.h"
#include "campaign/template_snapshot.h"
#include "config/config.h"
#include "edges/file_heads.h"
#include "events/kinds.h"
#include "reconcile/intents.h"
#include "reconcile/world.h"
#include "state/memory.h"
#include "state/state.h"
#include "util/error.h"
#include "util/zone.h"

namespace mlsup::engine {

// How often a supervisor looks at the checkpoint folder's file system (statvfs may be an RPC to the
// servers of a parallel file system): once a minute at most, at the first pass of each process.
inline constexpr double kDiskLookEvery = 60;

// True for the kill switch's text when mlsup wrote it (a pause --now, a cancel, the window's end: what
// AskToStop writes), false for a person's `mlsup stop` ("stop requested ...") or a file of their own.
bool switch_set_by_mlsup(std::string_view text);

class Observer {
 public:
  // The campaign's config, edges, memory and id, which outlive the observer and change under it.
  Observer(const config::Config& config, const Edges& edges, const Memory& memory, const std::string& campaign_id,
           TemplateKeeper& templates, Tell tell);

  // What reconcile needs of the world for state s.
  World observe(const CampaignState& s);
  // Loads the window's time zone (nothing without a window); UTC, and the error, when it cannot be.
  util::Result<void> window_zone();

 private:
  // Reads the sources n asks for that w lacks; false when it read none.
  bool read_sources(const CampaignState& s, const Needs& n, World& w);
  // The attempt's liveness files (heartbeat.source): its heartbeat files, and its output's size while
  // that is what shows life.
  std::map<std::string, std::string> read_liveness(const AttemptState& a, World& w);
  // The window at wall time now (nullopt: none), worked out again only once the last change it named has come.
  std::optional<WindowNow> window_at(double now);
  bool kill_switch() const;
  // Whether an earlier supervisor's sbatch still runs (this host), or the file server's clock (another).
  void look_at_sbatch(const SbatchRun& run, World& w) const;
  // The files a job the controller forgot left that show it started: its output (mlsup's default
  // path), its attempt's heartbeat files.
  std::vector<std::string> started_signs(const AttemptState& a, slurm::JobId id) const;
  // The checkpoint folder's file system, when a look is due (kDiskLookEvery) and the campaign has not ended.
  std::optional<decide::DiskUse> look_at_disk(const CampaignState& s);
  // What the checkpoint file system's runway is worked out from: the checkpoints' steps, the newest complete
  // one's size (measured once per checkpoint: memory keeps it), the measured pace.
  void look_at_runway(World& w) const;
  // Accounting's records of the attempt's job (by id), or of its tag when it has no job yet.
  slurm::Result<slurm::Accounting> accounting(const AttemptState& a);

  const config::Config& config_;
  const Edges& edges_;
  const Memory& memory_;
  const std::string& campaign_id_;
  TemplateKeeper& templates_;
  Tell tell_;
  std::optional<util::Zone> zone_;  // the window's time zone, once loaded
  WindowNow window_;                // the window as last worked out: open, and until when (UTC s)
  double disk_looked_at_ = 0;       // mono: when look_at_disk last looked (0: not yet)
  edges::FileHeads heads_;          // the heartbeat files as last read: one unchanged is not read again
};

}  // namespace mlsup::engine
