#pragma once
// The report's timeline as SVG (pure): a lane per run with a bar per attempt over the window (coloured by how
// it ended, a cross at each failure, a diamond at each node exclusion), and below it each run's step against
// wall time. Every mark carries its facts as data attributes (README.md, "The morning report", lists them),
// so a program reads the picture's facts without measuring it.
#include <string>

#include "report/facts.h"

namespace mlsup::report {

// A standalone SVG document (with its XML declaration when standalone, else the <svg> element alone, for
// embedding in HTML).
std::string render_svg(const Report& r, bool standalone = true);

}  // namespace mlsup::report
