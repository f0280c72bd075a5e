#include <doctest/doctest.h>

#include "render/directives.h"

using mlsup::render::parse_directives;

TEST_CASE("#SBATCH lines are read up to the first command, long and short forms alike") {
  const auto d = parse_directives("s", R"(#!/bin/bash
# a comment

#SBATCH --nodes=2 --ntasks-per-node 8
#SBATCH -t 1:00:00 -J "my job" --exclusive
#SBATCH -pgpu --array=1-4%1  # chain
#SBATCH --output='/logs/%x-%j.out'
srun hostname
#SBATCH --nodes=99
)").value();
  CHECK(d.find("nodes")->value == "2");
  CHECK(d.find("nodes")->line == 4);
  CHECK(d.find("ntasks-per-node")->value == "8");
  CHECK(d.find("time")->value == "1:00:00");
  CHECK(d.find("job-name")->value == "my job");
  CHECK(d.find("exclusive")->value == "");
  CHECK(d.find("partition")->value == "gpu");
  CHECK(d.find("array")->value == "1-4%1");
  CHECK(d.find("output")->value == "/logs/%x-%j.out");
  CHECK(d.find("signal") == nullptr);
}

TEST_CASE("a later directive overrides an earlier one") {
  const auto d = parse_directives("s", "#!/bin/bash\n#SBATCH -N 1\n#SBATCH --nodes=3\n").value();
  CHECK(d.find("nodes")->value == "3");
}

TEST_CASE("bad #SBATCH lines are errors at their line") {
  CHECK(parse_directives("s", "#!/bin/bash\n#SBATCH --job-name='x\n").error().str() ==
        "s:2:1: #SBATCH: unclosed ' quote");
  CHECK(parse_directives("s", "#!/bin/bash\n\n#SBATCH nodes=2\n").error().str() ==
        "s:3:1: #SBATCH: \"nodes=2\" is not an option (options start with - or --)");
}
