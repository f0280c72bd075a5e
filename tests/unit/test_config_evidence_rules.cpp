// `evidence.rules`: a config's own rules, read with the line and column of each problem.
#include <doctest/doctest.h>

#include "config/evidence_read.h"
#include "config/load.h"
#include "support.h"

using namespace mlsup;
using mlsup::test::TempDir;

namespace {

const std::string kHead = "name: demo\ntemplate: job.sbatch\nevidence:\n  rules:\n";

// Loads a config whose evidence.rules are the lines given (indented under it).
std::expected<config::Config, config::Errors> load(const TempDir& dir, const std::string& rules) {
  dir.write("job.sbatch", "#!/bin/bash\nsrun true\n");
  return config::load_config_file(dir.write("c.yaml", kHead + rules));
}

// The one error of the rules, as "line:column: subject: message".
std::string only_error(const std::string& rules) {
  TempDir dir;
  const auto r = load(dir, rules);
  REQUIRE_FALSE(r.has_value());
  REQUIRE(r.error().size() == 1);
  const auto& e = r.error().front();
  return std::to_string(e.line) + ":" + std::to_string(e.column) + ": " + e.subject + ": " + e.message;
}

void check_error(const std::string& rules, const std::string& where, const std::string& what) {
  CAPTURE(rules);
  const auto e = only_error(rules);
  CAPTURE(e);
  CHECK(e.substr(0, where.size()) == where);
  CHECK(e.find(what) != std::string::npos);
}

}  // namespace

TEST_CASE("evidence.rules: rules are read in their order, with blame and action defaulted") {
  TempDir dir;
  const auto c = load(dir,
                      "    - name: fabric\n"
                      "      pattern: 'ibv_poll_cq failed on ([\\w.-]+)'\n"
                      "      class: network\n"
                      "      blame: node_in_line\n"
                      "    - name: mine\n"
                      "      pattern: 'assert .* failed'\n"
                      "      class: software\n"
                      "      action: stop_alert\n");
  REQUIRE(c.has_value());
  REQUIRE(c->evidence.rules.size() == 2);
  const auto& a = c->evidence.rules[0];
  CHECK(a.name == "fabric");
  CHECK(a.pattern == "ibv_poll_cq failed on ([\\w.-]+)");
  CHECK(a.cls == "network");
  CHECK(a.blame == "node_in_line");
  CHECK(a.action == "retry");
  CHECK(a.line == 5);
  CHECK(c->evidence.rules[1].blame == "none");
  CHECK(c->evidence.rules[1].action == "stop_alert");
  CHECK(c->is_set("evidence.rules"));
}

TEST_CASE("evidence.rules: each problem at the column of the value at fault") {
  check_error("    - name: r\n      pattern: 'oops (['\n      class: software\n", "6:16: evidence.rules: ",
              "pattern: not a regular expression");
  check_error("    - name: r\n      pattern: x\n      class: software\n      action: reboot\n", "8:15: evidence.rules: ",
              "action: \"reboot\" is not one of: retry, retry_no_blame, stop, stop_alert");
  check_error("    - name: r\n      pattern: x\n      class: netwrk\n", "7:14: evidence.rules: ",
              "(did you mean \"network\"?)");
  check_error("    - name: r\n      pattern: x\n      class: network\n      blame: node_in_line\n", "8:14: evidence.rules: ",
              "blame: node_in_line reads the pattern's first group");
  check_error("    - name: r\n      pattern: '(x)'\n      class: network\n      blame: node\n", "8:14: ",
              "blame: \"node\" is not one of");
  check_error("    - name: r\n      pattern: '(x)'\n      class: network\n      blame: node_in_line\n"
              "      action: retry_no_blame\n",
              "9:15: ", "retry_no_blame blames no node");
  check_error("    - name: r\n      class: software\n", "5:7: ", "the rule has no pattern:");
  check_error("    - name: r\n      pattern: '.*'\n      class: software\n", "6:16: ", "matches an empty line");
  check_error("    - name: r\n      pattern: x\n      class: software\n      acton: stop\n", "8:7: ",
              "(did you mean \"action\"?)");
  check_error("    - name: r\n      pattern: x\n      class: software\n    - name: r\n      pattern: y\n      class: software\n",
              "8:13: ", "\"r\" names another rule already");
  check_error("    x\n", "5:5: ", "expected a list of rules");
}

TEST_CASE("evidence.rules: a file of rules alone, or a config's, with every problem") {
  TempDir dir;
  const auto list = dir.write("rules.yaml", "- name: a\n  pattern: 'x(\\d+)'\n  class: software\n  blame: rank_in_line\n");
  const auto rules = config::load_evidence_rules_file(list);
  REQUIRE(rules.has_value());
  REQUIRE(rules->size() == 1);
  CHECK(rules->front().blame == "rank_in_line");
  const auto in_config = dir.write("c.yaml", kHead + "    - name: b\n      pattern: y\n      class: disk_full\n");
  REQUIRE(config::load_evidence_rules_file(in_config).has_value());
  CHECK(config::load_evidence_rules_file(in_config)->front().name == "b");
  const auto bad = dir.write("bad.yaml", "- name: a\n  pattern: '('\n  class: software\n- name: b\n  pattern: y\n  class: x\n");
  const auto errors = config::load_evidence_rules_file(bad);
  REQUIRE_FALSE(errors.has_value());
  REQUIRE(errors.error().size() == 2);
  CHECK(errors.error()[0].str().find("bad.yaml:2:12: evidence.rules: pattern: not a regular expression") != std::string::npos);
  CHECK(errors.error()[1].str().find("bad.yaml:6:10: evidence.rules: class: \"x\" is not one of") != std::string::npos);
  CHECK_FALSE(config::load_evidence_rules_file(dir.path() + "/absent.yaml").has_value());
}
