// Fuzz target: the evidence rules over a job's output (decide/evidence_rules.h), the shipped rules
// and a user's rule with a greedy group. A finding points at a line of the input, quotes at most
// kQuoteChars of it, and names a rule that was given.
#include <algorithm>

#include "decide/evidence_rules.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace mlsup;
  static const std::vector<config::EvidenceRuleSpec> specs{
      {.name = "mine", .pattern = "failed on (.*) after", .cls = "network", .blame = "node_in_line"}};
  static const auto rules = decide::all_rules(specs);
  const auto lines = decide::split_lines(fuzz::text_of(data, size));
  const auto f = decide::match(rules, lines);
  if (!f) return 0;
  fuzz::check(f->line_number >= 1 && f->line_number <= lines.size(), "the finding's line is one of the input's");
  fuzz::check(f->line.size() <= decide::kQuoteChars, "the quote is trimmed");
  const bool given = std::any_of(rules.begin(), rules.end(), [&](const decide::Rule& r) { return r.name == f->rule; });
  fuzz::check(given, "the finding names a rule given");
  fuzz::check(f->user == (f->rule == "mine"), "a user's rule is told as one");
  return 0;
}
