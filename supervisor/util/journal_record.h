#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace mlsup::util {

// One record of a campaign's journal: as the journal reads and writes it, and as replay applies it.
struct JournalRecord {
  double time = 0;      // unix seconds, from the clock handed to append()
  std::string type;
  nlohmann::json data;  // the whole object, seq, time and type included
  int line = 0;         // its line in the file (the header is line 1); 0 when unknown
  long long seq = 0;    // 1, 2, ... increasing; never reused (0: a record made in a test)
};

}  // namespace mlsup::util
