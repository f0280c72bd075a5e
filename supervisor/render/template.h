#pragma once
// Strict templates: {{name}} inserts a shell-quoted value, {{{name}}} / {{&name}} a raw one,
// {{#name}}..{{/name}} keeps its body when the value is non-empty, {{^name}}..{{/name}} when it is
// empty, {{! text }} is dropped. A section or comment tag alone on a line takes the line with it.
// Every name used anywhere, even in a section that is not rendered, must be defined.
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.h"

namespace mlsup::render {

using Variables = std::map<std::string, std::string>;

// Renders text (named name in errors) with vars; an undefined name is an error at its line:column.
util::Result<std::string> render_template(const std::string& name, std::string_view text, const Variables& vars);

// Every problem of the template at once: its first malformed tag, else each undefined name in text order.
std::vector<util::Error> template_problems(const std::string& name, std::string_view text, const Variables& vars);

}  // namespace mlsup::render
