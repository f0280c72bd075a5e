// Fuzz target: a journal file. The input is the file: read as `status` reads it (read_only), replayed
// into a campaign state, and opened as a supervisor opens it; when open accepts it, one append repairs
// a torn end, after which the whole file reads back without a problem.
#include <string>

#include "state/state.h"
#include "fuzz_support.h"
#include "journal/journal.h"

using namespace mlsup;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = fuzz::Scratch::once().write("journal.jsonl", fuzz::text_of(data, size));
  auto [records, problems] = journal::Journal::read_only(path, "fuzz");
  for (const auto& p : problems) fuzz::check(!p.message.empty(), "a journal problem has a message");
  const auto state = engine::replay(records, path);
  for (const auto& p : state.problems) fuzz::check(p.line > 0, "a record that cannot be applied names its line");
  auto journal = journal::Journal::open(path, "fuzz");
  if (!journal) return 0;
  engine::CampaignState live;
  for (const auto& r : journal->take()) engine::apply(live, r, path);
  fuzz::check(journal->append("note", {{"attempt", 1}}, 1.5).has_value(), "an opened journal takes an append");
  fuzz::check(journal::Journal::read_only(path, "fuzz").second.empty(), "after an append the journal reads clean");
  return 0;
}
