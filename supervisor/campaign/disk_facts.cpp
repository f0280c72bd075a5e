#include "campaign/disk_facts.h"

#include <algorithm>
#include <utility>

#include "checkpoint/checkpoints.h"
#include "edges/disk_use.h"

namespace mlsup::engine {

DiskFacts disk_facts(const config::Config& c, const Memory& memory) {
  return disk_facts(c, memory, checkpoint::scan(c.checkpoint));
}

DiskFacts disk_facts(const config::Config& c, const Memory& memory, const checkpoint::Scan& scan) {
  DiskFacts facts;
  const std::pair<const char*, std::string> folders[] = {
      {"checkpoints", c.checkpoint.dir}, {"state", c.state_dir}, {"heartbeats", c.heartbeat.dir}};
  for (const auto& [role, folder] : folders) {
    const auto use = edges::disk_usage(folder);
    if (!use) continue;
    auto same = std::find_if(facts.file_systems.begin(), facts.file_systems.end(),
                             [&](const FileSystemSeen& f) { return f.use.device == use->device; });
    if (same == facts.file_systems.end()) {
      facts.file_systems.push_back({decide::DiskUse{use->path, use->bytes_percent, use->inodes_percent, use->free_bytes,
                                                    use->free_inodes, use->device},
                                    {}});
      same = facts.file_systems.end() - 1;
    }
    same->roles.emplace_back(role);
  }
  std::string sized;
  checkpoint_facts(scan, memory, facts, sized);
  return facts;
}

void checkpoint_facts(const config::Config& c, const Memory& memory, DiskFacts& facts, std::string& sized) {
  checkpoint_facts(checkpoint::scan(c.checkpoint), memory, facts, sized);
}

void checkpoint_facts(const checkpoint::Scan& scan, const Memory& memory, DiskFacts& facts, std::string& sized) {
  for (const auto& ck : scan.checkpoints)
    if (ck.complete) facts.checkpoint_steps.push_back(ck.step);
  sized.clear();
  const auto newest = checkpoint::newest_complete(scan);
  if (!newest) return;
  if (memory.sized_path == newest->path) {
    facts.checkpoint_size = decide::CheckpointSize{memory.sized_bytes, memory.sized_files};
  } else {
    const auto size = edges::tree_size(newest->path);
    facts.checkpoint_size = decide::CheckpointSize{size.bytes, size.files};
  }
  sized = newest->path;
}

}  // namespace mlsup::engine
