#include "engine/core/text/json_text.h"

#include <gtest/gtest.h>

namespace podium::core {
namespace {

TEST(JsonText, IsCompactJson) {
  const nlohmann::json j = {{"a", 1}, {"b", {true, nullptr, "x y"}}};
  EXPECT_EQ(json_text(j), R"({"a":1,"b":[true,null,"x y"]})");
  EXPECT_EQ(nlohmann::json::parse(json_text(j)), j);
}

// A rank's log line can carry any bytes; storing it must not throw (nlohmann's dump() would).
TEST(JsonText, ReplacesBytesThatAreNotUtf8) {
  const nlohmann::json j = {{"line", std::string("loss \xff\xfe ok \xc3\xa9")}};
  EXPECT_THROW((void)j.dump(), nlohmann::json::type_error);
  EXPECT_EQ(json_text(j), "{\"line\":\"loss \xef\xbf\xbd\xef\xbf\xbd ok \xc3\xa9\"}");
}

}  // namespace
}  // namespace podium::core
