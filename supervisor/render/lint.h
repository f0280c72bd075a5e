#pragma once
// What in a template sbatch would ignore, or the config silently overrides, or a user likely did not
// mean: each a warning at file:line:column. Pure: the config, the template's text and its #SBATCH lines.
#include <string_view>
#include <vector>

#include "config/config.h"
#include "render/directives.h"
#include "util/error.h"

namespace mlsup::render {

// The warnings for template_text (the config's template) whose rendered header is directives.
std::vector<util::Error> lint_template(const config::Config& c, std::string_view template_text, const Directives& directives);

}  // namespace mlsup::render
