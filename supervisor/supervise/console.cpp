#include "supervise/console.h"

#include <cstring>
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

// A signal by its short name ("SIGKILL"); its number when the name is unknown.
std::string signal_name(int signo) {
  const char* abbrev = ::sigabbrev_np(signo);
  return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(signo);
}

// How the first failing task ended, from the SPANK plugin's record ("rank 1 on n2: SIGKILL") or srun's
// report ("task 1 on n2: Killed"): the job's own exit code is often srun's (143 after it ends the others).
std::string first_end(const json& v) {
  if (!v.is_object()) return plain(v);
  const bool plugin = v.contains("rank");
  std::string who = plugin ? "rank " + plain(v["rank"]) : "task " + util::string_field(v, "tasks", "?");
  who += " on " + util::string_field(v, "node", "?") + ": ";
  const int code = static_cast<int>(util::number_field(v, "exit_code"));
  if (plugin && util::number_field(v, "signal") > 0) return who + signal_name(static_cast<int>(util::number_field(v, "signal")));
  if (!plugin && !util::string_field(v, "signal").empty()) return who + util::string_field(v, "signal");
  return who + "exit " + std::to_string(code);
}

struct ConsoleField {
  const char* key;
  std::string (*text)(const json&);
};

// The fields a console line shows, in this order, when the event has them.
constexpr ConsoleField kFields[] = {
    {"attempt", plain},       {"job_id", plain},        {"node", plain},        {"for", plain},
    {"until", when},          {"class", plain},         {"first_failure", first_end},
    {"first_reported", first_end}, {"exit_code", plain},   {"nodes", plain},
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
