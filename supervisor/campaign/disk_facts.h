#pragma once
// What the disk runway is worked out from, measured now: the file systems a campaign writes (its checkpoints,
// its state, its heartbeats), its complete checkpoints' steps and the newest one's size.
#include "checkpoint/checkpoints.h"
#include "config/config.h"
#include "state/memory.h"
#include "views/plan_view.h"

namespace mlsup::engine {

// The complete checkpoints' steps and the newest one's size: memory's when it measured that one, else walked now;
// sized names the checkpoint measured ("" when there is none).
void checkpoint_facts(const config::Config& c, const Memory& memory, DiskFacts& facts, std::string& sized);
// The same from a scan of checkpoint.dir already made.
void checkpoint_facts(const checkpoint::Scan& scan, const Memory& memory, DiskFacts& facts, std::string& sized);

// statvfs of each folder (one entry per file system, its roles merged), a scan of checkpoint.dir, and the
// newest complete checkpoint's size: memory's when it measured that one, else walked now.
DiskFacts disk_facts(const config::Config& c, const Memory& memory);
// The same with checkpoint.dir's scan already made (status shows the newest checkpoint from it too).
DiskFacts disk_facts(const config::Config& c, const Memory& memory, const checkpoint::Scan& scan);

}  // namespace mlsup::engine
