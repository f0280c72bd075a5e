#pragma once
// The command line: parses argv, runs one verb, returns the process exit code.
namespace mlsup::cli {

// Runs mlsup with the process's arguments.
int run(int argc, char** argv);

}  // namespace mlsup::cli
