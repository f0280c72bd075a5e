#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "render/template.h"
#include "support.h"

using mlsup::render::render_template;
using mlsup::render::Variables;

namespace {

std::string ok(std::string_view text, const Variables& vars) {
  const auto r = render_template("t.sbatch", text, vars);
  if (!r) FAIL(r.error().str());
  return *r;
}

std::string error(std::string_view text, const Variables& vars) {
  const auto r = render_template("t.sbatch", text, vars);
  REQUIRE_FALSE(r.has_value());
  return r.error().str();
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("values are shell-quoted by default and raw on request") {
  const Variables v{{"a", "x y"}, {"b", "plain"}, {"empty", ""}};
  CHECK(ok("echo {{a}} {{b}} {{empty}}", v) == "echo 'x y' plain ''");
  CHECK(ok("echo {{{a}}} {{&a}} {{ & a }}", v) == "echo x y x y x y");
  CHECK(ok("echo {{ a }}", v) == "echo 'x y'");
  CHECK(ok("no tags at all\n#SBATCH --nodes=2\n", v) == "no tags at all\n#SBATCH --nodes=2\n");
}

TEST_CASE("an undefined variable is an error naming the template, line, column and variable") {
  const Variables v{{"vars.script", "t.py"}, {"attempt", "1"}};
  CHECK(error("#!/bin/bash\necho {{vars.scrpt}}\n", v) ==
        "t.sbatch:2:6: vars.scrpt: undefined variable (add it under `vars:` in the config; or did you mean \"vars.script\"?)");
  // A variable the config has yet to define: defining it is said first, a typo of one it has second.
  CHECK(error("x {{vars.script_args}}", v) ==
        "t.sbatch:1:3: vars.script_args: undefined variable (add it under `vars:` in the config; or did you mean "
        "\"vars.script\"?)");
  CHECK(error("x {{atempt}}", v) == "t.sbatch:1:3: atempt: undefined variable (did you mean \"attempt\"?)");
  CHECK(error("x {{vars.lr}}", v) == "t.sbatch:1:3: vars.lr: undefined variable (add it under `vars:` in the config)");
  CHECK(error("x {{zzzz}}", v) ==
        "t.sbatch:1:3: zzzz: undefined variable (your own variables are {{vars.NAME}}, set under `vars:`)");
}

TEST_CASE("names in sections that are not rendered must still be defined") {
  const Variables v{{"empty", ""}};
  CHECK(error("{{#empty}}{{missing}}{{/empty}}", v).find("missing: undefined variable") != std::string::npos);
}

TEST_CASE("sections keep their body by emptiness, and standalone tags take their line") {
  const Variables v{{"resume", "/ck/iter_5"}, {"none", ""}};
  const std::string text =
      "a\n"
      "{{#resume}}\n"
      "  load {{resume}}\n"
      "{{/resume}}\n"
      "  {{^resume}}\n"
      "fresh\n"
      "{{/resume}}\n"
      "{{! dropped }}\n"
      "b {{#none}}x{{/none}}{{^none}}y{{/none}} c\n";
  CHECK(ok(text, v) == "a\n  load /ck/iter_5\nb y c\n");
  const Variables fresh{{"resume", ""}, {"none", ""}};
  CHECK(ok(text, fresh) == "a\nfresh\nb y c\n");
}

TEST_CASE("malformed templates") {
  const Variables v{{"a", "1"}, {"b", "2"}};
  CHECK(error("x {{a", v) == "t.sbatch:1:3: tag opened with \"{{\" is not closed with \"}}\" on the same line");
  CHECK(error("x {{a\n}}", v).find("is not closed") != std::string::npos);
  CHECK(error("{{{a}}", v).find("\"}}}\"") != std::string::npos);
  CHECK(error("{{}}", v) == "t.sbatch:1:1: empty tag name");
  CHECK(error("{{#a}}\n{{/b}}", v) == "t.sbatch:2:1: b: closes a section that is not open (expected \"{{/a}}\")");
  CHECK(error("{{/a}}", v) == "t.sbatch:1:1: a: closes a section that is not open (expected no section to close)");
  CHECK(error("\n  {{#a}}x", v) == "t.sbatch:2:3: a: section is never closed (add \"{{/a}}\")");
}

TEST_CASE("a hostile value renders into a script that bash accepts and that never runs it") {
  mlsup::test::TempDir dir;
  const std::string marker = dir.path() + "/pwned";
  const std::string evil = "$(touch " + marker + "); echo \"it's\" `touch " + marker + "` ${IFS} \\ \n new line";
  const auto script = ok("#!/bin/bash\nset -eo pipefail\nprintf '%s' {{v}} > {{out}}\n",
                         {{"v", evil}, {"out", dir.path() + "/out"}});
  const std::string path = dir.write("job.sh", script);
  CHECK(std::system(("bash -n " + path).c_str()) == 0);
  CHECK(std::system(("bash " + path).c_str()) == 0);
  CHECK_FALSE(std::filesystem::exists(marker));
  CHECK(slurp(dir.path() + "/out") == evil);
}
