// The Podium-Signature header (backend/notify/signature.h) against RFC 4231's HMAC-SHA256 test
// vectors, so a receiver using any HMAC library computes the same value.
#include "backend/notify/signature.h"

#include <gtest/gtest.h>

namespace podium::notify {
namespace {

TEST(Signature, MatchesRfc4231Vectors) {
  // Test case 2: key "Jefe".
  EXPECT_EQ(hmac_sha256_hex("Jefe", "what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  // Test case 6: a 131-byte key, longer than a block (hashed first).
  EXPECT_EQ(hmac_sha256_hex(std::string(131, '\xaa'),
                            "Test Using Larger Than Block-Size Key - Hash Key First"),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

TEST(Signature, HeaderSignsTimestampAndBody) {
  const std::string body = R"({"id":"evt_1"})";
  const std::string h = signature_header("whsec_k", 1700000000, body);
  EXPECT_EQ(h, "t=1700000000,v1=" + hmac_sha256_hex("whsec_k", "1700000000." + body));
  EXPECT_NE(h, signature_header("whsec_k", 1700000001, body));
  EXPECT_NE(h, signature_header("whsec_other", 1700000000, body));
}

}  // namespace
}  // namespace podium::notify
