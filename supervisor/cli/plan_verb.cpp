#include "cli/plan_verb.h"

#include <chrono>
#include <condition_variable>
#include <ctime>
#include <iostream>
#include <memory>
#include <mutex>
#include <thread>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "campaign/disk_facts.h"
#include "cli/exit_codes.h"
#include "config/duration.h"
#include "config/load.h"
#include "slurm/client.h"
#include "slurm/config_check.h"
#include "store/read_campaign.h"
#include "supervise/loop.h"
#include "util/json.h"
#include "views/plan_view.h"

namespace mlsup::cli {
namespace {

// How long plan waits for the cluster's accounting before it goes on without it.
constexpr double kHistoryDeadline = 5;

// The cluster's node-failure history since `since`, asked once on a thread of its own; an error when Slurm did not
// answer within deadline seconds (the question is left to finish on its own).
slurm::Result<slurm::NodeFailureHistory> ask_history(const std::string& backend, std::time_t since, double deadline) {
  using Answer = slurm::Result<slurm::NodeFailureHistory>;
  if (const auto problem = slurm::config_problem()) return std::unexpected(slurm::Error{.message = *problem});
  struct Shared {
    std::mutex mutex;
    std::condition_variable done;
    std::optional<Answer> answer;
  };
  auto shared = std::make_shared<Shared>();
  std::thread([shared, backend, since] {
    auto client = slurm::make_client(backend);
    Answer answer = client ? client->node_failure_history(since)
                           : Answer(std::unexpected(slurm::Error{.message = "no Slurm backend " + backend}));
    std::lock_guard lock(shared->mutex);
    shared->answer = std::move(answer);
    shared->done.notify_all();
  }).detach();
  std::unique_lock lock(shared->mutex);
  if (!shared->done.wait_for(lock, std::chrono::duration<double>(deadline), [&] { return shared->answer.has_value(); }))
    return std::unexpected(slurm::Error{.message = "Slurm did not answer within " + std::to_string(static_cast<int>(deadline)) + "s"});
  return std::move(*shared->answer);
}

// A positive duration option's seconds, or nullopt after saying why on stderr.
std::optional<double> positive_duration(const std::string& option, const std::string& text) {
  const auto d = config::parse_duration(text);
  if (d && d->count() > 0) return static_cast<double>(d->count());
  std::cerr << "mlsup plan: " << option << " " << text << ": " << (d ? "must be longer than 0" : d.error())
            << " (a duration such as 6h or 2d)\n";
  return std::nullopt;
}

// Reads the cluster's history into in when the MTBF would come from it (no --mtbf, no failure in the journal).
void read_history(engine::PlanInputs& in, const std::string& backend, double window) {
  if (!engine::wants_history(in)) return;
  const auto answer = ask_history(backend, static_cast<std::time_t>(in.now.wall - window), kHistoryDeadline);
  if (answer) in.history = *answer;
  else in.accounting_error = answer.error().message.empty() ? "Slurm's accounting did not answer" : answer.error().message;
}

}  // namespace

CLI::App* add_plan_verb(CLI::App& app, PlanOptions& o) {
  auto* cmd = app.add_subcommand(
      "plan", "size the checkpoint interval (Young/Daly), the time limit and the signal lead from the campaign's measured "
              "saves, steps and failures; the goodput and node-hours to target.steps; the disk runway");
  cmd->add_option("CONFIG", o.config, "campaign config (YAML)")->required();
  cmd->add_option("--mtbf", o.mtbf,
                  "the mean time between failures of a job this wide (\"6h\", \"2d\"), instead of the campaign's own "
                  "failures");
  cmd->add_option("--history", o.history,
                  "how far back the cluster's accounting is read for node failures when the campaign has had none and "
                  "no --mtbf is given (default 30d)");
  cmd->add_flag("--json", o.json, "print as JSON");
  return cmd;
}

int plan_verb(const PlanOptions& o) {
  std::optional<double> mtbf;
  if (!o.mtbf.empty() && !(mtbf = positive_duration("--mtbf", o.mtbf))) return kUsage;
  const auto window = positive_duration("--history", o.history);
  if (!window) return kUsage;
  auto c = config::load_config_file(o.config);
  if (!c) {
    for (const auto& e : c.error()) std::cerr << e.str() << "\n";
    return kBadInput;
  }
  const auto now = engine::clocks_now();
  const auto stored = store::read_campaign(*c, now, true);
  engine::PlanInputs in{*c, stored.journal.state, stored.memory,
                        engine::disk_facts(*c, stored.memory), mtbf, now};
  read_history(in, c->slurm.backend, *window);
  const auto plan = engine::plan_json(in);
  if (o.json) std::cout << util::dump_json(plan, 2) << "\n";
  else std::cout << engine::plan_text(plan);
  return kOk;
}

}  // namespace mlsup::cli
