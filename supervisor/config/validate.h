#pragma once
// Checks that involve several keys, or the world (the template file), after loading.
#include "config/config.h"
#include "config/load.h"

namespace mlsup::config {

// Appends one error per impossible combination or missing requirement found in config.
void validate(const Config& config, Errors& errors, const LoadOptions& options = {});

}  // namespace mlsup::config
