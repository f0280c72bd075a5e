#include "cli/events_view.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <iterator>

#include "config/duration.h"
#include "events/kinds.h"
#include "journal/journal.h"
#include "util/json.h"
#include "util/strings.h"

namespace mlsup::cli {
namespace {

// A local date and time in one of the forms --since takes; nullopt for anything else.
std::optional<double> local_timestamp(std::string_view text) {
  static const char* const kForms[] = {"%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M", "%Y-%m-%dT%H:%M",
                                       "%Y-%m-%d"};
  const std::string s(text);
  for (const char* form : kForms) {
    std::tm tm{};
    const char* end = ::strptime(s.c_str(), form, &tm);
    if (!end || *end != '\0') continue;
    tm.tm_isdst = -1;
    const std::time_t t = std::mktime(&tm);
    if (t != static_cast<std::time_t>(-1)) return static_cast<double>(t);
  }
  return std::nullopt;
}

// Reads [from, size) of the open file fd.
std::string read_from(int fd, long long from, long long size) {
  std::string out(static_cast<std::size_t>(std::max(0LL, size - from)), '\0');
  std::size_t got = 0;
  while (got < out.size()) {
    const auto n = ::pread(fd, out.data() + got, out.size() - got, static_cast<off_t>(from) + static_cast<off_t>(got));
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  out.resize(got);
  return out;
}

}  // namespace

bool EventFilter::keep(const nlohmann::json& e) const {
  if (since && util::number_field(e, "time", 0) < *since) return false;
  const std::string name = util::string_field(e, "event");
  const auto kind = events::current_event_kind(name);  // a view of name, or of the table
  return kinds.empty() ||
         std::any_of(kinds.begin(), kinds.end(), [&](const auto& k) { return events::current_event_kind(k) == kind; });
}

util::Result<void> check_kinds(const std::vector<std::string>& kinds) {
  for (const auto& k : kinds) {
    if (events::is_event_kind(events::current_event_kind(k))) continue;
    std::vector<std::string> names;
    for (const auto& row : events::kEventKinds) names.emplace_back(row.name);
    const auto near = util::did_you_mean(k, names);
    return std::unexpected(util::Error{.message = "--kind " + k + ": no event has this kind" +
                                                  (near.empty() ? "" : "; did you mean " + near + "?") +
                                                  " (README's \"Event kinds\" lists them all)"});
  }
  return {};
}

util::Result<double> parse_since(std::string_view text, double now) {
  if (text.starts_with("@")) {
    char* end = nullptr;
    const std::string digits(text.substr(1));
    const double t = std::strtod(digits.c_str(), &end);
    if (!digits.empty() && end && *end == '\0') return t;
  }
  if (const auto d = config::parse_duration(text)) return now - static_cast<double>(d->count());
  if (const auto t = local_timestamp(text)) return *t;
  return std::unexpected(util::Error{.subject = "--since", .message = "\"" + std::string(text) +
                                     "\" is neither a duration (90s, 30m, 2h, 1d) nor a local time (2026-12-02 04:30[:15], "
                                     "2026-12-02) nor unix seconds (@1764650000)"});
}

std::vector<nlohmann::json> LogFollower::poll() {
  std::vector<nlohmann::json> older;
  if (first_) {  // the log's rotated parts first, oldest first: what it held before it was last rotated
    first_ = false;
    for (const auto& part : journal::rotated_parts(path_)) {
      auto events = journal::EventLog::read_one(part);
      older.insert(older.end(), std::make_move_iterator(events.begin()), std::make_move_iterator(events.end()));
    }
  }
  auto newer = poll_current();
  older.insert(older.end(), std::make_move_iterator(newer.begin()), std::make_move_iterator(newer.end()));
  return older;
}

std::vector<nlohmann::json> LogFollower::poll_current() {
  struct stat st{};
  if (::stat(path_.c_str(), &st) != 0) {  // not there (yet, or between a rotation's rename and create)
    inode_ = device_ = 0;
    offset_ = 0;
    return {};
  }
  const bool replaced = st.st_ino != inode_ || st.st_dev != device_;
  if (replaced || st.st_size < offset_) offset_ = 0;  // another file, or this one cut: from its start
  inode_ = st.st_ino;
  device_ = st.st_dev;
  if (st.st_size == offset_) return {};
  const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  const std::string text = read_from(fd, offset_, st.st_size);
  ::close(fd);
  const auto last = text.rfind('\n');
  if (last == std::string::npos) return {};  // no complete line yet
  offset_ += static_cast<long long>(last + 1);
  return journal::EventLog::parse(std::string_view(text).substr(0, last + 1));
}

}  // namespace mlsup::cli
