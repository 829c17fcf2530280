// engine/client/http_client.h promises that request() "throws nothing: a transport failure comes
// back as HttpError". The integration harness relies on that; these are the cases it met.
#include <gtest/gtest.h>

#include "engine/client/http_client.h"

namespace podium::it {
namespace {

TEST(HttpClientLimits, AHeaderValueOver64KiBIsAnErrorNotAnException) {
  client::HttpClient http("http://127.0.0.1:9");  // nothing listens there; the request never leaves
  client::RequestOptions o;
  o.timeout = std::chrono::milliseconds(2000);
  o.headers = {{"X-Padding", std::string(64 * 1024, 'h')}};
  client::HttpClient::Result r;
  EXPECT_NO_THROW(r = http.request("GET", "/healthz", {}, o));
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(r.error.has_value());
}

}  // namespace
}  // namespace podium::it
