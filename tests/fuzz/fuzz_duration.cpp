// Fuzz target: durations ("1h30m") and intervals ("1s500ms") as the config writes them. A value read
// is not negative, and its shortest text reads back as the same value.
#include "config/duration.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace mlsup;
  const std::string_view text = fuzz::text_of(data, size);
  if (const auto d = config::parse_duration(text)) {
    fuzz::check(d->count() >= 0, "a duration is not negative");
    fuzz::check(config::parse_duration(config::format_duration(*d)) == *d, "a duration's text reads back the same");
  }
  if (const auto ms = config::parse_interval(text)) {
    fuzz::check(ms->count() >= 0, "an interval is not negative");
    fuzz::check(config::parse_interval(config::format_interval(*ms)) == *ms, "an interval's text reads back the same");
  }
  return 0;
}
