// Which events are alerts and of which kind, which kinds notify.on chooses, what an alert says (its
// summary, the json and slack bodies), how notify.on is checked, and when a budget is nearly spent.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include <nlohmann/json.hpp>

#include "config/alert_kinds.h"
#include "config/load.h"
#include "config/schema.h"
#include "decide/policy.h"
#include "views/alert_kinds.h"
#include "support.h"

using namespace mlsup;
using nlohmann::json;

namespace {

std::string kind_of(const json& e) { return std::string(engine::alert_kind(e).value_or("none")); }

// The one error of a config that adds extra to a minimal one, as "line:column: key: message".
std::string config_error(const std::string& extra) {
  test::TempDir dir;
  dir.write("job.sbatch", "#!/bin/bash\nsrun true\n");
  const auto r = config::load_config_file(dir.write("c.yaml", "name: demo\ntemplate: job.sbatch\n" + extra));
  REQUIRE_FALSE(r.has_value());
  REQUIRE(r.error().size() == 1);
  const auto& e = r.error().front();
  return std::to_string(e.line) + ":" + std::to_string(e.column) + ": " + e.subject + ": " + e.message;
}

}  // namespace

TEST_CASE("each alert kind comes from its events, as a table: event -> kind") {
  const std::pair<json, const char*> rows[] = {
      {{{"event", "stopped"}}, "stopped"},
      {{{"event", "completed"}}, "completed"},
      {{{"event", "pending-stuck"}, {"alert", true}}, "pending"},
      {{{"event", "budget-nearly-spent"}}, "budget"},
      {{{"event", "slurm-unreachable"}}, "trouble"},
      {{{"event", "submit-failed"}, {"alert", true}}, "trouble"},
      {{{"event", "submit-failed"}, {"alert", false}}, "none"},
      {{{"event", "cancel-failed"}, {"alert", true}}, "trouble"},
      {{{"event", "hang-detected"}}, "hang"},
      {{{"event", "attempt-ended"}, {"action", "resubmit"}, {"class", "failed"}}, "restart"},
      {{{"event", "attempt-ended"}, {"action", "resubmit"}, {"class", "hang"}}, "restart"},
      {{{"event", "attempt-ended"}, {"action", "resubmit"}, {"class", "timeout"}}, "none"},
      {{{"event", "attempt-ended"}, {"action", "resubmit"}, {"class", "preempted"}}, "none"},
      {{{"event", "attempt-ended"}, {"action", "resubmit"}, {"class", "planned_exit"}}, "none"},
      {{{"event", "attempt-ended"}, {"action", "stop"}}, "none"},
      {{{"event", "excluded"}, {"node", "n1"}}, "exclusion"},
      {{{"event", "submitted"}}, "none"},
      {json::array(), "none"},
  };
  for (const auto& [event, kind] : rows) {
    CAPTURE(event.dump());
    CHECK(kind_of(event) == kind);
  }
}

TEST_CASE("every kind an event can be is one notify.on may name, and the defaults are the table's") {
  std::vector<std::string> names;
  for (const auto& k : config::alert_kinds()) names.emplace_back(k.name);
  for (const char* e : {"stopped", "completed", "pending-stuck", "budget-nearly-spent", "slurm-unreachable", "hang-detected", "excluded"})
    CHECK(std::count(names.begin(), names.end(), kind_of({{"event", e}})) == 1);
  CHECK(std::count(names.begin(), names.end(), kind_of({{"event", "attempt-ended"}, {"action", "resubmit"}})) == 1);
  const auto* on = config::find_key("notify.on");
  REQUIRE(on != nullptr);
  CHECK(std::vector<std::string>(on->choices.begin(), on->choices.end()) == names);
  std::vector<std::string> by_default;
  for (const auto& k : config::alert_kinds())
    if (k.by_default) by_default.emplace_back(k.name);
  CHECK(config::defaults().notify.on == by_default);
}

TEST_CASE("notify.on chooses the kinds told: by default what needs a person, not what mlsup handles itself") {
  const auto on = config::defaults().notify.on;
  CHECK(engine::chosen_alert({{"event", "stopped"}}, on) == "stopped");
  CHECK(engine::chosen_alert({{"event", "budget-nearly-spent"}}, on) == "budget");
  CHECK(engine::chosen_alert({{"event", "template-unusable"}, {"alert", true}}, on) == "trouble");
  CHECK_FALSE(engine::chosen_alert({{"event", "hang-detected"}}, on));
  CHECK_FALSE(engine::chosen_alert({{"event", "excluded"}}, on));
  const std::vector<std::string> hangs_only{"hang"};
  CHECK(engine::chosen_alert({{"event", "hang-detected"}}, hangs_only) == "hang");
  CHECK_FALSE(engine::chosen_alert({{"event", "stopped"}}, hangs_only));
  CHECK_FALSE(engine::chosen_alert({{"event", "stopped"}}, {}));
}

TEST_CASE("an alert's summary is one readable line: campaign, kind, reason, where") {
  const json e = {{"event", "excluded"}, {"campaign", "llama"}, {"attempt", 3}, {"job_id", 1234}, {"node", "n2"},
                  {"reason", "its health check failed\nafter the crash"}};
  CHECK(engine::alert_summary(e, "exclusion") ==
        "mlsup llama: exclusion: its health check failed after the crash (attempt 3, job 1234, node n2)");
  CHECK(engine::alert_summary({{"event", "completed"}, {"campaign", "c"}}, "completed") == "mlsup c: completed: completed");
  CHECK(engine::alert_summary({{"event", "x"}, {"campaign", "c"}, {"detail", "d"}, {"job_id", 0}}, "trouble") ==
        "mlsup c: trouble: d");
  const std::string long_reason(2000, 'a');
  CHECK(engine::alert_summary({{"campaign", "c"}, {"reason", long_reason}}, "stopped").size() < 450);
}

TEST_CASE("the webhook's body: the event with its kind and summary (json), or only a text (slack)") {
  const json e = {{"event", "stopped"}, {"campaign", "c"}, {"reason", "the failed budget is spent"}, {"exit_code", 14}};
  const json slack = json::parse(engine::alert_payload(e, "stopped", "slack"));
  CHECK(slack == json{{"text", "mlsup c: stopped: the failed budget is spent"}});
  const json full = json::parse(engine::alert_payload(e, "stopped", "json"));
  CHECK(full["event"] == "stopped");
  CHECK(full["exit_code"] == 14);
  CHECK(full["alert_kind"] == "stopped");
  CHECK(full["summary"] == "mlsup c: stopped: the failed budget is spent");
}

TEST_CASE("the webhook's body leaves the job's output out unless notify.include_output asks for it") {
  const json e = {{"event", "attempt-ended"}, {"campaign", "c"}, {"output_tail", "HF_TOKEN=hf_secret"}, {"output", "/x/t-7.out"}};
  CHECK_FALSE(json::parse(engine::alert_payload(e, "restart", "json")).contains("output_tail"));
  CHECK(json::parse(engine::alert_payload(e, "restart", "json"))["output"] == "/x/t-7.out");
  CHECK(json::parse(engine::alert_payload(e, "restart", "json", true))["output_tail"] == "HF_TOKEN=hf_secret");
}

TEST_CASE("notify.on names known kinds only, each once, with the error at its place") {
  CHECK(config_error("notify:\n  on: [hang, hnag]\n") ==
        "4:14: notify.on: \"hnag\" is not one of: stopped, completed, pending, budget, trouble, hang, restart, exclusion, disk, "
        "straggler (did you mean \"hang\"?)");
  CHECK(config_error("notify:\n  on: [hang, hang]\n") == "4:14: notify.on: \"hang\" is listed twice");
  CHECK(config_error("notify:\n  on:\n    - hang\n    - restrat\n").find("6:7: notify.on: \"restrat\" is not one of") == 0);
  CHECK(config_error("notify:\n  on: hang\n") .find("4:7: notify.on: expected a list") == 0);
  CHECK(config_error("notify:\n  format: teams\n").find("4:11: notify.format: \"teams\" is not one of: json, slack") == 0);
  test::TempDir dir;
  dir.write("job.sbatch", "#!/bin/bash\nsrun true\n");
  const auto c = config::load_config_file(dir.write("c.yaml", "name: d\ntemplate: job.sbatch\nnotify:\n  on: []\n"
                                                                 "  ca_file: ca.pem\n  webhook: https://h/x\n"));
  REQUIRE(c.has_value());
  CHECK(c->notify.on.empty());
  CHECK(c->notify.ca_file == dir.path() + "/ca.pem");
}

TEST_CASE("a budget is nearly spent once notify.budget_warn_at percent of it is used in its window") {
  auto c = config::defaults();
  c.policy.budgets["failed"] = {.count = 5, .window = config::Seconds(3600)};
  using decide::EndClass;
  std::vector<decide::Restart> history;
  const auto use = [&](double now) { return decide::budget_use(EndClass::Failed, history, c, now).value(); };
  CHECK(use(100).used == 1);  // this restart counts
  CHECK_FALSE(decide::nearly_spent(use(100), 80));
  for (double t : {10.0, 20.0, 30.0}) history.push_back({t, EndClass::Failed});
  CHECK(use(100).used == 4);  // 4 of 5 = 80 %
  CHECK(decide::nearly_spent(use(100), 80));
  CHECK_FALSE(decide::nearly_spent(use(100), 81));
  CHECK(use(3620).used == 2);  // the first two left the window
  history.push_back({40, EndClass::Hang});  // another budget's restart
  CHECK(use(100).used == 4);
  CHECK_FALSE(decide::budget_use(EndClass::Completed, history, c, 100));
  c.policy.budgets["failed"].count = -1;  // unlimited
  CHECK_FALSE(decide::budget_use(EndClass::Failed, history, c, 100));
}
