// Fuzz target: job array specs ("1-10%1", "0,4,8-12:2"). A spec read gives ascending, distinct task
// ids within Slurm's limit.
#include <algorithm>

#include "config/array_spec.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace mlsup;
  const auto spec = config::parse_array_spec(fuzz::text_of(data, size));
  if (!spec) {
    fuzz::check(!spec.error().empty(), "a refused array spec says why");
    return 0;
  }
  const auto& ids = spec->task_ids;
  fuzz::check(!ids.empty(), "a spec read has task ids");
  fuzz::check(std::adjacent_find(ids.begin(), ids.end(), std::greater_equal<>()) == ids.end(), "task ids ascend");
  fuzz::check(ids.back() <= 4'000'000, "task ids are within Slurm's limit");
  fuzz::check(!spec->max_running || *spec->max_running > 0, "a task limit is positive");
  return 0;
}
