#include "util/error.h"

namespace mlsup::util {

std::string Error::str() const {
  std::string out;
  if (!file.empty()) {
    out += file;
    if (line > 0) out += ":" + std::to_string(line);
    if (line > 0 && column > 0) out += ":" + std::to_string(column);
    out += ": ";
  }
  if (!subject.empty()) out += subject + ": ";
  out += message;
  return out;
}

}  // namespace mlsup::util
