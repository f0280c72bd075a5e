// Fuzz target: the event log (events.jsonl) as `mlsup events` reads and prints it. The input is the
// file's text: parsed, each event printed as a text line and as JSON; read from a file it gives the same
// events; then appended to, the event appended reads back last, whatever the file ended with.
#include "cli/campaign_verbs.h"
#include "fuzz_support.h"
#include "journal/journal.h"
#include "util/json.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace mlsup;
  const std::string_view text = fuzz::text_of(data, size);
  const auto events = journal::EventLog::parse(text);
  for (const auto& e : events) {
    fuzz::check(e.is_object(), "an event read is an object");
    fuzz::check(!cli::event_line(e).empty() && !util::dump_json(e).empty(), "every event prints");
  }
  const std::string path = fuzz::Scratch::once().write("events.jsonl", text);
  fuzz::check(journal::EventLog::read(path) == events, "reading the file gives what parsing its text gives");
  const nlohmann::json mine = {{"event", "fuzz"}, {"time", 1.0}};
  fuzz::check(journal::EventLog(path).append(mine).has_value(), "an event can be appended");
  const auto after = journal::EventLog::read(path);
  fuzz::check(!after.empty() && after.back() == mine, "the event appended reads back last");
  return 0;
}
