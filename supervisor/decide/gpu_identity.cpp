#include "decide/gpu_identity.h"

#include <algorithm>
#include <set>

#include "util/strings.h"

namespace mlsup::decide {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// The forms a text may name a GPU by: its UUID, its bus in full, and the bus without its function as
// the kernel's Xid lines print it (with a 4- or 8-digit domain).
std::vector<std::string> names_of(const slurm::Gpu& g) {
  std::vector<std::string> out{lower(g.uuid)};
  if (g.bus.empty()) return out;
  const std::string bus = lower(g.bus);
  out.push_back(bus);
  const auto dot = bus.rfind('.');
  const std::string device = dot == std::string::npos ? bus : bus.substr(0, dot);
  out.push_back("pci:" + device);
  if (device.size() > 4 && device[4] == ':') out.push_back("pci:0000" + device);
  return out;
}

bool names(const std::string& text, const slurm::Gpu& g) {
  const auto forms = names_of(g);
  return std::any_of(forms.begin(), forms.end(), [&](const std::string& f) { return !f.empty() && text.find(f) != std::string::npos; });
}

bool contains_all(const std::vector<slurm::Gpu>& gpus, const std::set<std::string>& uuids) {
  std::size_t found = 0;
  for (const auto& g : gpus) found += uuids.count(g.uuid);
  return !uuids.empty() && found == uuids.size();
}

}  // namespace

std::vector<std::string> carried_gpus(std::string_view text, const std::vector<slurm::Gpu>& gpus) {
  const std::string t = lower(text);
  std::vector<std::string> named, all;
  for (const auto& g : gpus) {
    all.push_back(g.uuid);
    if (names(t, g)) named.push_back(g.uuid);
  }
  return named.empty() ? all : named;
}

std::vector<GpuMove> moved_exclusions(const std::vector<Exclusion>& ledger, double now,
                                      const std::map<std::string, std::vector<slurm::Gpu>>& where) {
  std::map<std::string, std::pair<GpuMove, std::set<std::string>>> by_node;  // an excluded node's live entries: the move, the GPUs carried
  for (const auto& e : ledger) {
    if (e.until <= now || e.gpus.empty()) continue;
    auto& [m, uuids] = by_node[e.node];
    m.from = e.node;
    m.until = std::max(m.until, e.until);
    m.reason = e.reason;
    uuids.insert(e.gpus.begin(), e.gpus.end());
  }
  std::vector<GpuMove> out;
  for (auto& [node, entry] : by_node) {
    auto& [m, uuids] = entry;
    for (const auto& [other, gpus] : where) {
      if (other == node || !contains_all(gpus, uuids)) continue;
      const bool already = std::any_of(ledger.begin(), ledger.end(), [&](const Exclusion& e) {
        return e.node == other && e.until > now && std::set<std::string>(e.gpus.begin(), e.gpus.end()) == uuids;
      });
      if (already) break;
      m.to = other;
      m.gpus.assign(uuids.begin(), uuids.end());
      out.push_back(m);
      break;
    }
  }
  return out;
}

std::string gpu_words(const std::vector<std::string>& uuids, const std::vector<slurm::Gpu>& gpus) {
  std::vector<std::string> words;
  for (const auto& u : uuids) {
    const auto it = std::find_if(gpus.begin(), gpus.end(), [&](const slurm::Gpu& g) { return g.uuid == u; });
    words.push_back(it == gpus.end() || it->bus.empty() ? u : u + " (" + it->bus + ")");
  }
  return util::join(words, ", ");
}

}  // namespace mlsup::decide
