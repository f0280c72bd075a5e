#pragma once
// Text for the report's renderers (pure): escaping for HTML/XML and Markdown table cells, times and numbers.
#include <string>
#include <string_view>

namespace mlsup::report {

// s with &, <, >, " and ' escaped, for HTML and XML text and attribute values;
// bytes that are not UTF-8 are spelled \xNN (util::valid_utf8).
std::string escape_xml(std::string_view s);

// s as one Markdown table cell: | escaped, line breaks as spaces, "-" for an empty cell.
std::string markdown_cell(std::string_view s);

// A unix time as ISO 8601 in UTC, "2026-12-02T04:30:15Z"; "?" for one no calendar holds.
std::string utc_time(double t);

// A unix time's hour and minute in UTC, "04:30".
std::string utc_clock(double t);

// A number with at most digits decimals, trailing zeros dropped ("12.5", "3").
std::string decimal(double v, int digits = 3);

}  // namespace mlsup::report
