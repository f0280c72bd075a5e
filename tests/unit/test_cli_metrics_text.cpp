// The Prometheus text of status --json's views: each family once with HELP and TYPE, samples only under
// their family, counters named *_total, label values escaped, figures read from the view's own keys.
#include <doctest/doctest.h>

#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/metrics_text.h"

using namespace mlsup;
using nlohmann::json;

namespace {

// A view as status --json prints it (the keys the metrics read).
json view(const std::string& name) {
  json v = json::parse(R"({
    "state": "running", "attempt": 3, "step": 120, "target_steps": 500, "step_rate": 1.5, "eta": 253.3,
    "checkpoint": {"path": "/c/step_100", "step": 100, "written": 1000.0, "age": 42.5},
    "heartbeat_age": 2.25, "restarts": 2, "restarts_by_class": {"failed": 1, "node_fail": 1},
    "exclusions": [{"node": "n1", "live": true}, {"node": "n2", "live": false}],
    "time": {"elapsed": 600.0, "lost_to_failures": 90.0, "recomputed_steps": 12, "goodput": 0.8},
    "supervisor": {"pid": 7, "host": "h"}, "exit_code": null,
    "disk": {"checkpoint_bytes": 2e9, "file_systems": [
      {"path": "/home", "roles": ["state"], "free_bytes": 5e9, "runway": null},
      {"path": "/scratch", "roles": ["checkpoints"], "free_bytes": 4e10, "runway": {"state": "filling", "seconds": 36000}}]}
  })");
  v["campaign"] = name;
  return v;
}

engine::PassFigures figures() {
  engine::PassFigures f;
  f.by_campaign["a"] = {4, 0.5};
  f.rounds = 5;
  f.slurm_queries = 5;
  f.slurm_errors = {{"unreachable", 2}, {"timeout", 0}};
  return f;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// The value of the one sample whose line begins with head ("name{labels}"); fails when there is not exactly one.
std::string sample(const std::string& text, const std::string& head) {
  std::vector<std::string> found;
  for (const auto& line : lines_of(text))
    if (line.rfind(head + " ", 0) == 0) found.push_back(line.substr(head.size() + 1));
  REQUIRE_MESSAGE(found.size() == 1, head);
  return found.front();
}

}  // namespace

TEST_CASE("metrics text: every family once, with HELP and TYPE before its samples; counters end in _total") {
  const auto text = cli::metrics_text({view("a"), view("b")}, figures());
  std::map<std::string, std::string> types;  // family -> type
  std::set<std::string> helped;
  const std::regex sample_line(R"(^([a-z_]+)(\{.*\})? (\S+)$)");
  for (const auto& line : lines_of(text)) {
    std::smatch m;
    if (line.rfind("# HELP ", 0) == 0) {
      const auto name = line.substr(7, line.find(' ', 7) - 7);
      CHECK_MESSAGE(helped.insert(name).second, "two HELP lines: " << name);
    } else if (line.rfind("# TYPE ", 0) == 0) {
      std::stringstream in(line.substr(7));
      std::string name, type;
      in >> name >> type;
      CHECK_MESSAGE(types.emplace(name, type).second, "two TYPE lines: " << name);
      CHECK_MESSAGE(helped.contains(name), "TYPE before HELP: " << name);
      if (type == "counter") CHECK_MESSAGE(name.ends_with("_total"), name);
      CHECK(name.rfind("mlsup_", 0) == 0);
    } else {
      REQUIRE_MESSAGE(std::regex_match(line, m, sample_line), line);
      std::string family = m[1];
      if (!types.contains(family))
        for (const char* suffix : {"_sum", "_count"})
          if (family.ends_with(suffix)) family.resize(family.size() - std::string(suffix).size());
      REQUIRE_MESSAGE(types.contains(family), "a sample outside its family: " << line);
    }
  }
  CHECK(text.ends_with("\n"));
  CHECK(types.at("mlsup_campaign_pass_duration_seconds") == "summary");
  CHECK(types.at("mlsup_campaign_restarts_total") == "counter");
  CHECK(types.at("mlsup_slurm_errors_total") == "counter");
}

TEST_CASE("metrics text: the view's figures, per campaign") {
  const auto text = cli::metrics_text({view("a")}, figures());
  const std::string a = "{campaign=\"a\"}";
  CHECK(sample(text, "mlsup_campaign_state{campaign=\"a\",state=\"running\"}") == "1");
  CHECK(sample(text, "mlsup_campaign_state{campaign=\"a\",state=\"completed\"}") == "0");
  CHECK(sample(text, "mlsup_campaign_state{campaign=\"a\",state=\"not started\"}") == "0");
  CHECK(sample(text, "mlsup_campaign_attempt" + a) == "3");
  CHECK(sample(text, "mlsup_campaign_step" + a) == "120");
  CHECK(sample(text, "mlsup_campaign_step_rate_steps_per_second" + a) == "1.5");
  CHECK(sample(text, "mlsup_campaign_checkpoint_age_seconds" + a) == "42.5");
  CHECK(sample(text, "mlsup_campaign_heartbeat_age_seconds" + a) == "2.25");
  CHECK(sample(text, "mlsup_campaign_excluded_nodes" + a) == "1");
  CHECK(sample(text, "mlsup_campaign_time_lost_seconds" + a) == "90");
  CHECK(sample(text, "mlsup_campaign_goodput_ratio" + a) == "0.8");
  CHECK(sample(text, "mlsup_campaign_supervised" + a) == "1");
  CHECK(sample(text, "mlsup_campaign_restarts_total{campaign=\"a\",class=\"failed\"}") == "1");
  CHECK(sample(text, "mlsup_campaign_restarts_total{campaign=\"a\",class=\"node_fail\"}") == "1");
  CHECK(sample(text, "mlsup_campaign_restarts_total{campaign=\"a\",class=\"timeout\"}") == "0");  // a class it may restart after
  CHECK(sample(text, "mlsup_campaign_pass_duration_seconds_sum" + a) == "0.5");
  CHECK(sample(text, "mlsup_campaign_pass_duration_seconds_count" + a) == "4");
  CHECK(sample(text, "mlsup_supervisor_rounds_total") == "5");
  CHECK(sample(text, "mlsup_slurm_errors_total{kind=\"unreachable\"}") == "2");
  CHECK(sample(text, "mlsup_slurm_errors_total{kind=\"timeout\"}") == "0");
  CHECK(text.find("mlsup_campaign_exit_code{") == std::string::npos);  // null: no sample
  CHECK(sample(text, "mlsup_campaign_disk_runway_seconds" + a) == "36000");  // the checkpoints' file system, not the state's
  CHECK(sample(text, "mlsup_campaign_checkpoint_bytes" + a) == "2e+09");  // the shortest form that reads back the same
  CHECK(sample(text, "mlsup_campaign_checkpoint_fs_free_bytes" + a) == "4e+10");
}

TEST_CASE("metrics text: a campaign not begun has its state and no figures it does not know") {
  const json v = {{"campaign", "new"}, {"state", "not started"}, {"step", nullptr}, {"checkpoint", nullptr}, {"time", json::object()}};
  const auto text = cli::metrics_text({v}, {});
  CHECK(sample(text, "mlsup_campaign_state{campaign=\"new\",state=\"not started\"}") == "1");
  CHECK(text.find("mlsup_campaign_step{") == std::string::npos);
  CHECK(text.find("mlsup_campaign_checkpoint_age_seconds{") == std::string::npos);
  CHECK(text.find("mlsup_campaign_goodput_ratio{") == std::string::npos);
}

TEST_CASE("metrics text: label values escape backslash, quote and newline") {
  CHECK(cli::label_value("plain-name_1") == "plain-name_1");
  CHECK(cli::label_value("a\"b") == "a\\\"b");
  CHECK(cli::label_value("a\\b") == "a\\\\b");
  CHECK(cli::label_value("a\nb") == "a\\nb");
  const auto text = cli::metrics_text({view("we\"ird\\na\nme")}, {});
  CHECK(sample(text, "mlsup_campaign_step{campaign=\"we\\\"ird\\\\na\\nme\"}") == "120");
  for (const auto& line : lines_of(text)) CHECK_MESSAGE(line.rfind("me\"", 0) != 0, "a raw newline in a label: " << line);
}
