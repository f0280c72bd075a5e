// Fuzz target: the SPANK plugin's record lines and names (plugins/format.c), with buffers of the
// size the input asks for (allocated exactly, so a write past one is caught). A line that fits is
// read back by the supervisor's record reader as exactly one record with the facts written; every
// escaped text is a valid JSON string; node file names hold only safe characters.
#include <cstring>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "format.h"
#include "fuzz_support.h"
#include "observe/node_records.h"

namespace {

using mlsup::fuzz::check;

// Fixed-width numbers at the input's start (zero past its end), then NUL-separated texts.
struct Input {
  const std::uint8_t* data;
  std::size_t size;
  std::size_t at = 0;

  std::uint32_t u32() {
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i, ++at) v = (v << 8) | (at < size ? data[at] : 0u);
    return v;
  }
  std::string text() {
    std::string s;
    for (; at < size && data[at] != 0; ++at) s += static_cast<char>(data[at]);
    ++at;
    return s;
  }
};

void check_escape(const std::string& s, std::size_t outlen, std::size_t maxin) {
  std::vector<char> out(outlen);
  const std::size_t n = mlsup_json_escape(out.data(), outlen, s.c_str(), maxin);
  if (outlen == 0) return;
  check(n < outlen && std::strlen(out.data()) == n, "an escape is terminated and as long as said");
  const auto j = nlohmann::json::parse("\"" + std::string(out.data()) + "\"", nullptr, false);
  check(j.is_string(), "an escape is the inside of a JSON string");
}

void check_file_name(const std::string& node, std::size_t outlen) {
  std::vector<char> out(outlen);
  mlsup_node_file_name(node.c_str(), out.data(), outlen);
  if (outlen == 0) return;
  const std::string name(out.data());
  check(name.size() < outlen, "a file name fits its buffer");
  check(name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == std::string::npos,
        "a file name has only safe characters");
  check(outlen == 1 || (!name.empty() && name[0] != '.'), "a file name is not empty and not hidden");
}

// The one record the supervisor reads from line.
mlsup::observe::NodeRecords read_back(const char* line, int n) {
  check(n >= 0 && std::strlen(line) == static_cast<std::size_t>(n), "a line is as long as said");
  const auto records = mlsup::observe::parse_node_records(line, "file-node");
  check(records.problems.empty() && records.exits.size() + records.health.size() + records.facts.size() == 1,
        "a line reads back as one record");
  return records;
}

// The text as a GPU's information file, and the node record of that GPU and two addresses: it reads back
// with each GPU that was found (and fits) by its UUID, and no more addresses than written.
void check_node(std::vector<char>& out, std::uint32_t job, std::uint32_t step, const std::string& node,
                const std::string& info, const std::string& address, double time) {
  mlsup_node_facts f{};
  const bool found = mlsup_parse_gpu_info(info.data(), info.size(), &f.gpus[0]) == 0;
  check(!found || std::strlen(f.gpus[0].uuid) > 0, "a GPU found has a UUID");
  f.ngpus = found ? 1 : 0;
  mlsup_node_facts_add_address(&f, address.substr(0, MLSUP_ADDRESS_LEN - 1).c_str());
  mlsup_node_facts_add_address(&f, "10.0.0.1");
  check(f.naddresses >= 1 && f.naddresses <= 2, "addresses are added once each");
  const int n = mlsup_format_node(out.data(), out.size(), job, step, node.c_str(), &f, time);
  if (n < 0) return;
  const auto facts = read_back(out.data(), n).facts.at(0);
  check(facts.gpus.size() <= static_cast<std::size_t>(f.ngpus) && facts.addresses.size() <= 2, "a node record holds what was written");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Input in{data, size};
  const std::uint32_t job = in.u32(), step = in.u32(), rank = in.u32();
  const int status = static_cast<int>(in.u32()), exit_code = static_cast<int>(in.u32());
  const std::size_t outlen = in.u32() % 2048, maxin = in.u32() % 512;
  const double time = in.u32() / 1000.0;
  const bool ok = in.u32() % 2 == 1;
  const std::string node = in.text(), detail = in.text(), base = in.text();
  check_escape(detail, outlen, maxin);
  check_file_name(node, outlen);
  const long step_number = mlsup_step_number(step);
  check(step_number >= -4 && step_number < 0xfffffff0L, "a step number is a step or a special id");
  std::vector<char> out(outlen);
  if (const int n = mlsup_format_task_exit(out.data(), outlen, job, step, node.c_str(), rank, 1, status, time); n >= 0) {
    const auto exit = read_back(out.data(), n).exits.at(0);
    int code = 0, sig = 0;
    mlsup_decode_status(status, &code, &sig);
    check(exit.exit_code == code && exit.signal == sig, "a task exit reads back as written");
    check(step_number > INT32_MAX || exit.step == step_number, "a step the reader's int holds reads back as written");
  }
  if (const int n = mlsup_format_health(out.data(), outlen, job, step, node.c_str(), ok, exit_code, detail.c_str(), time); n >= 0) {
    const auto health = read_back(out.data(), n).health.at(0);
    check(health.ok == ok && health.exit_code == exit_code, "a health check reads back as written");
  }
  check_node(out, job, step, node, detail, base, time);
  if (const int n = mlsup_heartbeat_path(out.data(), outlen, base.c_str(), node.c_str(), rank); n >= 0)
    check(std::strlen(out.data()) == static_cast<std::size_t>(n), "a heartbeat path is as long as said");
  if (const int n = mlsup_heartbeat_dir(out.data(), outlen, base.c_str()); n >= 0)
    check(std::strlen(out.data()) == static_cast<std::size_t>(n), "a heartbeat folder is as long as said");
  return 0;
}
