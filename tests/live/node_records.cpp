// Prints what observe::read_node_records makes of a job's SPANK records, for the plugin's
// integration suite: mlsup_node_records STATE_DIR JOB_ID. One JSON object on stdout.
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>

#include "observe/node_records.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: mlsup_node_records STATE_DIR JOB_ID\n";
    return 2;
  }
  const auto records = mlsup::observe::read_node_records(argv[1], static_cast<std::uint32_t>(std::strtoul(argv[2], nullptr, 10)));
  nlohmann::json out = {{"exits", records.exits.size()},
                        {"health", records.health.size()},
                        {"failed_health", mlsup::observe::failed_health(records.health)},
                        {"problems", records.problems},
                        {"first_failure", nullptr}};
  if (const auto first = mlsup::observe::first_failure(records.exits))
    out["first_failure"] = {{"node", first->node}, {"rank", first->rank}, {"step", first->step},
                            {"exit_code", first->exit_code}, {"signal", first->signal}};
  std::cout << out.dump() << "\n";
  return 0;
}
