// Fuzz target: one node's record file written by the SPANK plugin, parsed as text and read from its
// folder as a pass reads it; then the rules on the records (first failure, failed health checks).
#include <algorithm>

#include "fuzz_support.h"
#include "observe/node_records.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace mlsup;
  const std::string_view text = fuzz::text_of(data, size);
  const auto parsed = observe::parse_node_records(text, "n1");
  const auto lines = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')) + 1;
  fuzz::check(parsed.exits.size() + parsed.health.size() + parsed.facts.size() + parsed.problems.size() <= lines,
              "at most one outcome a line");
  const auto& scratch = fuzz::Scratch::once();
  scratch.write("nodes/7/n1.jsonl", text);
  const auto read = observe::read_node_records(scratch.path(""), 7);
  fuzz::check(read.exits.size() == parsed.exits.size() && read.health.size() == parsed.health.size() &&
                  read.facts.size() == parsed.facts.size(),
              "reading the file gives what parsing its text gives");
  for (const auto& [node, facts] : observe::latest_facts(read.facts))
    fuzz::check(facts.node == node && std::none_of(facts.gpus.begin(), facts.gpus.end(), [](const auto& g) { return g.uuid.empty(); }),
                "the latest facts per node, each GPU with a UUID");
  if (const auto first = observe::first_failure(read.exits)) fuzz::check(observe::failed(*first), "the first failure failed");
  const auto bad = observe::failed_health(read.health);
  fuzz::check(std::is_sorted(bad.begin(), bad.end()), "failed health nodes are sorted");
  return 0;
}
