#include <doctest/doctest.h>

#include "decide/gpu_identity.h"

using mlsup::decide::carried_gpus;
using mlsup::decide::Exclusion;
using mlsup::decide::gpu_words;
using mlsup::decide::moved_exclusions;
using mlsup::slurm::Gpu;

namespace {

const std::vector<Gpu> kNode{{"GPU-aaaa", "0000:07:00.0", "H100"}, {"GPU-bbbb", "0000:0A:00.0", "H100"}};

}  // namespace

TEST_CASE("GPU identity: the GPUs a line names, by UUID or by PCI address as the kernel and nvidia-smi print it") {
  CHECK(carried_gpus("CUDA error on GPU-bbbb", kNode) == std::vector<std::string>{"GPU-bbbb"});
  CHECK(carried_gpus("NVRM: Xid (PCI:0000:07:00): 79, pid=1234, GPU has fallen off the bus.", kNode) ==
        std::vector<std::string>{"GPU-aaaa"});
  CHECK(carried_gpus("NVRM: Xid (PCI:0000:0a:00): 48, ...", kNode) == std::vector<std::string>{"GPU-bbbb"});  // any case
  CHECK(carried_gpus("GPU 00000000:0A:00.0: uncorrectable ECC", kNode) == std::vector<std::string>{"GPU-bbbb"});
  CHECK(carried_gpus("Xid 79 on n1: fallen off the bus", kNode) == std::vector<std::string>{"GPU-aaaa", "GPU-bbbb"});  // none named: all
  CHECK(carried_gpus("", {}).empty());
}

TEST_CASE("GPU identity: an exclusion follows its GPUs only when all of them are in one other node") {
  const std::vector<Exclusion> ledger{{"n1", "Xid 79", 100, 1000, {"GPU-aaaa"}, ""}};
  auto moves = moved_exclusions(ledger, 200, {{"n2", {{"GPU-cccc", "0000:07:00.0", ""}}}, {"n3", {{"GPU-aaaa", "0000:3b:00.0", ""}}}});
  REQUIRE(moves.size() == 1);
  CHECK(moves[0].from == "n1");
  CHECK(moves[0].to == "n3");
  CHECK(moves[0].gpus == std::vector<std::string>{"GPU-aaaa"});
  CHECK(moves[0].until == 1000);
  CHECK(moves[0].reason == "Xid 79");
  CHECK(moved_exclusions(ledger, 1000, {{"n3", {{"GPU-aaaa", "", ""}}}}).empty());  // expired: nothing follows
  CHECK(moved_exclusions(ledger, 200, {{"n1", {{"GPU-aaaa", "", ""}}}}).empty());   // still where it was
  const std::vector<Exclusion> both{{"n1", "ECC", 100, 1000, {"GPU-aaaa", "GPU-bbbb"}, ""}};
  CHECK(moved_exclusions(both, 200, {{"n3", {{"GPU-aaaa", "", ""}}}}).empty());  // a part of them: not the node's
  CHECK(moved_exclusions(both, 200, {{"n9", {{"GPU-bbbb", "", ""}, {"GPU-aaaa", "", ""}}}}).size() == 1);  // the node renamed
  const std::vector<Exclusion> none{{"n1", "silent", 100, 1000, {}, ""}};
  CHECK(moved_exclusions(none, 200, {{"n3", {{"GPU-aaaa", "", ""}}}}).empty());  // no GPU known: nothing to follow
}

TEST_CASE("GPU identity: a move already made is not made again; one node's entries move once") {
  const std::vector<Exclusion> ledger{{"n1", "Xid 79", 100, 300, {"GPU-aaaa"}, ""},
                                      {"n1", "Xid 79 again", 150, 900, {"GPU-aaaa"}, ""},
                                      {"n3", "Xid 79", 250, 900, {"GPU-aaaa"}, ""}};
  CHECK(moved_exclusions(ledger, 200, {{"n3", {{"GPU-aaaa", "", ""}}}}).empty());  // n3 is excluded for it already
  auto moves = moved_exclusions({ledger[0], ledger[1]}, 200, {{"n3", {{"GPU-aaaa", "", ""}}}});
  REQUIRE(moves.size() == 1);
  CHECK(moves[0].until == 900);                // the latest expiry
  CHECK(moves[0].reason == "Xid 79 again");    // the newest entry's reason
}

TEST_CASE("GPU identity: in words, each UUID with its bus where known") {
  CHECK(gpu_words({"GPU-aaaa", "GPU-zzzz"}, kNode) == "GPU-aaaa (0000:07:00.0), GPU-zzzz");
  CHECK(gpu_words({}) == "");
}
