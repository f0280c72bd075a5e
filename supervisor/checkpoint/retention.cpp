#include "checkpoint/retention.h"

#include <algorithm>
#include <filesystem>

namespace mlsup::checkpoint {
namespace {

// A path in a form where "/a/b/", "/a//b" and "/a/./b" compare equal to "/a/b".
std::string normal(const std::string& path) {
  std::string out = std::filesystem::path(path).lexically_normal().string();
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

bool is_protected(const Checkpoint& c, const std::vector<std::string>& protected_paths) {
  const std::string path = normal(c.path);
  return std::any_of(protected_paths.begin(), protected_paths.end(),
                     [&](const std::string& p) { return !p.empty() && normal(p) == path; });
}

// The complete checkpoint just before path: where a fallback from path resumes (decide/fallback.h).
std::string before(const Scan& scan, const std::string& path) {
  const auto& all = scan.checkpoints;
  const auto at = std::find_if(all.begin(), all.end(), [&](const Checkpoint& c) { return normal(c.path) == normal(path); });
  if (path.empty() || at == all.end()) return "";
  for (auto it = std::make_reverse_iterator(at); it != all.rend(); ++it)
    if (it->complete) return it->path;
  return "";
}

}  // namespace

std::vector<Checkpoint> deletable(const Scan& scan, int keep, const std::vector<std::string>& protected_paths) {
  const auto& all = scan.checkpoints;
  const auto proven = [](const Checkpoint& c) { return c.complete && c.proven; };
  const auto newest = std::find_if(all.rbegin(), all.rend(), proven);
  if (keep <= 0 || newest == all.rend()) return {};
  std::vector<Checkpoint> out;
  int kept = 0;
  for (auto it = newest; it != all.rend(); ++it) {
    if (proven(*it) && kept < keep) {
      ++kept;
      continue;
    }
    const bool unproven = it->complete && !it->proven;  // may be the only good one: a person decides
    if (!unproven && !is_protected(*it, protected_paths)) out.push_back(*it);
  }
  std::reverse(out.begin(), out.end());
  return out;
}

std::vector<Checkpoint> prunable(const Scan& scan, int keep, const Needed& needed) {
  std::vector<std::string> paths{needed.named, needed.proven, needed.resumed_from, before(scan, needed.fallback_from)};
  paths.insert(paths.end(), needed.handed.begin(), needed.handed.end());
  return deletable(scan, keep, paths);
}

}  // namespace mlsup::checkpoint
