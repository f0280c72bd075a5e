#pragma once
// The #SBATCH lines of a script, read the way sbatch reads them: from the top, up to the first
// line that is neither blank nor a comment; later options override earlier ones.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.h"

namespace mlsup::render {

struct Directive {
  std::string option;  // long name without dashes, e.g. "nodes" (short options are translated)
  std::string value;   // "" for a flag
  int line = 0;
};

struct Directives {
  std::vector<Directive> items;

  // The last directive for a long option name, if any.
  const Directive* find(std::string_view option) const;
};

// Parses the #SBATCH header of script (named name in errors).
util::Result<Directives> parse_directives(const std::string& name, std::string_view script);

}  // namespace mlsup::render
