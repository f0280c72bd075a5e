#pragma once
// mlsup's exit codes; the README's table lists the same.
namespace mlsup::cli {

enum ExitCode : int {
  kOk = 0,             // done: the command did what was asked
  kRuntimeFailure = 1, // something outside the input failed (a file could not be written, ...)
  kUsage = 2,          // the command line is wrong
  kBadInput = 3,       // the config or the template is wrong; the message says where
};

}  // namespace mlsup::cli
