// A checkpoint moved aside after attempts failed before any step from it: into checkpoint.dir/.quarantine/
// (never deleted), the layout's pointer file pointed at the newest complete one left, the fact journaled.
#include <filesystem>

#include "campaign/actor.h"
#include "checkpoint/checkpoints.h"
#include "checkpoint/judge.h"
#include "journal/atomic_file.h"

namespace mlsup::engine {
namespace fs = std::filesystem;

namespace {

// A free name for from in .quarantine/ beside it: its own name, else NAME.2, NAME.3, ...
fs::path quarantine_path(const fs::path& from) {
  const fs::path dir = from.parent_path() / ".quarantine";
  fs::path to = dir / from.filename();
  std::error_code ec;
  for (int n = 2; fs::exists(fs::symlink_status(to, ec)); ++n) to = dir / (from.filename().string() + "." + std::to_string(n));
  return to;
}

// Moves from aside; where it went, or why it could not be moved.
util::Result<std::string> move_aside(const fs::path& from) {
  const fs::path to = quarantine_path(from);
  std::error_code ec;
  fs::create_directories(to.parent_path(), ec);
  if (!ec) fs::rename(from, to, ec);
  if (ec) return util::fail(ec.message());
  return to.string();
}

// The layout's pointer file, when it has one, names the newest complete checkpoint left ("" = none to name).
std::string repoint(const config::CheckpointSettings& s) {
  const std::string file = checkpoint::pointer_file(s);
  if (file.empty()) return "";
  const auto newest = checkpoint::newest_complete(checkpoint::scan(s));
  if (!newest) return "";
  const std::string text = checkpoint::pointer_text(s, *newest);
  if (!journal::write_atomically((fs::path(s.dir) / file).string(), text + "\n")) return "";
  return "; " + file + " now names " + text;
}

}  // namespace

util::Result<void> Actor::act(const CampaignState&, const intent::Quarantine& i) {
  records::Quarantined q{i.attempt, i.path, "", i.step, i.reason};
  std::string detail;
  if (const auto moved = move_aside(i.path)) {
    q.to = *moved;
    detail = i.path + " moved to " + *moved + repoint(config_.checkpoint);
  } else {
    detail = i.path + " could not be moved (" + moved.error().message + "); it is not resumed from again";
  }
  return fact(q, events::CheckpointQuarantined{detail});
}

}  // namespace mlsup::engine
