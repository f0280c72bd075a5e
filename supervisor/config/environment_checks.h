#pragma once
// The config's checks that look at this machine rather than at the config (validate.cpp's table runs
// them only when LoadOptions::template_file asks): each returns what is wrong, if anything.
#include <optional>
#include <string>

#include "config/config.h"

namespace mlsup::config {

// The template exists, is a regular file and can be read.
std::optional<std::string> check_template_file(const Config& c);

// checkpoint.dir is not claimed by another campaign (its .mlsup-campaign names another state folder).
std::optional<std::string> check_checkpoint_owner(const Config& c);

// The window's zone loads from the tz database.
std::optional<std::string> check_window_zone(const Config& c);

}  // namespace mlsup::config
