#pragma once
// `mlsup plan CONFIG [--mtbf D] [--history D] [--json]`: the campaign's checkpoint interval, time limit and signal lead sized
// from its own measurements (views/plan_view.h), its disk runway, and the advice.
#include <string>

namespace CLI {
class App;
}

namespace mlsup::cli {

struct PlanOptions {
  std::string config;
  std::string mtbf;  // a duration ("6h"); "" = the campaign's own failures
  std::string history = "30d";  // how far back the cluster's accounting is read for node failures
  bool json = false;
};

// Adds the `plan` verb and its options to app, filling o; the verb's subcommand.
CLI::App* add_plan_verb(CLI::App& app, PlanOptions& o);

// Carries out the verb: 0, 2 (an --mtbf or --history it cannot read) or 3 (a config with errors).
int plan_verb(const PlanOptions& o);

}  // namespace mlsup::cli
