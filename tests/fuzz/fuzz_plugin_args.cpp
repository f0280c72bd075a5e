// Fuzz target: the SPANK plugin's plugstack arguments (plugins/config.c). The first byte sizes the
// message buffer (0-199 bytes, allocated exactly); the rest are the words, split at newlines and NULs.
// Accepted words give values within their ranges; a refusal restores the defaults and leaves a
// terminated message that fits its buffer.
#include <cstring>
#include <string>
#include <vector>

#include "config.h"
#include "fuzz_support.h"

namespace {

// The words of text, split at '\n' and '\0'.
std::vector<std::string> words_of(std::string_view text) {
  std::vector<std::string> words(1);
  for (const char c : text) {
    if (c == '\n' || c == '\0') words.emplace_back();
    else words.back() += c;
  }
  return words;
}

bool same(const mlsup_config& a, const mlsup_config& b) {
  return std::strcmp(a.health_check, b.health_check) == 0 && a.health_timeout == b.health_timeout &&
         a.health_fail_job == b.health_fail_job && a.heartbeat_per_task == b.heartbeat_per_task && a.records == b.records;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using mlsup::fuzz::check;
  if (size == 0) return 0;
  const std::size_t errlen = data[0] % 200;
  const auto words = words_of(mlsup::fuzz::text_of(data + 1, size - 1));
  std::vector<char*> argv;
  for (const auto& w : words) argv.push_back(const_cast<char*>(w.c_str()));
  std::vector<char> err(errlen);
  mlsup_config cfg, defaults;
  mlsup_config_defaults(&defaults);
  const int rc = mlsup_config_parse(&cfg, static_cast<int>(argv.size()), argv.data(), err.data(), errlen);
  if (rc == 0) {
    check(cfg.health_timeout >= 1 && cfg.health_timeout <= 3600, "health_timeout is within 1..3600");
    check(cfg.health_check[0] == '\0' || cfg.health_check[0] == '/', "health_check is absolute or unset");
    check(::strnlen(cfg.health_check, MLSUP_PATH_MAX) < MLSUP_PATH_MAX, "health_check is terminated");
    return 0;
  }
  check(rc == -1, "a refusal returns -1");
  check(same(cfg, defaults), "a refusal leaves the defaults");
  if (errlen > 0) check(::strnlen(err.data(), errlen) < errlen, "the message is terminated within its buffer");
  return 0;
}
