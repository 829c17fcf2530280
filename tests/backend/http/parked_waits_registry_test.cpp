// The parked waits' registry on its own (no server): which waits a wake-up reaches, and that a
// wait that ended or unregistered is neither counted nor woken.
#include "backend/http/parked_waits.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace podium::http {
namespace {

struct Recorder {
  std::vector<std::string> woken;
  std::shared_ptr<ParkedWait> wait(const std::string& name) {
    auto w = std::make_shared<ParkedWait>();
    w->wake = [this, name] { woken.push_back(name); };
    return w;
  }
};

TEST(ParkedWaitRegistry, AWakeUpReachesItsKeyItsChannelOrEverything) {
  Recorder rec;
  ParkedWaits reg;
  auto a1 = rec.wait("a1"), a2 = rec.wait("a2"), b1 = rec.wait("b1");
  reg.add({"a:1"}, a1);
  reg.add({"a:2"}, a2);
  reg.add({"b:1"}, b1);
  EXPECT_EQ(reg.count(), 3);
  reg.wake("a", "2");
  EXPECT_EQ(rec.woken, (std::vector<std::string>{"a2"}));
  reg.wake("a", "2");  // woken once: the registration is gone
  EXPECT_EQ(rec.woken.size(), 1u);
  reg.wake("a", "*");
  EXPECT_EQ(rec.woken, (std::vector<std::string>{"a2", "a1"}));
  reg.wake("", "");
  EXPECT_EQ(rec.woken, (std::vector<std::string>{"a2", "a1", "b1"}));
  EXPECT_EQ(reg.count(), 0);
}

TEST(ParkedWaitRegistry, AChannelPrefixIsNotAnotherChannel) {
  Recorder rec;
  ParkedWaits reg;
  auto w = rec.wait("ab");
  reg.add({"ab:1"}, w);
  reg.wake("a", "*");
  EXPECT_TRUE(rec.woken.empty());
  EXPECT_EQ(reg.count(), 1);
}

TEST(ParkedWaitRegistry, EndedOrRemovedWaitsAreNeitherCountedNorWoken) {
  Recorder rec;
  ParkedWaits reg;
  auto kept = rec.wait("kept");
  auto removed = rec.wait("removed");
  reg.add({"c:1", "c:2"}, kept);
  reg.add({"c:1"}, removed);
  {
    auto ended = rec.wait("ended");
    reg.add({"c:1"}, ended);
  }  // its connection went away: only the registry's weak reference is left
  EXPECT_EQ(reg.count(), 3);  // kept counts once per key
  reg.remove({"c:1"}, removed.get());
  EXPECT_EQ(reg.count(), 2);
  reg.wake("c", "1");
  EXPECT_EQ(rec.woken, (std::vector<std::string>{"kept"}));
}

}  // namespace
}  // namespace podium::http
