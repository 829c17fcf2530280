// FingerprintedCache: answers found only under the fingerprint they were stored with, bounded by
// bytes, least recently used evicted first.
#include "backend/common/fingerprinted_cache.h"

#include <gtest/gtest.h>

#include <string>

namespace podium {
namespace {

TEST(FingerprintedCache, FindsAnAnswerOnlyUnderItsFingerprint) {
  FingerprintedCache cache(1000);
  EXPECT_FALSE(cache.find("run_a|1000", "v1"));
  cache.put("run_a|1000", "v1", "{\"steps\":[1]}");
  EXPECT_EQ(cache.find("run_a|1000", "v1"), "{\"steps\":[1]}");
  EXPECT_FALSE(cache.find("run_a|500", "v1"));
  // The run changed: the stale answer is not served, and is dropped.
  EXPECT_FALSE(cache.find("run_a|1000", "v2"));
  EXPECT_FALSE(cache.find("run_a|1000", "v1"));
  EXPECT_EQ(cache.bytes(), 0u);
  cache.put("run_a|1000", "v2", "new");
  cache.put("run_a|1000", "v2", "newer");  // replaced, counted once
  EXPECT_EQ(cache.find("run_a|1000", "v2"), "newer");
  EXPECT_EQ(cache.bytes(), std::string("run_a|1000newer").size());
}

TEST(FingerprintedCache, EvictsTheLeastRecentlyUsedWithinItsBound) {
  // Each entry: a 1-byte key and a 9-byte answer, 10 bytes; room for three.
  FingerprintedCache cache(30);
  cache.put("a", "f", std::string(9, 'a'));
  cache.put("b", "f", std::string(9, 'b'));
  cache.put("c", "f", std::string(9, 'c'));
  EXPECT_TRUE(cache.find("a", "f"));  // a is now the most recently used
  cache.put("d", "f", std::string(9, 'd'));
  EXPECT_FALSE(cache.find("b", "f"));
  EXPECT_TRUE(cache.find("a", "f"));
  EXPECT_TRUE(cache.find("c", "f"));
  EXPECT_TRUE(cache.find("d", "f"));
  EXPECT_EQ(cache.bytes(), 30u);
  // An answer larger than the bound is not kept and evicts nothing.
  cache.put("e", "f", std::string(40, 'e'));
  EXPECT_FALSE(cache.find("e", "f"));
  EXPECT_EQ(cache.bytes(), 30u);
}

}  // namespace
}  // namespace podium
