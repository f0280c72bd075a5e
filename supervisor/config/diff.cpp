#include "config/diff.h"

#include <algorithm>
#include <array>
#include <string_view>

#include "config/schema.h"

namespace mlsup::config {
namespace {

// Keys a live campaign keeps: changing one would leave its journal, its checkpoints or its running
// job's heartbeats behind.
constexpr std::array<std::string_view, 4> kFixedWhileLive{"name", "state_dir", "checkpoint.dir", "heartbeat.dir"};

// Two fields of one key (so of one type) hold equal values.
bool same(const Field& a, const Field& b) {
  return std::visit([&](auto* x) { return *x == *std::get<std::remove_cvref_t<decltype(x)>>(b); }, a);
}

}  // namespace

std::vector<std::string> changed_keys(const Config& before, const Config& after) {
  Config a = before, b = after;  // the schema's accessors take a mutable config
  std::vector<std::string> out;
  for (const auto& key : schema())
    if (!same(key.field(a), key.field(b))) out.emplace_back(key.path);
  return out;
}

std::optional<std::string> reload_refusal(const std::vector<std::string>& changed) {
  std::string keys;
  for (const auto& k : changed)
    if (std::find(kFixedWhileLive.begin(), kFixedWhileLive.end(), k) != kFixedWhileLive.end())
      keys += (keys.empty() ? "" : ", ") + k;
  if (keys.empty()) return std::nullopt;
  return keys + " changed: a live campaign keeps its name, state_dir, checkpoint.dir and heartbeat.dir (its journal, "
                "checkpoints and the running job's heartbeats are there); stop it first, or give the new campaign a "
                "config file of its own";
}

}  // namespace mlsup::config
