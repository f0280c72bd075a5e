#include "cli/plan_verb.h"

#include <iostream>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "campaign/disk_facts.h"
#include "cli/exit_codes.h"
#include "config/duration.h"
#include "config/load.h"
#include "store/read_campaign.h"
#include "supervise/loop.h"
#include "util/json.h"
#include "views/plan_view.h"

namespace mlsup::cli {

CLI::App* add_plan_verb(CLI::App& app, PlanOptions& o) {
  auto* cmd = app.add_subcommand(
      "plan", "size the checkpoint interval (Young/Daly), the time limit and the signal lead from the campaign's measured "
              "saves, steps and failures; the goodput and node-hours to target.steps; the disk runway");
  cmd->add_option("CONFIG", o.config, "campaign config (YAML)")->required();
  cmd->add_option("--mtbf", o.mtbf,
                  "the mean time between failures of a job this wide (\"6h\", \"2d\"), instead of the campaign's own "
                  "failures");
  cmd->add_flag("--json", o.json, "print as JSON");
  return cmd;
}

int plan_verb(const PlanOptions& o) {
  std::optional<double> mtbf;
  if (!o.mtbf.empty()) {
    const auto d = config::parse_duration(o.mtbf);
    if (!d || d->count() <= 0) {
      std::cerr << "mlsup plan: --mtbf " << o.mtbf << ": " << (d ? "must be longer than 0" : d.error())
                << " (a duration such as 6h or 2d)\n";
      return kUsage;
    }
    mtbf = static_cast<double>(d->count());
  }
  auto c = config::load_config_file(o.config);
  if (!c) {
    for (const auto& e : c.error()) std::cerr << e.str() << "\n";
    return kBadInput;
  }
  const auto now = engine::clocks_now();
  const auto stored = store::read_campaign(*c, now, true);
  const auto plan = engine::plan_json({*c, stored.journal.state, stored.journal.records, stored.memory,
                                       engine::disk_facts(*c, stored.memory), mtbf, now});
  if (o.json) std::cout << util::dump_json(plan, 2) << "\n";
  else std::cout << engine::plan_text(plan);
  return kOk;
}

}  // namespace mlsup::cli
