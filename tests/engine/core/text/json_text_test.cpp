#include "engine/core/text/json_text.h"

#include "engine/core/text/utf8.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

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

// The access log's strings: whatever bytes a request path holds, the line parses and reads back
// as the path with its bytes that are not UTF-8 replaced (sanitize_utf8).
TEST(JsonText, AppendedStringsParseBackAsTheSanitizedText) {
  static constexpr char kControls[] = "nul \0 bell \a tab \t newline \n cr \r esc \x1b del \x7f";
  const std::vector<std::string> inputs = {
      "",
      "/api/v1/runs/run_0123",
      "quote \" backslash \\ slash /",
      std::string(kControls, sizeof kControls - 1),
      "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
      "bad \xff\xfe tail",
      "cut \xe2\x82",
      "\xc0\xaf overlong",
  };
  for (const auto& in : inputs) {
    std::string out = "x";
    append_json_string(out, in);
    ASSERT_EQ(out.front(), 'x');
    EXPECT_EQ(nlohmann::json::parse(out.substr(1)).get<std::string>(), sanitize_utf8(in)) << in;
  }
  std::string out;
  append_json_string(out, "a\"b\n\x01");
  EXPECT_EQ(out, R"("a\"b\n\u0001")");
}

}  // namespace
}  // namespace podium::core
