#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "config.h"

namespace {

struct Parsed {
  int rc;
  mlsup_config cfg;
  std::string err;
};

Parsed parse(std::vector<std::string> words) {
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  Parsed p{};
  char err[512];
  p.rc = mlsup_config_parse(&p.cfg, static_cast<int>(argv.size()), argv.data(), err, sizeof(err));
  p.err = err;
  return p;
}

}  // namespace

TEST_CASE("plugstack arguments: explicit defaults") {
  const auto p = parse({});
  CHECK(p.rc == 0);
  CHECK(std::string(p.cfg.health_check).empty());
  CHECK(p.cfg.health_timeout == 30);
  CHECK_FALSE(p.cfg.health_fail_job);
  CHECK(p.cfg.heartbeat_per_task);
  CHECK(p.cfg.records);
  CHECK(p.cfg.node_facts);
  CHECK(std::string(p.cfg.gpu_info) == "/proc/driver/nvidia/gpus");
}

TEST_CASE("plugstack arguments: every key") {
  const auto p = parse({"health_check=/opt/mlsup/gpu_health.sh", "health_timeout=5", "health_fail_job=yes",
                        "heartbeat_per_task=no", "records=false", "node_facts=no", "gpu_info=/srv/gpus/%n"});
  REQUIRE(p.rc == 0);
  CHECK(std::string(p.cfg.health_check) == "/opt/mlsup/gpu_health.sh");
  CHECK(p.cfg.health_timeout == 5);
  CHECK(p.cfg.health_fail_job);
  CHECK_FALSE(p.cfg.heartbeat_per_task);
  CHECK_FALSE(p.cfg.records);
  CHECK_FALSE(p.cfg.node_facts);
  CHECK(std::string(p.cfg.gpu_info) == "/srv/gpus/%n");
  CHECK(parse({"gpu_info=none"}).cfg.gpu_info[0] == '\0');
  CHECK(parse({"health_check=/a", "health_check="}).cfg.health_check[0] == '\0');
}

TEST_CASE("plugstack arguments: an unknown key names the known ones; the defaults stay") {
  const auto p = parse({"health_fail_job=yes", "helth_check=/x"});
  CHECK(p.rc == -1);
  CHECK(p.err ==
        "unknown key \"helth_check\" (known: health_check, health_timeout, health_fail_job, heartbeat_per_task, "
        "records, allow_root, node_facts, gpu_info)");
  CHECK_FALSE(p.cfg.health_fail_job);
}

TEST_CASE("plugstack arguments: bad values") {
  CHECK(parse({"health_timeout=0"}).err == "health_timeout: \"0\" is not a number of seconds from 1 to 3600");
  CHECK(parse({"health_timeout=30s"}).rc == -1);
  CHECK(parse({"health_timeout=3601"}).rc == -1);
  CHECK(parse({"health_check=relative/path"}).err == "health_check: \"relative/path\" is not an absolute path");
  CHECK(parse({"records=maybe"}).err == "records: \"maybe\" is not yes or no");
  CHECK(parse({"health_fail_job"}).err.starts_with("argument \"health_fail_job\" is not key=value"));
  CHECK(parse({"health_check=/" + std::string(5000, 'a')}).rc == -1);
  CHECK(parse({"node_facts=sometimes"}).err == "node_facts: \"sometimes\" is not yes or no");
  CHECK(parse({"gpu_info=gpus/%n"}).err == "gpu_info: \"gpus/%n\" is not an absolute path or none");
  CHECK(parse({"gpu_info="}).rc == -1);
  CHECK(parse({"gpu_info=/" + std::string(5000, 'a')}).rc == -1);
}

namespace {

std::string gpu_dir(const std::string& word, const char* node, std::size_t outlen = 4096) {
  const auto p = parse({word});
  REQUIRE(p.rc == 0);
  std::string out(outlen, 'x');
  return mlsup_config_gpu_dir(&p.cfg, node, out.data(), outlen) == 0 ? std::string(out.c_str()) : "<-1>";
}

}  // namespace

TEST_CASE("plugstack arguments: gpu_info's %n is the node's file name; none is no directory") {
  CHECK(gpu_dir("gpu_info=/proc/driver/nvidia/gpus", "n1") == "/proc/driver/nvidia/gpus");
  CHECK(gpu_dir("gpu_info=/t/gpus/%n", "n1") == "/t/gpus/n1");
  CHECK(gpu_dir("gpu_info=/t/%n/gpus-%n", "gpu[01]") == "/t/gpu_01_/gpus-gpu_01_");
  CHECK(gpu_dir("gpu_info=/t/%n", "../etc") == "/t/_.._etc");
  CHECK(gpu_dir("gpu_info=/t/100%/%x%", "n1") == "/t/100%/%x%");
  CHECK(gpu_dir("gpu_info=none", "n1").empty());
  CHECK(gpu_dir("gpu_info=/t/%n", "n1", 5) == "<-1>");
  CHECK(gpu_dir("gpu_info=/t/%n", "n1", 6) == "/t/n1");
}

TEST_CASE("job users: root and an unknown uid are refused unless allow_root=yes permits root") {
  const auto defaults = parse({});
  CHECK_FALSE(defaults.cfg.allow_root);
  CHECK(std::string(mlsup_user_refusal(&defaults.cfg, true, 0)) ==
        "the job runs as root (allow_root=yes in plugstack.conf permits it)");
  CHECK(std::string(mlsup_user_refusal(&defaults.cfg, false, 1000)) == "the job's uid or gid is unknown");
  CHECK(mlsup_user_refusal(&defaults.cfg, true, 1000) == nullptr);
  const auto root_ok = parse({"allow_root=yes"});
  CHECK(root_ok.cfg.allow_root);
  CHECK(mlsup_user_refusal(&root_ok.cfg, true, 0) == nullptr);
  CHECK(mlsup_user_refusal(&root_ok.cfg, false, 0) != nullptr);
}
