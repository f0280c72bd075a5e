#include <doctest/doctest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "format.h"
#include "node_facts.h"

namespace {

namespace fs = std::filesystem;

// An information file as the NVIDIA driver prints it (seq_printf, tabs included).
std::string information(const std::string& model, const std::string& uuid, const std::string& bus) {
  return "Model: \t\t " + model + "\n" +
         "IRQ:   \t\t 255\n"
         "GPU UUID: \t " + uuid + "\n" +
         "Video BIOS: \t 96.00.99.00.01\n"
         "Bus Type: \t PCIe\n"
         "DMA Size: \t 52 bits\n"
         "DMA Mask: \t 0xfffffffffffff\n"
         "Bus Location: \t " + bus + "\n" +
         "Device Minor: \t 0\n"
         "GPU Firmware: \t 550.54.15\n"
         "GPU Excluded:\t No\n";
}

constexpr const char* kUuidA = "GPU-5f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b";
constexpr const char* kUuidB = "GPU-0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d";
constexpr const char* kH100 = "NVIDIA H100 80GB HBM3";

struct Parsed {
  int rc;
  mlsup_gpu gpu;
};

Parsed parse(const std::string& text) {
  Parsed p{};
  p.rc = mlsup_parse_gpu_info(text.data(), text.size(), &p.gpu);
  return p;
}

mlsup_gpu gpu(const std::string& uuid, const std::string& bus, const std::string& model) {
  mlsup_gpu g{};
  std::snprintf(g.uuid, sizeof(g.uuid), "%s", uuid.c_str());
  std::snprintf(g.bus, sizeof(g.bus), "%s", bus.c_str());
  std::snprintf(g.model, sizeof(g.model), "%s", model.c_str());
  return g;
}

std::string node_line(const mlsup_node_facts& f, std::size_t outlen = MLSUP_NODE_LINE_MAX) {
  std::vector<char> out(outlen);
  const int n = mlsup_format_node(out.data(), outlen, 123, 0, "n1", &f, 1733051230.5);
  return n < 0 ? "<-1>" : std::string(out.data(), static_cast<std::size_t>(n));
}

// A fresh directory under /tmp, removed with the object.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "mlsup-node-facts.XXXXXX").string();
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  ~TempDir() { fs::remove_all(path); }
  void plant(const std::string& folder, const std::string& text) const {
    fs::create_directories(path / folder);
    std::ofstream(path / folder / "information") << text;
  }
};

}  // namespace

TEST_CASE("GPU information: the driver's text gives model, UUID and bus (the bus keeps its colons)") {
  const auto p = parse(information(kH100, kUuidA, "0000:07:00.0"));
  REQUIRE(p.rc == 0);
  CHECK(std::string(p.gpu.uuid) == kUuidA);
  CHECK(std::string(p.gpu.bus) == "0000:07:00.0");
  CHECK(std::string(p.gpu.model) == kH100);
}

TEST_CASE("GPU information: without a UUID there is no GPU") {
  CHECK(parse("Model: \t\t Tesla V100-SXM2-16GB\nBus Location: \t 0000:3b:00.0\n").rc == -1);
  CHECK(parse("GPU UUID: \t \n").rc == -1);
  CHECK(parse("").rc == -1);
  CHECK(parse("garbage without colons\n\n\n").rc == -1);
}

TEST_CASE("GPU information: CRLF line ends, odd spaces around labels and values, unknown lines") {
  const auto p = parse("  Model :   Tesla V100-SXM2-16GB  \r\n"
                       "Some New Line: value: with colons\r\n"
                       "GPU UUID:GPU-0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d\r\n"
                       "\tBus Location\t:\t0000:3b:00.0\t\r\n");
  REQUIRE(p.rc == 0);
  CHECK(std::string(p.gpu.model) == "Tesla V100-SXM2-16GB");
  CHECK(std::string(p.gpu.uuid) == kUuidB);
  CHECK(std::string(p.gpu.bus) == "0000:3b:00.0");
  // A label matches whole: "GPU UUIDs" or "Model name" are other lines.
  CHECK(parse("GPU UUIDs: \t GPU-x\n").rc == -1);
  CHECK(std::string(parse("Model name: x\nGPU UUID: GPU-x\n").gpu.model).empty());
  // The first of two lines with one label counts.
  CHECK(std::string(parse("GPU UUID: GPU-first\nGPU UUID: GPU-second\n").gpu.uuid) == "GPU-first");
}

TEST_CASE("GPU information: a cut text keeps its whole lines only; a NUL ends it; long values are cut") {
  const std::string full = information(kH100, kUuidA, "0000:07:00.0");
  const auto uuid_at = full.find(kUuidA);
  CHECK(parse(full.substr(0, uuid_at + 10)).rc == -1);  // cut inside the UUID: no half UUID
  const auto after_uuid = parse(full.substr(0, full.find('\n', uuid_at) + 1));
  REQUIRE(after_uuid.rc == 0);
  CHECK(std::string(after_uuid.gpu.uuid) == kUuidA);
  CHECK(std::string(after_uuid.gpu.bus).empty());
  const auto cut_bus = parse(full.substr(0, full.find("0000:07") + 7));
  CHECK(std::string(cut_bus.gpu.bus).empty());
  // len shorter than the buffer: the rest is not read.
  mlsup_gpu g{};
  CHECK(mlsup_parse_gpu_info(full.data(), uuid_at, &g) == -1);
  CHECK(parse(std::string("Model: a\n\0GPU UUID: GPU-x\n", 27)).rc == -1);
  const auto long_model = parse("Model: " + std::string(500, 'M') + "\nGPU UUID: " + kUuidA + "\n");
  REQUIRE(long_model.rc == 0);
  CHECK(std::string(long_model.gpu.model) == std::string(sizeof(g.model) - 1, 'M'));
}

TEST_CASE("GPUs are ordered by bus") {
  mlsup_gpu gpus[] = {gpu("GPU-c", "0000:0a:00.0", "m"), gpu("GPU-a", "0000:07:00.0", "m"),
                      gpu("GPU-b", "0000:08:00.0", "m")};
  mlsup_sort_gpus(gpus, 3);
  CHECK(std::string(gpus[0].uuid) + gpus[1].uuid + gpus[2].uuid == "GPU-aGPU-bGPU-c");
}

TEST_CASE("addresses: up, not loopback, not IPv6 link-local; no duplicates; at most 32") {
  const unsigned char v4[16] = {10, 1, 2, 3};
  const unsigned char fe80[16] = {0xfe, 0x80}, febf[16] = {0xfe, 0xbf, 0x01}, fec0[16] = {0xfe, 0xc0},
                      fd00[16] = {0xfd, 0x00};
  CHECK(mlsup_address_kept(true, false, false, v4));
  CHECK_FALSE(mlsup_address_kept(false, false, false, v4));
  CHECK_FALSE(mlsup_address_kept(true, true, false, v4));
  CHECK_FALSE(mlsup_address_kept(true, false, true, fe80));
  CHECK_FALSE(mlsup_address_kept(true, false, true, febf));
  CHECK(mlsup_address_kept(true, false, true, fec0));
  CHECK(mlsup_address_kept(true, false, true, fd00));
  CHECK(mlsup_address_kept(true, false, false, fe80));  // an IPv4 254.128.x.x is no link-local IPv6
  mlsup_node_facts f{};
  CHECK(mlsup_node_facts_add_address(&f, "10.1.2.3"));
  CHECK_FALSE(mlsup_node_facts_add_address(&f, "10.1.2.3"));
  CHECK(mlsup_node_facts_add_address(&f, "fd00::5"));
  CHECK_FALSE(mlsup_node_facts_add_address(&f, std::string(MLSUP_ADDRESS_LEN, '1').c_str()));
  for (int i = 0; i < 40; i++) mlsup_node_facts_add_address(&f, ("10.0.0." + std::to_string(i)).c_str());
  CHECK(f.naddresses == MLSUP_ADDRESS_MAX);
  CHECK(std::string(f.addresses[0]) == "10.1.2.3");
  CHECK(std::string(f.addresses[MLSUP_ADDRESS_MAX - 1]) == "10.0.0.29");
}

TEST_CASE("the node record: no addresses and no GPUs") {
  const mlsup_node_facts none{};
  CHECK(node_line(none) ==
        "{\"v\":1,\"kind\":\"node\",\"job\":123,\"step\":0,\"node\":\"n1\",\"addresses\":[],\"gpus\":[],"
        "\"time\":1733051230.500000}\n");
}

TEST_CASE("the node record: one GPU and two addresses, exactly") {
  mlsup_node_facts f{};
  mlsup_node_facts_add_address(&f, "10.1.2.3");
  mlsup_node_facts_add_address(&f, "fd00::5");
  f.gpus[f.ngpus++] = gpu(kUuidA, "0000:07:00.0", kH100);
  CHECK(node_line(f) ==
        "{\"v\":1,\"kind\":\"node\",\"job\":123,\"step\":0,\"node\":\"n1\",\"addresses\":[\"10.1.2.3\",\"fd00::5\"],"
        "\"gpus\":[{\"uuid\":\"GPU-5f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b\",\"bus\":\"0000:07:00.0\","
        "\"model\":\"NVIDIA H100 80GB HBM3\"}],\"time\":1733051230.500000}\n");
}

TEST_CASE("the node record: several GPUs and addresses; a model with a quote and odd bytes is escaped") {
  mlsup_node_facts f{};
  for (const char* a : {"10.1.2.3", "192.168.7.1", "fd00::5", "2001:db8::1"}) mlsup_node_facts_add_address(&f, a);
  f.gpus[f.ngpus++] = gpu(kUuidA, "0000:07:00.0", kH100);
  f.gpus[f.ngpus++] = gpu(kUuidB, "0000:0a:00.0", "Tesla \"V100\"\t\xff");
  f.gpus[f.ngpus++] = gpu("GPU-11111111-2222-3333-4444-555555555555", "0000:0b:00.0", "A100\\40GB");
  const std::string text = node_line(f);
  REQUIRE(text.back() == '\n');
  CHECK(text.find('\n') == text.size() - 1);
  const auto j = nlohmann::json::parse(text);
  CHECK(j["kind"] == "node");
  CHECK(j["addresses"] == nlohmann::json({"10.1.2.3", "192.168.7.1", "fd00::5", "2001:db8::1"}));
  REQUIRE(j["gpus"].size() == 3);
  CHECK(j["gpus"][1]["uuid"] == kUuidB);
  CHECK(j["gpus"][1]["model"] == "Tesla \"V100\"\t?");
  CHECK(j["gpus"][2]["model"] == "A100\\40GB");
  CHECK(j["gpus"][2]["bus"] == "0000:0b:00.0");
  CHECK(text.find("Tesla \\\"V100\\\"\\u0009?") != std::string::npos);
}

TEST_CASE("the node record: at most the caps; entries that would not fit are left out, the line stays whole") {
  mlsup_node_facts f{};
  for (int i = 0; i < 40; i++) mlsup_node_facts_add_address(&f, ("fd00:1234:5678:9abc:def0:1234:5678:" + std::to_string(i)).c_str());
  for (int i = 0; i < MLSUP_GPU_MAX; i++)
    f.gpus[f.ngpus++] = gpu(kUuidA, "0000:" + std::to_string(10 + i) + ":00.0", std::string(127, '\x01'));
  const std::string text = node_line(f);
  REQUIRE(text != "<-1>");
  CHECK(text.size() < MLSUP_NODE_LINE_MAX);
  const auto j = nlohmann::json::parse(text);
  CHECK(j["addresses"].size() == MLSUP_ADDRESS_MAX);
  CHECK(j["gpus"].size() > 0);
  CHECK(j["gpus"].size() < MLSUP_GPU_MAX);  // 127 control characters escape to 762 bytes each
  CHECK(j["time"] == 1733051230.5);
  f.ngpus = 99;  // more than the cap is never read past it
  CHECK(nlohmann::json::parse(node_line(f)).is_object());

  // A small buffer: the entries go, the line stays; too small even for that: -1.
  const std::string small = node_line(f, 160);
  REQUIRE(small != "<-1>");
  const auto s = nlohmann::json::parse(small);
  CHECK(s["addresses"].size() < 3);
  CHECK(s["gpus"].empty());
  const mlsup_node_facts none{};
  const auto fixed = node_line(none).size();
  CHECK(node_line(f, fixed + 1) == node_line(none));
  CHECK(node_line(none, fixed) == "<-1>");
}

TEST_CASE("gathering: the GPUs with a UUID from one folder each, by bus; a missing folder is no GPU") {
  TempDir t;
  t.plant("0000:0a:00.0", information("NVIDIA A100-SXM4-40GB", kUuidB, "0000:0a:00.0"));
  t.plant("0000:07:00.0", information(kH100, kUuidA, "0000:07:00.0"));
  t.plant("0000:08:00.0", "Model: \t\t NVIDIA H100 80GB HBM3\nBus Location: \t 0000:08:00.0\n");  // no UUID
  fs::create_directories(t.path / "0000:09:00.0");  // no information file
  std::ofstream(t.path / "stray") << "GPU UUID: GPU-stray\n";
  mlsup_node_facts f{};
  char msg[512];
  CHECK(mlsup_node_facts_gather(t.path.c_str(), &f, msg, sizeof(msg)) == 0);
  REQUIRE(f.ngpus == 2);
  CHECK(std::string(f.gpus[0].uuid) == kUuidA);
  CHECK(std::string(f.gpus[0].model) == kH100);
  CHECK(std::string(f.gpus[1].bus) == "0000:0a:00.0");
  for (int i = 0; i < f.naddresses; i++) {
    const std::string a = f.addresses[i];
    CHECK(a.rfind("127.", 0) != 0);
    CHECK(a != "::1");
    CHECK(a.rfind("fe80:", 0) != 0);
  }

  CHECK(mlsup_node_facts_gather((t.path / "missing").c_str(), &f, msg, sizeof(msg)) == 0);
  CHECK(f.ngpus == 0);
  CHECK(mlsup_node_facts_gather("", &f, msg, sizeof(msg)) == 0);
  CHECK(f.ngpus == 0);
  CHECK(mlsup_node_facts_gather((t.path / "stray").c_str(), &f, msg, sizeof(msg)) == -1);
  CHECK(std::string(msg).find("GPU info " + (t.path / "stray").string() + ": Not a directory") != std::string::npos);
}

TEST_CASE("gathering: at most 16 GPUs, the first by folder name") {
  TempDir t;
  for (int i = 0; i < 20; i++) {
    char bus[32];
    std::snprintf(bus, sizeof(bus), "0000:%02x:00.0", i + 1);
    t.plant(bus, information(kH100, "GPU-00000000-0000-0000-0000-0000000000" + std::to_string(10 + i), bus));
  }
  mlsup_node_facts f{};
  char msg[512];
  CHECK(mlsup_node_facts_gather(t.path.c_str(), &f, msg, sizeof(msg)) == 0);
  REQUIRE(f.ngpus == MLSUP_GPU_MAX);
  CHECK(std::string(f.gpus[0].bus) == "0000:01:00.0");
  CHECK(std::string(f.gpus[MLSUP_GPU_MAX - 1].bus) == "0000:10:00.0");
}
