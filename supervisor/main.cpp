// mlsup: keeps Slurm training campaigns alive. Everything happens in cli::run, once the standard fds
// are sure to be open (a closed one would lend its number to a journal file or a child's pipe).
#include "cli/app.h"
#include "edges/process.h"

int main(int argc, char** argv) {
  mlsup::edges::open_closed_standard_fds();
  return mlsup::cli::run(argc, argv);
}
