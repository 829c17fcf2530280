#include "backend/common/json_input.h"

#include <gtest/gtest.h>

#include <set>

namespace podium::http {
namespace {

Request json_request(std::string body) {
  Request r;
  r.method = "POST";
  r.headers.emplace_back("content-type", "application/json");
  r.body = std::move(body);
  return r;
}

TEST(JsonInput, MalformedBodiesAre400) {
  const std::vector<std::string> bodies = {"",      "{",        "[1,2]",
                                           "\"x\"", "{\"a\":}", std::string(100, '[')};
  for (const auto& body : bodies) {
    try {
      parse_json_object(json_request(body));
      FAIL() << "accepted: " << body;
    } catch (const Problem& p) {
      EXPECT_EQ(p.status, 400) << body;
    }
  }
}

TEST(JsonInput, WrongContentTypeIs415) {
  auto r = json_request("{}");
  r.headers[0].second = "text/plain";
  try {
    parse_json_object(r);
    FAIL();
  } catch (const Problem& p) {
    EXPECT_EQ(p.status, 415);
  }
}

TEST(JsonInput, CollectsEveryFieldError) {
  auto j = nlohmann::json::parse(
      R"({"name": 5, "num_slices": "two", "extra": true, "labels": {"a": 1}})");
  ObjectReader in(j);
  in.string("name", true);
  in.integer("num_slices", false, 1, 10);
  in.string("accelerator", true);
  in.object("labels", false, true);
  in.reject_unknown_fields();
  std::set<std::string> fields;
  for (const auto& e : in.errors()) fields.insert(e.field);
  EXPECT_EQ(fields,
            (std::set<std::string>{"name", "num_slices", "accelerator", "labels.a", "extra"}));
  try {
    in.finish();
    FAIL();
  } catch (const Problem& p) {
    EXPECT_EQ(p.status, 400);
    EXPECT_EQ(p.errors.size(), 5u);
    auto res = p.to_response();
    EXPECT_EQ(res.header("Content-Type").value(), "application/problem+json");
    auto body = nlohmann::json::parse(res.body);
    EXPECT_EQ(body["status"], 400);
    EXPECT_EQ(body["errors"].size(), 5u);
  }
}

TEST(JsonInput, RangesAndChoices) {
  auto j = nlohmann::json::parse(R"({"n": 0, "c": "blue", "f": 2.0, "big": 18446744073709551615})");
  ObjectReader in(j);
  EXPECT_FALSE(in.integer("n", true, 1, 5).has_value());
  EXPECT_FALSE(in.choice("c", true, {"red", "green"}).has_value());
  EXPECT_EQ(in.integer("f", true).value(), 2);
  EXPECT_FALSE(in.integer("big", true).has_value());
  EXPECT_EQ(in.errors().size(), 3u);
}

TEST(JsonInput, InvalidUtf8NeverBreaksProblemSerialisation) {
  Problem p = bad_request(std::string("bad \xff\xfe bytes"));
  auto res = p.to_response();
  EXPECT_FALSE(nlohmann::json::parse(res.body, nullptr, false).is_discarded());
  EXPECT_FALSE(valid_utf8("\xc3"));
  EXPECT_TRUE(valid_utf8("h\xc3\xa9llo"));
  // The strict check (engine/core/text/utf8.h): an overlong '/' is not UTF-8.
  EXPECT_FALSE(valid_utf8("\xc0\xaf"));
}

}  // namespace
}  // namespace podium::http
