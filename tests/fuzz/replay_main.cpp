// Feeds inputs to a harness's LLVMFuzzerTestOneInput: each argument is a file (one input) or a
// folder (each regular file in it, in name order; names starting with '.' are skipped). A folder
// that does not exist is noted and skipped; no input at all is a failure, so a wrong path cannot pass.
// Also the program AFL++ runs: `fuzz_TARGET @@` hands it one file per execution.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

namespace fs = std::filesystem;

// The inputs an argument names, in order.
std::vector<fs::path> inputs_of(const fs::path& arg) {
  std::error_code ec;
  if (!fs::is_directory(arg, ec)) return fs::exists(arg, ec) ? std::vector<fs::path>{arg} : std::vector<fs::path>{};
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(arg, ec))
    if (entry.is_regular_file(ec) && !entry.path().filename().string().starts_with(".")) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

// Runs the harness on one file's bytes.
void replay(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
}

}  // namespace

int main(int argc, char** argv) {
  const bool many = argc > 2 || (argc == 2 && fs::is_directory(argv[1]));  // else one quiet run, as AFL++ makes
  std::size_t count = 0;
  for (int i = 1; i < argc; ++i) {
    const auto files = inputs_of(argv[i]);
    if (files.empty()) std::fprintf(stderr, "replay: %s: no inputs (skipped)\n", argv[i]);
    for (const auto& file : files) {
      if (many) std::fprintf(stderr, "replay: %s\n", file.c_str());  // names the input a crash came from
      replay(file);
      ++count;
    }
  }
  if (count == 0) {
    std::fprintf(stderr, "replay: no input given; name files or folders of inputs\n");
    return 2;
  }
  if (many) std::printf("replay: %zu inputs, no crash\n", count);
  return 0;
}
