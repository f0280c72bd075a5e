#include "util/strings.h"

#include <algorithm>
#include <numeric>

namespace mlsup::util {
namespace {

// The forms of a multi-byte UTF-8 sequence (RFC 3629): its lead bytes, its length, and the range
// its second byte must be in (the others are 0x80-0xBF); overlong forms and surrogates are excluded.
struct Utf8Form {
  unsigned char lead_low, lead_high;
  std::size_t length;
  unsigned char second_low, second_high;
};
constexpr Utf8Form kUtf8Forms[] = {
    {0xC2, 0xDF, 2, 0x80, 0xBF}, {0xE0, 0xE0, 3, 0xA0, 0xBF}, {0xE1, 0xEC, 3, 0x80, 0xBF},
    {0xED, 0xED, 3, 0x80, 0x9F}, {0xEE, 0xEF, 3, 0x80, 0xBF}, {0xF0, 0xF0, 4, 0x90, 0xBF},
    {0xF1, 0xF3, 4, 0x80, 0xBF}, {0xF4, 0xF4, 4, 0x80, 0x8F}};

// The length of the well-formed UTF-8 sequence s starts with (s is not empty); 0 when there is none.
std::size_t utf8_length(std::string_view s) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  if (byte(0) < 0x80) return 1;
  for (const auto& f : kUtf8Forms) {
    if (byte(0) < f.lead_low || byte(0) > f.lead_high) continue;
    if (s.size() < f.length || byte(1) < f.second_low || byte(1) > f.second_high) return 0;
    for (std::size_t i = 2; i < f.length; ++i)
      if (byte(i) < 0x80 || byte(i) > 0xBF) return 0;
    return f.length;
  }
  return 0;
}

}  // namespace

std::string_view trim(std::string_view s) {
  const auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == sep) {
      out.emplace_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

std::string join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += sep;
    out += items[i];
  }
  return out;
}

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = std::max<std::size_t>(2, word.size() / 3) + 1;
  for (const auto& candidate : candidates) {
    const std::size_t d = edit_distance(word, candidate);
    if (d < best_distance) {
      best_distance = d;
      best = candidate;
    }
  }
  return best;
}

void replace_all(std::string& text, std::string_view name, std::string_view value) {
  if (name.empty()) return;
  for (auto at = text.find(name); at != std::string::npos; at = text.find(name, at + value.size()))
    text.replace(at, name.size(), value);
}

std::string shell_quote(std::string_view s) {
  const auto safe = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::string_view("_@%+=:,./-").find(c) != std::string_view::npos;
  };
  if (!s.empty() && std::all_of(s.begin(), s.end(), safe)) return std::string(s);
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  out += "'";
  return out;
}

std::string valid_utf8(std::string_view s) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size());
  while (!s.empty()) {
    const std::size_t n = utf8_length(s);
    if (n > 0) {
      out.append(s.substr(0, n));
    } else {
      const auto b = static_cast<unsigned char>(s[0]);
      out += {'\\', 'x', kHex[b >> 4], kHex[b & 0xF]};
    }
    s.remove_prefix(std::max<std::size_t>(n, 1));
  }
  return out;
}

}  // namespace mlsup::util
