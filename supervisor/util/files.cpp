#include "util/files.h"

#include <algorithm>
#include <sstream>

namespace mlsup::util {

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string read_end(const std::string& path, std::streamoff max_bytes) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return "";
  const std::streamoff size = in.tellg();
  in.seekg(std::max<std::streamoff>(0, size - max_bytes));
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace mlsup::util
