#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <sys/wait.h>

#include "format.h"

namespace {

constexpr std::uint32_t kBatch = 0xfffffffbu;

std::string task_exit(std::uint32_t step, const char* node, std::uint32_t rank, int status) {
  char line[MLSUP_LINE_MAX];
  const int n = mlsup_format_task_exit(line, sizeof(line), 123, step, node, rank, 1, status, 1733051234.125);
  REQUIRE(n > 0);
  return {line, static_cast<std::size_t>(n)};
}

}  // namespace

TEST_CASE("record lines: a task that exited, one killed by a signal, the batch step") {
  CHECK(task_exit(0, "n1", 3, 3 << 8) ==
        "{\"v\":1,\"kind\":\"task-exit\",\"job\":123,\"step\":0,\"node\":\"n1\",\"rank\":3,\"local_rank\":1,"
        "\"exit_code\":3,\"signal\":0,\"time\":1733051234.125000}\n");
  const auto killed = nlohmann::json::parse(task_exit(2, "n2", 0, SIGKILL));
  CHECK(killed["exit_code"] == 0);
  CHECK(killed["signal"] == 9);
  CHECK(killed["step"] == 2);
  CHECK(nlohmann::json::parse(task_exit(kBatch, "n1", 0, 0))["step"] == -1);
}

TEST_CASE("record lines: the health line escapes its detail and keeps it to one line") {
  char line[MLSUP_LINE_MAX];
  const int n = mlsup_format_health(line, sizeof(line), 7, 0, "n3", false, 1,
                                    "Xid 79 \"fallen off the bus\"\tgpu\\0\nsecond line", 10.5);
  REQUIRE(n > 0);
  const std::string text(line, static_cast<std::size_t>(n));
  CHECK(text.back() == '\n');
  CHECK(text.find('\n') == text.size() - 1);
  const auto j = nlohmann::json::parse(text);
  CHECK(j["v"] == 1);
  CHECK(j["kind"] == "health");
  CHECK(j["ok"] == false);
  CHECK(j["detail"] == "Xid 79 \"fallen off the bus\"\tgpu\\0");
  CHECK(j["node"] == "n3");
  const std::string long_detail(5000, 'x');
  REQUIRE(mlsup_format_health(line, sizeof(line), 7, 0, "n3", true, 0, long_detail.c_str(), 1.0) > 0);
  CHECK(nlohmann::json::parse(line)["detail"].get<std::string>().size() == MLSUP_DETAIL_MAX);
  CHECK(nlohmann::json::parse(std::string(line, static_cast<std::size_t>(
                                  mlsup_format_health(line, sizeof(line), 7, 0, "n3", true, 0, "\xff\x01", 1.0))))["detail"] ==
        "?\x01");
}

TEST_CASE("record lines: a health detail too long for the line is cut with a marker and its length, never dropped") {
  char line[MLSUP_LINE_MAX];
  const std::string controls(300, '\x01');  // 6 bytes each once escaped: 1800 bytes, over the line's limit
  const std::string node(255, 'n');
  const int n = mlsup_format_health(line, sizeof(line), 7, 0, node.c_str(), false, 1, controls.c_str(), 1.0);
  REQUIRE(n > 0);
  const auto j = nlohmann::json::parse(std::string(line, static_cast<std::size_t>(n)));
  CHECK(j["detail_truncated"] == true);
  CHECK(j["detail_bytes"] == 300);
  CHECK(j["detail"].get<std::string>().find_first_not_of('\x01') == std::string::npos);
  CHECK(j["ok"] == false);
  const std::string long_detail(5000, 'x');
  REQUIRE(mlsup_format_health(line, sizeof(line), 7, 0, "n3", true, 0, (long_detail + "\nmore").c_str(), 1.0) > 0);
  CHECK(nlohmann::json::parse(line)["detail_bytes"] == 5000);
  REQUIRE(mlsup_format_health(line, sizeof(line), 7, 0, "n3", true, 0, "short", 1.0) > 0);
  CHECK_FALSE(nlohmann::json::parse(line).contains("detail_truncated"));
}

TEST_CASE("step numbers: ordinary steps as they are, Slurm's special steps negative") {
  CHECK(mlsup_step_number(0) == 0);
  CHECK(mlsup_step_number(41) == 41);
  CHECK(mlsup_step_number(kBatch) == -1);
  CHECK(mlsup_step_number(0xfffffffcu) == -2);
  CHECK(mlsup_step_number(0xfffffffau) == -3);
  CHECK(mlsup_step_number(0xfffffffeu) == -4);
}

TEST_CASE("wait statuses decode into an exit code or a signal") {
  int code = -1, sig = -1;
  mlsup_decode_status(768, &code, &sig);
  CHECK((code == 3 && sig == 0));
  mlsup_decode_status(SIGTERM, &code, &sig);
  CHECK((code == 0 && sig == SIGTERM));
  mlsup_decode_status(0, &code, &sig);
  CHECK((code == 0 && sig == 0));
}

TEST_CASE("heartbeat paths and node file names") {
  char out[256];
  REQUIRE(mlsup_heartbeat_path(out, sizeof(out), "/s/hb/attempt-2", "n1", 3) > 0);
  CHECK(std::string(out) == "/s/hb/attempt-2.d/n1.3");
  REQUIRE(mlsup_heartbeat_dir(out, sizeof(out), "/s/hb/attempt-2") > 0);
  CHECK(std::string(out) == "/s/hb/attempt-2.d");
  REQUIRE(mlsup_heartbeat_path(out, sizeof(out), "/s/hb", "../evil/x", 0) > 0);
  CHECK(std::string(out) == "/s/hb.d/_.._evil_x.0");
  CHECK(mlsup_heartbeat_path(out, 10, "/s/hb", "n1", 0) == -1);
  mlsup_node_file_name("gpu-node.07_a", out, sizeof(out));
  CHECK(std::string(out) == "gpu-node.07_a");
  mlsup_node_file_name("", out, sizeof(out));
  CHECK(std::string(out) == "_");
  mlsup_node_file_name("a/b c", out, sizeof(out));
  CHECK(std::string(out) == "a_b_c");
}
