#pragma once
// `mlsup init [--template KIND] [DIR]`: a starter config and batch script template that validate as
// written, the contract with the training explained in the config's comments.
#include <string>

#include <CLI/CLI.hpp>

namespace mlsup::cli {

struct InitOptions {
  std::string dir = ".";
  std::string kind = "torchrun";  // srun, torchrun, accelerate, megatron: the shipped template copied
  std::string name;               // "" = from the folder's name
  bool force = false;             // write over files that exist
};

// Adds `init` and its options to the command line, filling o.
CLI::App* add_init_command(CLI::App& app, InitOptions& o);

// Writes DIR/campaign.yaml and DIR/KIND.sbatch.tmpl, then validates the config (its exit code).
int init_verb(const InitOptions& o);

}  // namespace mlsup::cli
