#include "observe/output_tail.h"

#include "util/files.h"
#include "util/strings.h"

namespace mlsup::observe {

std::string output_tail(const std::string& std_out, const std::string& std_err) {
  const auto bytes = static_cast<std::streamoff>(kOutputTailBytes);
  std::string output = util::read_end(std_err.empty() ? std_out : std_err, bytes);
  if (!std_err.empty() && std_err != std_out) {
    if (!output.empty() && output.back() != '\n') output += '\n';  // a line cut short does not join the next file's
    output += util::read_end(std_out, bytes);
  }
  return util::valid_utf8(output);
}

}  // namespace mlsup::observe
