// Fuzz target: the template engine. The input is the template; the variables are a fixed set with
// quoting's hard cases. Every input renders or gives one error that names a line.
#include "fuzz_support.h"
#include "render/template.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace mlsup;
  static const render::Variables vars = {
      {"name", "demo"},       {"empty", ""},          {"quote", "it's \"x\" $HOME `id`"},
      {"vars.a", "1 2"},      {"attempt", "3"},       {"newline", "a\nb"},
      {"bytes", "\xff\xfe"},  {"vars.script", "train.py"},
  };
  const auto out = render::render_template("fuzz.tmpl", fuzz::text_of(data, size), vars);
  if (!out) {
    fuzz::check(!out.error().message.empty(), "a template error has a message");
    fuzz::check(out.error().line >= 1 && out.error().column >= 1, "a template error names its line and column");
  }
  return 0;
}
