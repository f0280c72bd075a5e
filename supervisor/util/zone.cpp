#include "util/zone.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <optional>

#include "util/files.h"

namespace mlsup::util {
namespace {

// Reads big-endian integers off the front of a byte view; false once it runs short.
struct Reader {
  std::string_view bytes;
  bool ok = true;

  std::int64_t be(int n) {
    if (bytes.size() < static_cast<std::size_t>(n)) return ok = false, 0;
    std::uint64_t v = 0;
    for (int i = 0; i < n; ++i) v = (v << 8) | static_cast<unsigned char>(bytes[static_cast<std::size_t>(i)]);
    bytes.remove_prefix(static_cast<std::size_t>(n));
    if (n == 4) return static_cast<std::int32_t>(static_cast<std::uint32_t>(v));  // signed 32-bit
    return static_cast<std::int64_t>(v);
  }
  void skip(std::size_t n) {
    if (bytes.size() < n) ok = false;
    bytes.remove_prefix(std::min(n, bytes.size()));
  }
};

struct Counts {
  std::size_t isut = 0, isstd = 0, leap = 0, time = 0, type = 0, chars = 0;
};

Result<Counts> header(Reader& r) {
  if (!r.bytes.starts_with("TZif")) return fail("not a TZif file");
  r.skip(4);
  const char version = r.bytes.empty() ? '\0' : r.bytes[0];
  if (version < '2') return fail("a TZif file of version 1 (only version 2 or later is read)");
  r.skip(16);
  Counts c;
  for (auto* n : {&c.isut, &c.isstd, &c.leap, &c.time, &c.type, &c.chars}) *n = static_cast<std::size_t>(r.be(4));
  if (!r.ok || c.type == 0) return fail("a TZif header that is cut short or has no local time type");
  return c;
}

// [+-]hh[:mm[:ss]] as seconds; text is consumed.
std::optional<long> posix_time(std::string_view& text) {
  int sign = 1;
  if (!text.empty() && (text[0] == '+' || text[0] == '-')) {
    sign = text[0] == '-' ? -1 : 1;
    text.remove_prefix(1);
  }
  long total = 0;
  for (int part = 0; part < 3; ++part) {
    if (part > 0) {
      if (text.empty() || text[0] != ':') break;
      text.remove_prefix(1);
    }
    long v = 0;
    std::size_t digits = 0;
    while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits])) && digits < 3)
      v = v * 10 + (text[digits++] - '0');
    if (digits == 0) return std::nullopt;
    text.remove_prefix(digits);
    total += v * (part == 0 ? 3600 : part == 1 ? 60 : 1);
  }
  return sign * total;
}

// A zone abbreviation: letters, or anything between < and >.
bool posix_name(std::string_view& text) {
  if (!text.empty() && text[0] == '<') {
    const auto close = text.find('>');
    if (close == std::string_view::npos) return false;
    text.remove_prefix(close + 1);
    return true;
  }
  std::size_t n = 0;
  while (n < text.size() && std::isalpha(static_cast<unsigned char>(text[n]))) ++n;
  text.remove_prefix(n);
  return n >= 3;
}

std::optional<ZoneRule::Date> posix_date(std::string_view& text) {
  if (text.empty() || text[0] != 'M') return std::nullopt;
  text.remove_prefix(1);
  int fields[3] = {0, 0, 0};
  for (int i = 0; i < 3; ++i) {
    if (i > 0) {
      if (text.empty() || text[0] != '.') return std::nullopt;
      text.remove_prefix(1);
    }
    std::size_t n = 0;
    while (n < text.size() && std::isdigit(static_cast<unsigned char>(text[n])) && n < 2) fields[i] = fields[i] * 10 + (text[n++] - '0');
    if (n == 0) return std::nullopt;
    text.remove_prefix(n);
  }
  ZoneRule::Date d{fields[0], fields[1], fields[2]};
  if (d.month < 1 || d.month > 12 || d.week < 1 || d.week > 5 || d.weekday > 6) return std::nullopt;
  if (!text.empty() && text[0] == '/') {
    text.remove_prefix(1);
    const auto t = posix_time(text);
    if (!t) return std::nullopt;
    d.seconds = static_cast<int>(*t);
  }
  return d;
}

// The local midnight (as seconds since the epoch, offset zero) of the date d names in year.
std::int64_t date_in(int year, const ZoneRule::Date& d) {
  using namespace std::chrono;
  const auto ym = std::chrono::year{year} / std::chrono::month{static_cast<unsigned>(d.month)};
  const weekday wd{static_cast<unsigned>(d.weekday)};
  const sys_days day = d.week == 5 ? sys_days{ym / wd[last]} : sys_days{ym / wd[static_cast<unsigned>(d.week)]};
  return static_cast<std::int64_t>(day.time_since_epoch().count()) * 86400;
}

long rule_offset(const ZoneRule& r, std::int64_t t) {
  if (!r.has_dst) return r.std_offset;
  using namespace std::chrono;
  const auto local_day = floor<days>(sys_seconds{seconds{t + r.std_offset}});
  const int year = static_cast<int>(year_month_day{local_day}.year());
  const std::int64_t start = date_in(year, r.start) + r.start.seconds - r.std_offset;
  const std::int64_t end = date_in(year, r.end) + r.end.seconds - r.dst_offset;
  const bool dst = start < end ? (t >= start && t < end) : !(t >= end && t < start);
  return dst ? r.dst_offset : r.std_offset;
}

}  // namespace

Result<ZoneRule> parse_zone_rule(std::string_view text) {
  const std::string whole(text);
  auto bad = [&](const std::string& what) { return fail("time zone rule \"" + whole + "\": " + what); };
  ZoneRule r;
  if (!posix_name(text)) return bad("no standard time name");
  const auto std_off = posix_time(text);
  if (!std_off) return bad("no offset after the standard time name");
  r.std_offset = -*std_off;  // POSIX counts west of Greenwich
  if (text.empty()) return r;
  if (!posix_name(text)) return bad("no daylight time name");
  r.has_dst = true;
  r.dst_offset = r.std_offset + 3600;
  if (!text.empty() && text[0] != ',') {
    const auto dst_off = posix_time(text);
    if (!dst_off) return bad("an unreadable daylight offset");
    r.dst_offset = -*dst_off;
  }
  if (text.empty() || text[0] != ',') return bad("daylight time without the dates it starts and ends (,Mm.w.d,Mm.w.d)");
  text.remove_prefix(1);
  const auto start = posix_date(text);
  if (!start || text.empty() || text[0] != ',') return bad("a start date not of the form Mm.w.d[/time]");
  text.remove_prefix(1);
  const auto end = posix_date(text);
  if (!end || !text.empty()) return bad("an end date not of the form Mm.w.d[/time]");
  r.start = *start;
  r.end = *end;
  return r;
}

Result<Zone> parse_tzif(std::string_view bytes, std::string name) {
  Reader r{bytes};
  auto v1 = header(r);
  if (!v1) return std::unexpected(v1.error());
  r.skip(v1->time * 5 + v1->type * 6 + v1->chars + v1->leap * 8 + v1->isstd + v1->isut);  // the 32-bit part
  auto c = header(r);
  if (!c) return std::unexpected(c.error());
  Zone z;
  z.name = std::move(name);
  for (std::size_t i = 0; i < c->time; ++i) z.transitions.push_back(r.be(8));
  std::vector<std::size_t> index;
  for (std::size_t i = 0; i < c->time; ++i) index.push_back(static_cast<std::size_t>(r.be(1)));
  std::vector<long> type_offsets;
  for (std::size_t i = 0; i < c->type; ++i) {
    type_offsets.push_back(static_cast<long>(r.be(4)));
    r.skip(2);
  }
  r.skip(c->chars + c->leap * 12 + c->isstd + c->isut);
  if (!r.ok) return fail("TZif file of zone " + z.name + " is cut short");
  for (const auto i : index) {
    if (i >= type_offsets.size()) return fail("TZif file of zone " + z.name + " names a local time type it lacks");
    z.offsets.push_back(type_offsets[i]);
  }
  z.initial_offset = type_offsets.front();
  if (r.bytes.size() >= 2 && r.bytes.front() == '\n') {
    const auto footer = r.bytes.substr(1, r.bytes.find('\n', 1) - 1);
    if (!footer.empty()) {
      auto rule = parse_zone_rule(footer);
      if (!rule) return std::unexpected(rule.error());
      z.rule = *rule;
    }
  }
  return z;
}

long utc_offset(const Zone& z, std::int64_t t) {
  const auto after = std::upper_bound(z.transitions.begin(), z.transitions.end(), t);
  if (after == z.transitions.end() && z.rule) return rule_offset(*z.rule, t);
  if (after == z.transitions.begin()) return z.initial_offset;
  return z.offsets[static_cast<std::size_t>(after - z.transitions.begin() - 1)];
}

Result<Zone> load_zone(const std::string& name) {
  if (name.empty()) {
    const auto own = read_file("/etc/localtime");
    if (!own) return Zone{"UTC", {}, {}, 0, std::nullopt};
    auto z = parse_tzif(*own, "localtime");
    if (!z) return fail("/etc/localtime: " + z.error().message);
    return z;
  }
  const bool safe = !name.empty() && name[0] != '/' && name.find("..") == std::string::npos &&
                    std::all_of(name.begin(), name.end(), [](char ch) {
                      return std::isalnum(static_cast<unsigned char>(ch)) || ch == '/' || ch == '_' || ch == '-' || ch == '+';
                    });
  if (!safe) return fail("time zone \"" + name + "\" is not a tz database name (such as Europe/Berlin or UTC)");
  const char* dir = std::getenv("TZDIR");
  const std::string path = std::string(dir && *dir ? dir : "/usr/share/zoneinfo") + "/" + name;
  const auto bytes = read_file(path);
  if (!bytes) return fail("time zone \"" + name + "\" not found (" + path + "): name one of the tz database (such as Europe/Berlin), or install tzdata");
  auto z = parse_tzif(*bytes, name);
  if (!z) return fail(path + ": " + z.error().message);
  return z;
}

}  // namespace mlsup::util
