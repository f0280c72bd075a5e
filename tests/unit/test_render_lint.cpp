// A template's mistakes that sbatch ignores or the config silently overrides: warnings at their line.
#include <doctest/doctest.h>

#include "config/schema.h"
#include "render/lint.h"
#include "render/submission.h"

using namespace mlsup;

namespace {

config::Config config_with(std::optional<int> nodes, std::string time = "") {
  auto c = config::defaults();
  c.name = "t";
  c.template_path = "/x/job.sbatch";
  c.slurm.nodes = nodes;
  c.slurm.time = std::move(time);
  return c;
}

std::vector<util::Error> lint(const config::Config& c, const std::string& text) {
  const auto d = render::parse_directives(c.template_path, text);
  REQUIRE(d);
  return render::lint_template(c, text, *d);
}

}  // namespace

TEST_CASE("lint: an #SBATCH line after the first command is ignored by sbatch: a warning at its line") {
  const auto w = lint(config_with(std::nullopt), "#!/bin/bash\n#SBATCH --nodes=2\nmodule load x\n#SBATCH --time=1:00:00\nsrun a\n");
  REQUIRE(w.size() == 1);
  CHECK(w[0].line == 4);
  CHECK(w[0].message.find("sbatch ignores it") != std::string::npos);
  CHECK(lint(config_with(std::nullopt), "#!/bin/bash\n# a comment\n\n#SBATCH --nodes=2\nsrun a\n").empty());
  // Section tags on lines of their own render to nothing: the header goes on.
  CHECK(lint(config_with(2), "#!/bin/bash\n{{#slurm.nodes}}\n#SBATCH --nodes={{slurm.nodes}}\n{{/slurm.nodes}}\nsrun a\n").empty());
}

TEST_CASE("lint: a script option the config overrides is told, with both values; equal ones are not") {
  const auto w = lint(config_with(1), "#!/bin/bash\n#SBATCH --nodes=3\nsrun a\n");
  REQUIRE(w.size() == 1);
  CHECK(w[0].str() == "/x/job.sbatch:2:1: --nodes: \"3\" here is overridden by slurm.nodes: 1 in the config (the config "
                      "wins); remove one of the two");
  CHECK(lint(config_with(3), "#!/bin/bash\n#SBATCH -N 3\nsrun a\n").empty());
  CHECK(lint(config_with(std::nullopt, "00:10:00"), "#!/bin/bash\n#SBATCH --time=10:00\nsrun a\n").empty());
  CHECK(lint(config_with(std::nullopt, "00:10:00"), "#!/bin/bash\n#SBATCH --time=20:00\nsrun a\n").size() == 1);
}

TEST_CASE("lint: a placeholder inside quotes would keep the quotes mlsup adds: a warning at its column") {
  const auto w = lint(config_with(std::nullopt), "#!/bin/bash\nsrun python {{vars.script}} \"{{vars.script_args}}\"\n# \"{{x}}\" in a comment\necho '{{name}}'\n");
  REQUIRE(w.size() == 2);
  CHECK(w[0].line == 2);
  CHECK(w[0].column == 30);
  CHECK(w[1].line == 4);
  CHECK(lint(config_with(std::nullopt), "#!/bin/bash\necho \"a\\\"b\" {{name}}\n").empty());
}

TEST_CASE("a template without a #! line is refused at line 1, as sbatch would refuse it at every attempt") {
  const auto c = config_with(1);
  const auto s = render::plan_submission(c, "#SBATCH --nodes=1\nsrun a\n", render::Attempt{});
  REQUIRE_FALSE(s);
  CHECK(s.error().str().rfind("/x/job.sbatch:1:1: #!: the script does not start with a #! line", 0) == 0);
  const auto ok = render::plan_submission(c, "#!/bin/bash\n#SBATCH --nodes=2\nsrun a\n", render::Attempt{});
  REQUIRE(ok);
  CHECK(ok->warnings.size() == 1);  // --nodes=2 under slurm.nodes: 1
}

TEST_CASE("lint: an http:// webhook is warned about at its place in the config; https:// is not") {
  auto c = config_with(std::nullopt);
  c.source_file = "/x/c.yaml";
  c.notify.webhook = "http://alerts.example:8080/hook";
  c.written["notify.webhook"] = {12, 12};
  const auto w = lint(c, "#!/bin/bash\nsrun a\n");
  REQUIRE(w.size() == 1);
  CHECK(w[0].file == "/x/c.yaml");
  CHECK(w[0].line == 12);
  CHECK(w[0].subject == "notify.webhook");
  CHECK(w[0].message.find("clear text") != std::string::npos);
  c.notify.webhook = "https://alerts.example/hook";
  CHECK(lint(c, "#!/bin/bash\nsrun a\n").empty());
}
