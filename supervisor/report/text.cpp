#include "report/text.h"

#include <cmath>
#include <ctime>

#include <fmt/format.h>

#include "util/strings.h"

namespace mlsup::report {
namespace {

// The calendar time of t in UTC formatted by strftime's format; "?" when there is none.
std::string utc_format(double t, const char* format) {
  if (!(std::fabs(t) < 1e12)) return "?";
  const auto s = static_cast<std::time_t>(std::floor(t));
  std::tm utc{};
  char text[40];
  if (!::gmtime_r(&s, &utc) || std::strftime(text, sizeof text, format, &utc) == 0) return "?";
  return text;
}

}  // namespace

std::string escape_xml(std::string_view s) {
  std::string out;
  for (const char ch : util::valid_utf8(s)) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += ch;
    }
  }
  return out;
}

std::string markdown_cell(std::string_view s) {
  std::string out;
  for (const char ch : util::valid_utf8(s)) {
    if (ch == '|') out += "\\|";
    else if (ch == '\n' || ch == '\r') out += ' ';
    else out += ch;
  }
  return out.empty() ? "-" : out;
}

std::string utc_time(double t) { return utc_format(t, "%Y-%m-%dT%H:%M:%SZ"); }

std::string utc_clock(double t) { return utc_format(t, "%H:%M"); }

std::string decimal(double v, int digits) {
  if (!std::isfinite(v)) return "0";
  std::string s = fmt::format("{:.{}f}", v, digits);
  if (s.find('.') != std::string::npos) {
    s.erase(s.find_last_not_of('0') + 1);
    if (s.back() == '.') s.pop_back();
  }
  return s == "-0" ? "0" : s;
}

}  // namespace mlsup::report
