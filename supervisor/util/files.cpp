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

std::optional<std::string> read_head(const std::string& path, std::size_t max_bytes) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return std::nullopt;
  const auto size = static_cast<std::size_t>(std::max<std::streamoff>(0, in.tellg()));
  in.seekg(0);
  std::string text(std::min(size, max_bytes), '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(std::max<std::streamsize>(0, in.gcount())));
  if (size > max_bytes) text += "\n... " + std::to_string(size) + " bytes";
  return text;
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
