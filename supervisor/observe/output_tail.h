#pragma once
// The end of a job's output that the evidence rules and srun's reports are read from: the error file's
// last bytes first (where the training's errors go), then the output's, each at most kOutputTailBytes.
#include <cstddef>
#include <string>

namespace mlsup::observe {

inline constexpr std::size_t kOutputTailBytes = 64 * 1024;

// The tail of the files std_out and std_err ("" or the same file: one), as valid UTF-8; "" when neither reads.
std::string output_tail(const std::string& std_out, const std::string& std_err);

}  // namespace mlsup::observe
