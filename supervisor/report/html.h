#pragma once
// The report as one self-contained HTML page (pure): its style inline, the timeline's SVG inline, no script
// and nothing fetched; the runs, each run's attempts and its node exclusions as tables.
#include <string>

#include "report/facts.h"

namespace mlsup::report {

// The page; svg is the timeline's <svg> element (render_svg with standalone false).
std::string render_html(const Report& r, const std::string& svg);

}  // namespace mlsup::report
