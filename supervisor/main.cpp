// mlsup: keeps Slurm training campaigns alive. Everything happens in cli::run.
#include "cli/app.h"

int main(int argc, char** argv) { return mlsup::cli::run(argc, argv); }
