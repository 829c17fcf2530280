// The SSRF guard's address classes (backend/notify/address_guard.h).
#include "backend/notify/address_guard.h"

#include <gtest/gtest.h>

namespace podium::notify {
namespace {

TEST(AddressGuard, RefusesEveryInternalClass) {
  for (const char* ip : {"127.0.0.1",
                         "127.255.0.9",
                         "::1",
                         "0.0.0.0",
                         "::",
                         "10.1.2.3",
                         "172.16.0.1",
                         "172.31.255.255",
                         "192.168.1.1",
                         "100.64.0.1",
                         "100.127.255.254",
                         "169.254.0.5",
                         "169.254.169.254",
                         "fe80::1",
                         "fc00::1",
                         "fd12:3456::1",
                         "fd00:ec2::254",
                         "::ffff:127.0.0.1",
                         "::ffff:169.254.169.254",
                         "::ffff:10.0.0.1",
                         "224.0.0.1",
                         "ff02::1",
                         "[::1]",
                         "64:ff9b::a9fe:a9fe"})
    EXPECT_TRUE(forbidden_address_reason(ip).has_value()) << ip;
}

TEST(AddressGuard, NamesTheReason) {
  EXPECT_EQ(forbidden_address_reason("169.254.169.254"), "cloud metadata server");
  EXPECT_EQ(forbidden_address_reason("fd00:ec2::254"), "cloud metadata server");
  EXPECT_EQ(forbidden_address_reason("127.0.0.1"), "loopback");
  EXPECT_EQ(forbidden_address_reason("100.64.1.1"), "carrier-grade NAT (RFC 6598)");
  EXPECT_EQ(forbidden_address_reason("192.168.0.1"), "private (RFC 1918)");
  EXPECT_EQ(forbidden_address_reason("not-an-ip"), "not an IP address");
}

TEST(AddressGuard, AcceptsPublicAddressesNextToTheRanges) {
  for (const char* ip :
       {"8.8.8.8", "172.15.255.255", "172.32.0.1", "100.63.255.255", "100.128.0.1",
        "169.253.255.255", "11.0.0.1", "2001:4860:4860::8888", "2606:4700::1111", "::ffff:8.8.8.8"})
    EXPECT_FALSE(forbidden_address_reason(ip).has_value()) << ip;
}

TEST(AddressGuard, MetadataNames) {
  EXPECT_TRUE(is_metadata_host_name("metadata.google.internal"));
  EXPECT_TRUE(is_metadata_host_name("METADATA.google.internal."));
  EXPECT_TRUE(is_metadata_host_name("metadata"));
  EXPECT_FALSE(is_metadata_host_name("metadata.example.com"));
}

TEST(AddressGuard, AllowListMatchesHostsAndAddresses) {
  AllowList allow({"Hooks.Internal", "127.0.0.1", "[::1]"});
  EXPECT_TRUE(allow.allows_host("hooks.internal"));
  EXPECT_TRUE(allow.allows_host("127.0.0.1"));
  EXPECT_FALSE(allow.allows_host("hooks.internal.evil.com"));
  EXPECT_TRUE(allow.allows_address("127.0.0.1"));
  EXPECT_TRUE(allow.allows_address("0:0::1"));
  EXPECT_FALSE(allow.allows_address("127.0.0.2"));
  EXPECT_FALSE(AllowList().allows_host("127.0.0.1"));
}

}  // namespace
}  // namespace podium::notify
