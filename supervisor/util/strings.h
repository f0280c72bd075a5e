#pragma once
// String helpers that know nothing of mlsup.
#include <string>
#include <string_view>
#include <vector>

namespace mlsup::util {

// Removes leading and trailing ASCII whitespace.
std::string_view trim(std::string_view s);

// Splits on every occurrence of sep; "" gives one empty field.
std::vector<std::string> split(std::string_view s, char sep);

// Joins with sep between items.
std::string join(const std::vector<std::string>& items, std::string_view sep);

// True when s starts with prefix.
bool starts_with(std::string_view s, std::string_view prefix);

// Edit distance (insert, delete, substitute each cost 1).
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate closest to word, if it is close enough to be a plausible typo; else "".
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

// s with each byte that is not part of well-formed UTF-8 written as the four characters "\xNN";
// well-formed text comes back unchanged.
std::string valid_utf8(std::string_view s);

// Replaces every occurrence of name in text by value (the value's own text is not searched again).
void replace_all(std::string& text, std::string_view name, std::string_view value);

// Quotes s for POSIX sh: bare if it only has safe characters, else in single quotes.
std::string shell_quote(std::string_view s);

}  // namespace mlsup::util
