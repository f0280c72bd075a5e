// `mlsup --version`: the Slurm release named from its version number, and the warning only when the
// running libslurm's API (its current number) is not the one built against.
#include <doctest/doctest.h>

#include "cli/version.h"

using namespace mlsup::cli;

namespace {
constexpr long triple(long a, long b, long c) { return (a << 16) + (b << 8) + c; }
}  // namespace

TEST_CASE("version: the Slurm release is named major.minor.micro, the minor on two digits") {
  CHECK(slurm_version_name(triple(22, 5, 8)) == "22.05.8");
  CHECK(slurm_version_name(triple(23, 11, 0)) == "23.11.0");
}

TEST_CASE("version: the text names mlsup, the release and API built against and the API running") {
  const auto text = version_text(triple(22, 5, 8), 38, triple(39, 0, 0));
  CHECK(text.starts_with("mlsup " MLSUP_VERSION "\n"));
  CHECK(text.find("built against Slurm 22.05.8 (libslurm API 38)") != std::string::npos);
  CHECK(text.find("running libslurm API 39") != std::string::npos);
}

TEST_CASE("version: another revision or age of the same API is no warning, another API is") {
  CHECK(version_warning(triple(22, 5, 8), 38, triple(38, 0, 0)).empty());
  CHECK(version_warning(triple(22, 5, 8), 38, triple(38, 2, 1)).empty());
  const auto other = version_warning(triple(22, 5, 8), 38, triple(39, 0, 0));
  CHECK(other.find("built against Slurm 22.05.8 (libslurm API 38) but the libslurm loaded has API 39") !=
        std::string::npos);
}
