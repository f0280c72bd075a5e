// `mlsup init`: each starter (config and template) validates as written; it never writes over a file
// without --force; the templates it writes are the shipped ones.
#include <doctest/doctest.h>

#include <string>

#include "cli/exit_codes.h"
#include "cli_run.h"
#include "support.h"
#include "util/files.h"

using namespace mlsup;

namespace {

// A whole file, "" when it is missing.
std::string slurp(const std::string& path) { return util::read_file(path).value_or(""); }

}  // namespace

TEST_CASE("init: every starter validates as written, its template the shipped one") {
  for (const std::string kind : {"srun", "torchrun", "accelerate", "megatron"}) {
    CAPTURE(kind);
    test::TempDir dir;
    const std::string where = dir.path() + "/my run";
    const auto said = test::mlsup_cli({"init", "--template", kind, where});
    CAPTURE(said.out);
    CAPTURE(said.err);
    CHECK(said.code == cli::kOk);
    CHECK(said.out.find(where + "/campaign.yaml: ok: campaign my-run, template " + where + "/" + kind + ".sbatch.tmpl") !=
          std::string::npos);
    CHECK(slurp(where + "/" + kind + ".sbatch.tmpl") == slurp(test::source_dir() + "/templates/" + kind + ".sbatch.tmpl"));
    CHECK(slurp(where + "/campaign.yaml").find("MLSUP_RESUME_FROM") != std::string::npos);  // the contract, in comments
  }
}

TEST_CASE("init: a file that exists is kept unless --force; the default is torchrun") {
  test::TempDir dir;
  const auto kept = dir.write("campaign.yaml", "name: mine\n");
  const auto said = test::mlsup_cli({"init", dir.path(), "--name", "x"});
  CHECK(said.code == cli::kRuntimeFailure);
  CHECK(said.err.find(kept + " exists; keep it, or pass --force") != std::string::npos);
  CHECK(slurp(kept) == "name: mine\n");
  const auto forced = test::mlsup_cli({"init", dir.path(), "--name", "x", "--force"});
  CHECK(forced.code == cli::kOk);
  CHECK(slurp(kept).find("\nname: x\n") != std::string::npos);
  CHECK(slurp(kept).find("\ntemplate: torchrun.sbatch.tmpl\n") != std::string::npos);
  CHECK(test::mlsup_cli({"init", dir.path(), "--template", "mpi"}).code == cli::kUsage);
}
