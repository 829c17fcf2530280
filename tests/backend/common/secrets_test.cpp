#include "backend/common/secrets.h"

#include <gtest/gtest.h>

#include <set>

#include "backend/common/cursor.h"

namespace podium {
namespace {

class SecretsTest : public ::testing::Test {
 protected:
  void SetUp() override { secrets::init(); }
};

TEST_F(SecretsTest, TokensCarry32RandomBytesAndDiffer) {
  std::set<std::string> seen;
  for (int i = 0; i < 100; ++i) {
    auto t = secrets::new_token("pdm_");
    ASSERT_EQ(t.rfind("pdm_", 0), 0u);
    auto raw = secrets::base64url_decode(t.substr(4));
    ASSERT_TRUE(raw.has_value());
    EXPECT_EQ(raw->size(), 32u);
    seen.insert(t);
  }
  EXPECT_EQ(seen.size(), 100u);
}

TEST_F(SecretsTest, TokenHashIsSha256Hex) {
  // SHA-256("abc"), FIPS 180-2 test vector.
  EXPECT_EQ(secrets::token_hash("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST_F(SecretsTest, PasswordsVerifyOnlyWithTheRightPassword) {
  auto h = secrets::hash_password("correct horse");
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(h->rfind("$argon2id$", 0), 0u);
  EXPECT_TRUE(secrets::verify_password(*h, "correct horse"));
  EXPECT_FALSE(secrets::verify_password(*h, "correct horsE"));
  EXPECT_FALSE(secrets::verify_password("garbage", "correct horse"));
}

TEST_F(SecretsTest, PasswordHashesUseArgon2idWithLibsodiumsModerateLimits) {
  auto h = secrets::hash_password("correct horse");
  ASSERT_TRUE(h.has_value());
  // crypto_pwhash_MEMLIMIT_MODERATE is 256 MiB (m is in KiB), OPSLIMIT_MODERATE 3 passes.
  EXPECT_NE(h->find("$m=262144,t=3,"), std::string::npos) << *h;
  EXPECT_FALSE(secrets::password_needs_rehash(*h));
  // A hash made with the interactive limits (64 MiB, 2 passes) is due for a fresh one.
  const std::string interactive =
      "$argon2id$v=19$m=65536,t=2,p=1$c29tZXNhbHRzb21lc2FsdA$"
      "aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g";
  EXPECT_TRUE(secrets::password_needs_rehash(interactive));
  EXPECT_TRUE(secrets::password_needs_rehash("garbage"));
}

TEST_F(SecretsTest, CursorsRoundTripAndRejectTampering) {
  const std::string key = "k1";
  auto c = http::encode_cursor(key, {{"s", 42}});
  auto back = http::decode_cursor(key, c);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ((*back)["s"], 42);

  std::string flipped = c;
  flipped[2] = flipped[2] == 'A' ? 'B' : 'A';
  EXPECT_FALSE(http::decode_cursor(key, flipped).has_value());
  EXPECT_FALSE(http::decode_cursor("other-key", c).has_value());
  EXPECT_FALSE(http::decode_cursor(key, "garbage").has_value());
  EXPECT_FALSE(http::decode_cursor(key, "").has_value());
  EXPECT_FALSE(http::decode_cursor(key, std::string(10000, 'a')).has_value());
}

}  // namespace
}  // namespace podium
