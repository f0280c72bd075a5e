#include "supervise/console.h"

#include <ctime>

#include "util/json.h"
#include "util/strings.h"

namespace mlsup::engine {
namespace {

using nlohmann::json;

std::string clock_text(double unix_seconds, const char* format) {
  const auto t = static_cast<std::time_t>(unix_seconds);
  char out[32];
  std::tm local{};
  std::strftime(out, sizeof out, format, ::localtime_r(&t, &local));
  return out;
}

std::string plain(const json& v) { return util::json_text(v); }

// A wall time as the date and time it names (an exclusion's end may be days away).
std::string when(const json& v) { return v.is_number() ? clock_text(v.get<double>(), "%Y-%m-%dT%H:%M:%S") : plain(v); }

// A list of nodes, comma-separated; "none" for an empty one.
std::string node_list(const json& v) {
  if (!v.is_array()) return plain(v);
  std::vector<std::string> names;
  for (const auto& n : v) names.push_back(plain(n));
  return names.empty() ? "none" : util::join(names, ",");
}

// A checkpoint path; "none" for a fresh start.
std::string checkpoint(const json& v) { return v.is_string() && v.get<std::string>().empty() ? "none" : plain(v); }

struct ConsoleField {
  const char* key;
  std::string (*text)(const json&);
};

// The fields a console line shows, in this order, when the event has them.
constexpr ConsoleField kFields[] = {
    {"attempt", plain},       {"job_id", plain},        {"node", plain},        {"for", plain},
    {"until", when},          {"class", plain},         {"exit_code", plain},   {"nodes", plain},
    {"step", plain},          {"action", plain},        {"delay", plain},       {"exclude", node_list},
    {"resume_from", checkpoint}, {"resume_step", plain},
    {"lifted", node_list},    {"rank", plain},
};

}  // namespace

std::string console_line(const json& e, bool named) {
  std::string line = clock_text(util::number_field(e, "time"), "%H:%M:%S") + " " +
                     (named ? "[" + util::string_field(e, "campaign", "?") + "] " : "") + util::string_field(e, "event", "?");
  for (const auto& f : kFields)
    if (e.is_object() && e.contains(f.key)) line += std::string(" ") + f.key + "=" + f.text(e[f.key]);
  for (const char* key : {"reason", "detail"})
    if (!util::string_field(e, key).empty()) line += ": " + util::string_field(e, key);
  return line;
}

}  // namespace mlsup::engine
