// Fuzz target: the config loader on YAML text. Every input gives a config or a non-empty list of
// errors, each with a message; none throws or crashes. No file is read (the template check is off).
#include "config/load.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace mlsup;
  const auto loaded = config::load_config_text(fuzz::text_of(data, size), "fuzz.yaml", "/nonexistent/base",
                                               {.template_file = false});
  if (loaded) {
    fuzz::check(!loaded->name.empty(), "a loaded config has a name");
    return 0;
  }
  fuzz::check(!loaded.error().empty(), "a refused config says why");
  for (const auto& e : loaded.error()) fuzz::check(!e.str().empty() && !e.message.empty(), "every error has a message");
  return 0;
}
