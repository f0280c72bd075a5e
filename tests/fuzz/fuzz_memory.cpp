// Fuzz target: memory.json as a pass reads it back. Any text gives a memory (a damaged field takes its
// default); what it gives is written and read again unchanged; re-basing it onto another clock and
// dumping it never throw.
#include <nlohmann/json.hpp>

#include "state/memory.h"
#include "fuzz_support.h"
#include "util/json.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace mlsup;
  const auto j = nlohmann::json::parse(fuzz::text_of(data, size), nullptr, false);
  engine::Memory m = engine::memory_from_json(j);
  const nlohmann::json saved = engine::to_json(m);
  fuzz::check(engine::to_json(engine::memory_from_json(saved)) == saved, "a memory reads back as it was written");
  (void)util::dump_json(saved);
  engine::rebase(m, {.wall = 2e9, .mono = 1000, .clock_id = "other-host"});
  engine::focus(m, m.attempt + 1);
  (void)util::dump_json(engine::to_json(m));
  return 0;
}
