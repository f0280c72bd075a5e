// Fuzz target: Slurm hostlists ("n[1-3,5],m2") expanded into node names.
#include "fuzz_support.h"
#include "slurm_model/types.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace mlsup;
  for (const auto& name : slurm::expand_hostlist(fuzz::text_of(data, size)))
    fuzz::check(!name.empty(), "an expanded host name is not empty");
  return 0;
}
