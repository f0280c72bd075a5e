#pragma once
// The lifecycle verbs: `mlsup resume CONFIG [--from CHECKPOINT]`, `mlsup pause CONFIG [--now]`,
// `mlsup cancel CONFIG`, `mlsup unexclude CONFIG NODE [--why TEXT]` (state/lifecycle.h).
#include <string>

#include "state/lifecycle.h"

namespace mlsup::cli {

// Checks that the campaign's state allows the request (else its exit code and message, nothing
// changed), leaves it in the campaign's requests folder, and carries it out when no supervisor holds
// the campaign, or says that the one holding it will; prints what happens.
int lifecycle_verb(const std::string& config_path, engine::Request r);

}  // namespace mlsup::cli
