#pragma once
// `mlsup exclusions CONFIG [--json]`: the campaign's node exclusions, live ones first, each with its
// evidence (the attempt, how it ended, the rule that blamed the node) and, for one that ended early,
// what ended it (`mlsup unexclude`: who and why). Read-only, as status: the journal replayed whole.
#include <string>

#include <nlohmann/json.hpp>

#include "store/read_campaign.h"

namespace mlsup::cli {

// Every exclusion of the journal at wall time now, as `exclusions --json` prints it: {"now", "live" (how
// many), "exclusions": live ones first, then ended ones, each newest first}.
nlohmann::json exclusions_view(const store::StoredJournal& journal, double now);

// The verb: the view for people or as JSON; exit 0, 3 for a config with errors, 1 for a journal with problems.
int exclusions_verb(const std::string& config_path, bool json);

}  // namespace mlsup::cli
