#pragma once
// The Prometheus text exposition (format 0.0.4) of a supervisor's campaigns, from the views `status --json`
// prints (cli/campaign_verbs.h's status_json) and the supervisor's own figures. Pure.
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "supervise/loop.h"

namespace mlsup::cli {

// Every campaign's metrics (label campaign="NAME") and the supervisor's, each family once with its HELP and
// TYPE lines; a figure the view does not know (null) has no sample.
std::string metrics_text(const std::vector<nlohmann::json>& views, const engine::PassFigures& figures);

// A label value as the text format writes it between quotes: backslash, quote and newline escaped.
std::string label_value(std::string_view value);

}  // namespace mlsup::cli
