#pragma once
// What a reload (SIGHUP) changes in a campaign's config, and what it may not change while it runs.
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"

namespace mlsup::config {

// The keys whose values differ between before and after, in the order of the schema.
std::vector<std::string> changed_keys(const Config& before, const Config& after);

// Why a live campaign cannot take a config that changes these keys (its name, or where its state,
// checkpoints and heartbeats are: the running job and the journal use them), or nullopt when it can.
std::optional<std::string> reload_refusal(const std::vector<std::string>& changed);

}  // namespace mlsup::config
