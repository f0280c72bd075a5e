// Fuzz target: Slurm time limits as sbatch --time takes them ("90", "20:00:00", "1-12:00:00").
// A limit read is positive, or none at all ("UNLIMITED").
#include "config/slurm_time.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace mlsup;
  const auto limit = config::parse_slurm_time(fuzz::text_of(data, size));
  if (!limit) {
    fuzz::check(!limit.error().empty(), "a refused time says why");
    return 0;
  }
  fuzz::check(!*limit || (*limit)->count() > 0, "a time limit is positive");
  return 0;
}
