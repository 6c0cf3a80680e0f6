// The shared text primitives, PCI addresses and PCIe link arithmetic.
#include <gtest/gtest.h>

#include <bitset>
#include <cstdint>
#include <optional>
#include <string>

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

TEST(Names, BackendsRoundTrip) {
  for (Backend b : all_backends) EXPECT_EQ(parse_backend(to_string(b)), b);
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
