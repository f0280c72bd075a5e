#pragma once
// Turns one YAML value into the Config field its KeySpec names, or says what is wrong with it.
#include <expected>
#include <string>

#include <yaml-cpp/yaml.h>

#include "config/schema.h"

namespace mlsup::config {

// Stores value into spec's field of config; the error is the message only (the caller adds where).
std::expected<void, std::string> convert(const KeySpec& spec, const YAML::Node& value, Config& config);

}  // namespace mlsup::config
