#pragma once
// A struct's JSON both ways from a table of its fields: key, member, whether it is written only when set
// (not its default), and whether a value of another type makes the whole unusable or leaves the default.
// The journal's records and the events are written and read through it.
#include <optional>
#include <tuple>

#include <nlohmann/json.hpp>

namespace mlsup::util::fields {

// Always: written (an empty optional is left out); WhenSet: left out while the member has its default;
// Null: an optional written as null while empty.
enum class Keep { Always, WhenSet, Null };
enum class Bad { Fails, Defaults };    // a value of another type: reading fails, or the default stays

template <class R, class T>
struct Field {
  const char* key;
  T R::*member;
  Keep keep = Keep::Always;
  Bad bad = Bad::Fails;
};

// A field written always (an empty optional left out) and read leniently (a value of another type keeps
// the default), as events are.
template <class R, class T>
constexpr Field<R, T> lenient(const char* key, T R::*member) {
  return {key, member, Keep::Always, Bad::Defaults};
}

// How a member's type is written and read: as nlohmann's JSON does, unless specialised (an enum by its
// name, for example) before the first table that uses it.
template <class T>
struct Codec {
  static nlohmann::json encode(const T& v) { return v; }
  static void decode(const nlohmann::json& j, T& v) { v = j.get<T>(); }
};
template <class T>
struct Codec<std::optional<T>> {
  static void decode(const nlohmann::json& j, std::optional<T>& v) {
    T x{};
    Codec<T>::decode(j, x);
    v = std::move(x);
  }
};

template <class Obj, class R, class T>
void put(nlohmann::json& j, const Obj& r, const Field<R, T>& f) {
  const T& v = r.*(f.member);
  if constexpr (requires { v.has_value(); }) {
    if (v) j[f.key] = Codec<typename T::value_type>::encode(*v);
    else if (f.keep == Keep::Null) j[f.key] = nullptr;
  } else if (static const Obj unset{}; f.keep == Keep::Always || !(v == unset.*(f.member))) {
    j[f.key] = Codec<T>::encode(v);
  }
}

template <class Obj, class R, class T>
void take(const nlohmann::json& j, Obj& r, const Field<R, T>& f) {
  const auto it = j.find(f.key);
  if (it == j.end()) return;
  if constexpr (requires { r.*(f.member) = std::nullopt; }) {
    if (f.keep == Keep::Null && it->is_null()) return (void)(r.*(f.member) = std::nullopt);
  }
  if (f.bad == Bad::Fails) return Codec<T>::decode(*it, r.*(f.member));
  try {
    T v = r.*(f.member);
    Codec<T>::decode(*it, v);
    r.*(f.member) = std::move(v);
  } catch (const nlohmann::json::exception&) {
  }
}

// r's fields as a JSON object.
template <class Obj, class... F>
void write(nlohmann::json& j, const Obj& r, const std::tuple<F...>& fields) {
  j = nlohmann::json::object();
  std::apply([&](const auto&... f) { (put(j, r, f), ...); }, fields);
}

// r's fields from a JSON object (a key absent: the default stays); throws nlohmann's exception for one
// that is not an object, or for a field of another type read with Bad::Fails.
template <class Obj, class... F>
void read(const nlohmann::json& j, Obj& r, const std::tuple<F...>& fields) {
  if (!j.is_object()) (void)j.at("");  // throws: only an object has fields
  std::apply([&](const auto&... f) { (take(j, r, f), ...); }, fields);
}

}  // namespace mlsup::util::fields

// Declares a struct's JSON both ways (nlohmann's to_json and from_json); for an X-macro list of structs.
#define MLSUP_FIELDS_JSON_DECLARE(T)             \
  void to_json(nlohmann::json& j, const T& v);   \
  void from_json(const nlohmann::json& j, T& v);
// Defines them from the table fields(const T*) in scope.
#define MLSUP_FIELDS_JSON_DEFINE(T)                                                                             \
  void to_json(nlohmann::json& j, const T& v) { ::mlsup::util::fields::write(j, v, fields(static_cast<const T*>(nullptr))); } \
  void from_json(const nlohmann::json& j, T& v) { ::mlsup::util::fields::read(j, v, fields(static_cast<const T*>(nullptr))); }
