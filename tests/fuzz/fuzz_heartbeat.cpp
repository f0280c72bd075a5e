// Fuzz target: heartbeat files' content and names, as written by the training. The input is split
// at its first NUL byte: before it a file's content, after it the per-task file's name.
#include "observe/heartbeat.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace mlsup;
  const std::string_view input = fuzz::text_of(data, size);
  const std::string content(input.substr(0, input.find('\0')));
  const std::string name(input.size() > content.size() ? input.substr(content.size() + 1) : "");
  const auto seen = engine::parse_heartbeat(content);
  fuzz::check(seen.step >= -1, "a heartbeat's step is -1 or a step");
  fuzz::check(seen.content == content, "the content is kept as read");
  engine::HeartbeatSet set;
  engine::observe(set, {{"", content}, {name, content}}, 10);
  engine::observe(set, {{name, "1 saving waiting"}}, 20);
  const auto node = engine::heartbeat_node(name);
  fuzz::check(node.empty() || name.starts_with(node + "."), "a node comes from the name's start");
  (void)engine::stale_first(set, 2);
  (void)engine::combined(set);
  return 0;
}
