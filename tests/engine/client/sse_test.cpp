#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "engine/client/http_client.h"

namespace podium::client {
namespace {

using Events = std::vector<std::pair<std::string, std::string>>;

// Feeds the stream in pieces of `chunk` bytes, to show that framing does not depend on how the
// bytes arrive.
Events parse(const std::string& stream, size_t chunk) {
  Events events;
  SseParser p;
  for (size_t i = 0; i < stream.size(); i += chunk) {
    p.feed(std::string_view(stream).substr(i, chunk),
           [&](const std::string& e, const std::string& d) {
             events.emplace_back(e, d);
             return true;
           });
  }
  return events;
}

TEST(SseParser, NamedAndDefaultEvents) {
  const std::string s = "event: log\ndata: {\"line\":\"a\"}\n\ndata: plain\n\n";
  const Events want{{"log", "{\"line\":\"a\"}"}, {"message", "plain"}};
  for (size_t chunk : {1u, 2u, 3u, 7u, 1000u})
    EXPECT_EQ(parse(s, chunk), want) << "chunk " << chunk;
}

TEST(SseParser, MultiLineDataJoinedWithNewline) {
  EXPECT_EQ(parse("data: a\ndata: b\ndata:c\n\n", 1), (Events{{"message", "a\nb\nc"}}));
}

TEST(SseParser, CommentsAndUnknownFieldsIgnored) {
  EXPECT_EQ(parse(": keep-alive\n\nid: 7\nretry: 1000\nfoo: bar\ndata: x\n\n", 4),
            (Events{{"message", "x"}}));
}

TEST(SseParser, EventWithoutDataIsNotDispatchedAndNameResets) {
  EXPECT_EQ(parse("event: ping\n\ndata: y\n\n", 5), (Events{{"message", "y"}}));
}

TEST(SseParser, EmptyDataLineDispatchesEmptyString) {
  EXPECT_EQ(parse("data:\n\n", 1), (Events{{"message", ""}}));
}

TEST(SseParser, CrLfAndCrLineEndingsEvenWhenSplit) {
  const std::string crlf = "event: a\r\ndata: 1\r\n\r\ndata: 2\r\r";
  const Events want{{"a", "1"}, {"message", "2"}};
  for (size_t chunk : {1u, 2u, 5u, 100u}) EXPECT_EQ(parse(crlf, chunk), want) << "chunk " << chunk;
}

TEST(SseParser, OnlyOneLeadingSpaceIsStripped) {
  EXPECT_EQ(parse("data:  two spaces\n\n", 3), (Events{{"message", " two spaces"}}));
}

TEST(SseParser, IncompleteEventAtEndIsNotDispatched) {
  EXPECT_EQ(parse("data: done\n\ndata: partial\n", 2), (Events{{"message", "done"}}));
}

TEST(SseParser, HandlerReturningFalseStopsFeeding) {
  SseParser p;
  int calls = 0;
  const bool more = p.feed("data: 1\n\ndata: 2\n\n", [&](const std::string&, const std::string&) {
    ++calls;
    return false;
  });
  EXPECT_FALSE(more);
  EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace podium::client
