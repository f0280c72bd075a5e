// Fuzz target: the event log (events.jsonl) as `mlsup events` reads and prints it. The input is the
// file: read, printed as text and as JSON lines through the verb itself, then appended to; the event
// appended reads back last, whatever the file ended with.
#include "cli/campaign_verbs.h"
#include "fuzz_support.h"
#include "journal/journal.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace mlsup;
  const fuzz::Scratch scratch;
  scratch.write("job.sbatch", "#!/bin/bash\nsrun true\n");
  const std::string config = scratch.write("fuzz.yaml", "name: fuzz\ntemplate: job.sbatch\nstate_dir: state\n");
  const std::string path = scratch.write("state/events.jsonl", fuzz::text_of(data, size));
  const auto events = journal::EventLog::read(path);
  for (const auto& e : events) fuzz::check(e.is_object(), "an event read is an object");
  {
    const fuzz::Quiet quiet;
    fuzz::check(cli::events_verb(config, false) == 0, "events prints any log");
    fuzz::check(cli::events_verb(config, true) == 0, "events --json prints any log");
  }
  const nlohmann::json mine = {{"event", "fuzz"}, {"time", 1.0}};
  fuzz::check(journal::EventLog(path).append(mine).has_value(), "an event can be appended");
  const auto after = journal::EventLog::read(path);
  fuzz::check(!after.empty() && after.back() == mine, "the event appended reads back last");
  return 0;
}
