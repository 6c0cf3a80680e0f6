// The shared text primitives, PCI addresses and PCIe link arithmetic.
#include <gtest/gtest.h>

#include <bitset>
#include <cstdint>
#include <optional>
#include <climits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

import hwaccel;

namespace {

using namespace hwaccel;

TEST(Text, TrimRemovesBlanksAndNulPadding) {
  EXPECT_EQ(text::trim(std::string_view("  0x1002\n\0\0\0", 12)), "0x1002");
  EXPECT_EQ(text::trim(""), "");
}

TEST(Text, NumbersParseStrictly) {
  EXPECT_EQ(text::parse_u64("42"), 42u);
  EXPECT_EQ(text::parse_u64(" 42 \n"), 42u);
  EXPECT_FALSE(text::parse_u64("42x"));
  EXPECT_FALSE(text::parse_u64("-1"));
  EXPECT_FALSE(text::parse_u64("99999999999999999999999"));
  EXPECT_EQ(text::parse_hex("0x10DE"), 0x10deu);
  EXPECT_EQ(text::parse_hex("10de"), 0x10deu);
  EXPECT_EQ(text::parse_double("16.0"), 16.0);
  EXPECT_FALSE(text::parse_double("nan"));
  EXPECT_FALSE(text::parse_double("[N/A]"));
}

TEST(Text, NumbersInKernelNamesHaveOneSpelling) {
  EXPECT_EQ(text::parse_name_number("0"), 0u);
  EXPECT_EQ(text::parse_name_number("12"), 12u);
  EXPECT_EQ(text::parse_name_number("4294967295"), 4294967295u);
  for (const char* other : {"", "00", "012", "1 ", " 1", "+1", "-1", "1a", "4294967296"})
    EXPECT_FALSE(text::parse_name_number(other)) << '"' << other << '"';
}

TEST(Text, MemorySizes) {
  EXPECT_EQ(text::parse_memory_size("81559 MiB"), 81559ull * 1024 * 1024);
  EXPECT_EQ(text::parse_memory_size("16318480 kB"), 16318480ull * 1024);
  EXPECT_EQ(text::parse_memory_size("16 GB"), 16ull << 30);
  EXPECT_FALSE(text::parse_memory_size("16 parsecs"));
  EXPECT_FALSE(text::parse_memory_size("99999999999 TB"));
}

TEST(Text, Cpulists) {
  EXPECT_EQ(text::cpulist_count("0-3,8,10-11"), 7u);
  EXPECT_EQ(text::cpulist_count("0"), 1u);
  EXPECT_FALSE(text::cpulist_count("3-1"));
  EXPECT_FALSE(text::cpulist_count("a-b"));
  EXPECT_FALSE(text::cpulist_count("0-99999999"));
}

TEST(Text, CatFormatsWithoutLocale) {
  EXPECT_EQ(text::cat("a", 1, ':', 2.5, std::string("z"), std::uint64_t{7}), "a1:2.5z7");
  EXPECT_EQ(text::excerpt(std::string("ab\x01\xff", 4)), "ab??");
  // The longest numbers, and pieces of every kind together.
  EXPECT_EQ(text::cat(std::int64_t{INT64_MIN}, ' ', std::uint64_t{UINT64_MAX}, ' ', -2.2250738585072014e-308),
            "-9223372036854775808 18446744073709551615 -2.2250738585072014e-308");
  EXPECT_EQ(text::cat(), "");
  const char* pointer = "pointer";
  EXPECT_EQ(text::cat(std::string_view("view"), pointer, std::string(40, 'x')), "viewpointer" + std::string(40, 'x'));
}

TEST(Text, WordsSplitOnAnyBlank) {
  using V = std::vector<std::string_view>;
  EXPECT_EQ(text::words(""), V{});
  EXPECT_EQ(text::words(" \t\n "), V{});
  EXPECT_EQ(text::words("a"), V{"a"});
  EXPECT_EQ(text::words("  a\tbb  ccc\n"), (V{"a", "bb", "ccc"}));
  const auto line = text::words("36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue");
  ASSERT_EQ(line.size(), 11u);
  EXPECT_EQ(line[3], "/mnt1");
  EXPECT_EQ(line.back(), "rw,errors=continue");
  // More words than the room reserved for a line.
  std::string many;
  for (int i = 0; i < 100; ++i) many += "w" + std::to_string(i) + (i % 3 ? " " : "\t\n");
  const auto all = text::words(many);
  ASSERT_EQ(all.size(), 100u);
  EXPECT_EQ(all[99], "w99");
}

TEST(PciAddressTest, ParsesToolAndSysfsForms) {
  const auto a = PciAddress::parse("00000000:17:00.0");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->to_string(), "0000:17:00.0");
  EXPECT_EQ(PciAddress::parse("0000:AB:1f.7")->to_string(), "0000:ab:1f.7");
  EXPECT_EQ(PciAddress::parse("c2:00.1")->to_string(), "0000:c2:00.1");
  EXPECT_EQ(PciAddress::parse("10000:01:00.0")->to_string(), "10000:01:00.0");
  EXPECT_FALSE(PciAddress::parse("0000:17:00"));
  EXPECT_FALSE(PciAddress::parse("0000:17:20.0"));  // device is 5 bits
  EXPECT_FALSE(PciAddress::parse("0000:17:00.8"));  // function is 3 bits
  EXPECT_FALSE(PciAddress::parse("zz:00.0"));
  EXPECT_LT(*PciAddress::parse("0000:17:00.0"), *PciAddress::parse("0000:2a:00.0"));
}

TEST(PcieLinkTest, GenerationsAndBandwidth) {
  PcieLink link{16.0, 32.0, 16, 16};
  EXPECT_EQ(link.current_generation(), 4u);
  EXPECT_EQ(link.max_generation(), 5u);
  EXPECT_NEAR(*link.current_bandwidth_gbps(), 31.51, 0.01);
  EXPECT_NEAR(*link.max_bandwidth_gbps(), 63.02, 0.01);
  PcieLink gen1{2.5, 2.5, 1, 1};
  EXPECT_NEAR(*gen1.max_bandwidth_gbps(), 0.25, 1e-9);
  EXPECT_FALSE(PcieLink{}.max_bandwidth_gbps());
}

// Every enum parser follows one convention: Result<E>, and an unknown name is
// invalid_input naming what was asked for and every name it could have been.
TEST(Names, EveryEnumParserRefusesAnUnknownNameTheSameWay) {
  const std::vector<std::pair<Error, std::string>> refused = {
      {parse_backend("nvidia").error(), "unknown backend 'nvidia' (one of: cpu, cuda, "},
      {parse_family("fpga").error(), "unknown device family 'fpga' (one of: cpu, gpu, npu, tpu, asic)"},
      {parse_memory_kind("hbm").error(), "unknown memory kind 'hbm' (one of: dedicated, unified, carve_out)"},
      {parse_link_kind("infinityfabric").error(), "unknown link kind 'infinityfabric' (one of: nvlink, xgmi, "},
      {parse_storage_kind("tape").error(), "unknown storage kind 'tape' (one of: nvme, ssd, "},
      {parse_warning_kind("oops").error(), "unknown warning kind 'oops' (one of: "},
      {parse_cloud_provider("oracle").error(), "unknown cloud provider 'oracle' (one of: aws, gcp, azure)"},
      {parse_instance_interconnect("ib").error(), "unknown interconnect 'ib' (one of: pcie, nvlink, nvswitch, "},
      {parse_node_error_kind("late").error(), "unknown node error kind 'late' (one of: "},
      {parse_log_level("loud").error(), "unknown log level 'loud' (one of: trace, debug, info, warn)"},
  };
  for (const auto& [error, opening] : refused) {
    EXPECT_EQ(error.kind, ErrorKind::invalid_input) << error.message;
    EXPECT_TRUE(error.message.starts_with(opening)) << error.message;
    EXPECT_TRUE(error.message.ends_with(")")) << error.message;
  }
  EXPECT_EQ(*parse_log_level("warning"), LogLevel::warn);
  EXPECT_EQ(*parse_cloud_provider(" Google "), CloudProvider::gcp);
}

TEST(Names, BackendsRoundTrip) {
  for (Backend b : all_backends) EXPECT_EQ(parse_backend(to_string(b)).value_or(Backend::cpu), b) << to_string(b);
  EXPECT_EQ(to_string(Backend::aws_neuron), "aws_neuron");
  EXPECT_FALSE(parse_backend("nvidia"));
  EXPECT_EQ(*parse_backend_list("cuda, rocm"), (std::bitset<backend_count>{}.set(1).set(2)));
  EXPECT_TRUE(parse_backend_list("all")->all());
  EXPECT_TRUE(parse_backend_list("")->none());
  auto bad = parse_backend_list("cuda,nvidia");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("nvidia"), std::string::npos);
  EXPECT_NE(bad.error().message.find("aws_neuron"), std::string::npos);
}

TEST(Names, NaturalOrder) {
  EXPECT_TRUE(natural_less("card2", "card10"));
  EXPECT_FALSE(natural_less("card10", "card2"));
  EXPECT_TRUE(natural_less("card1", "card1-DP-1"));
  EXPECT_TRUE(natural_less("cuda:9", "cuda:10"));
}

}  // namespace
