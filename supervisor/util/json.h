#pragma once
// JSON that never throws on its way out or on the way in: text with bytes that are not UTF-8, and
// fields of another type than expected.
#include <string>

#include <nlohmann/json.hpp>

namespace mlsup::util {

// j as JSON text (indent < 0: one line); bytes that are not UTF-8 become U+FFFD instead of an exception.
template <class Json>
std::string dump_json(const Json& j, int indent = -1) {
  return j.dump(indent, ' ', false, Json::error_handler_t::replace);
}

// A value as text for people: a string as it is, anything else as JSON.
inline std::string json_text(const nlohmann::json& j) { return j.is_string() ? j.get<std::string>() : dump_json(j); }

// j[key] when j is an object whose key holds a string, else fallback.
inline std::string string_field(const nlohmann::json& j, const char* key, std::string fallback = "") {
  const auto it = j.is_object() ? j.find(key) : j.end();
  return it != j.end() && it->is_string() ? it->get<std::string>() : fallback;
}

// j[key] when j is an object whose key holds a number, else fallback.
inline double number_field(const nlohmann::json& j, const char* key, double fallback = 0) {
  const auto it = j.is_object() ? j.find(key) : j.end();
  return it != j.end() && it->is_number() ? it->get<double>() : fallback;
}

}  // namespace mlsup::util
