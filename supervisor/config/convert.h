#pragma once
// Turns one YAML value into the Config field its KeySpec names, or says what is wrong with it.
#include <expected>
#include <string>

#include <yaml-cpp/yaml.h>

#include "config/schema.h"

namespace mlsup::config {

// Stores value into spec's field of config; the error is the message only (the caller adds where).
std::expected<void, std::string> convert(const KeySpec& spec, const YAML::Node& value, Config& config);

// Where convert's error about value is: the list item it names (a choice list's unknown or repeated
// name), the rule's value at fault (evidence.rules), else the value itself.
YAML::Mark error_mark(const KeySpec& spec, const YAML::Node& value);

}  // namespace mlsup::config
