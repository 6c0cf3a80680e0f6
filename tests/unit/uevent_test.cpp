// Uevent: the kernel's hot-plug messages, parsed and written back, and what
// the kernel never sends refused.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

import hwaccel;

#include "timeline_builder.hpp"

namespace hwaccel {
namespace {

namespace fs = std::filesystem;
using testing::TimelineBuilder;
using testing::uevent_message;
using testing::write_text;

TEST(Uevent, ParsesAKernelMessage) {
  const std::string message = uevent_message("remove", "/devices/pci0000:ad/0000:ad:01.0/0000:ae:00.0",
                                             {{"SUBSYSTEM", "pci"}, {"PCI_ID", "10DE:2321"}, {"SEQNUM", "4711"}});
  auto e = parse_uevent(message);
  ASSERT_TRUE(e) << e.error().message;
  EXPECT_EQ(e->action, "remove");
  EXPECT_EQ(e->devpath, "/devices/pci0000:ad/0000:ad:01.0/0000:ae:00.0");
  EXPECT_EQ(e->get("PCI_ID"), "10DE:2321");
  EXPECT_EQ(e->get("SEQNUM"), "4711");
  EXPECT_EQ(e->get("DRIVER"), "");
  EXPECT_EQ(format_uevent(*e), message);
  // Without the trailing NUL too.
  EXPECT_TRUE(parse_uevent(std::string_view(message).substr(0, message.size() - 1)));
}

TEST(Uevent, RefusesWhatTheKernelDoesNotSend) {
  const std::vector<std::string> bad = {
      "",
      "no header at all",
      std::string("add@relative/path\0ACTION=add", 28),
      std::string("@/devices/x\0", 12),
      std::string("add@/devices/x\0NOEQUALS\0", 24),
      std::string("add@/devices/x\0ACTION=remove\0", 29),
      std::string("add@/devices/x\0=value\0", 22),
      std::string("add@/devices/x\0K\x01Y=v\0", 20),
      std::string("libudev\0\xfe\xed\xca\xfe", 12),
      "add@/devices/" + std::string(max_uevent_bytes, 'x'),
  };
  for (const auto& m : bad) EXPECT_FALSE(parse_uevent(m)) << text::excerpt(m);
  // A truncated message is what was sent up to the cut: still a valid prefix, or refused; never a crash.
  const std::string full = uevent_message("add", "/devices/pci0000:00/0000:00:02.0", {{"SUBSYSTEM", "pci"}});
  for (std::size_t n = 0; n < full.size(); ++n) (void)parse_uevent(std::string_view(full).substr(0, n));
}

}  // namespace
}  // namespace hwaccel
