// Server-Sent Events framing, separate from the socket code so that it is tested byte by byte
// without a server. Follows the WHATWG event-stream interpretation rules.

#include <string>
#include <string_view>

#include "engine/client/http_client.h"

namespace podium::client {

bool SseParser::feed(std::string_view bytes, const Handler& on_event) {
  size_t i = 0;
  while (i < bytes.size()) {
    // A CRLF split across two chunks: the '\r' already ended the line, the '\n' ends nothing.
    if (last_was_cr_) {
      last_was_cr_ = false;
      if (bytes[i] == '\n') {
        ++i;
        continue;
      }
    }
    const auto end = bytes.find_first_of("\r\n", i);
    if (end == std::string_view::npos) {
      partial_.append(bytes.substr(i));
      break;
    }
    partial_.append(bytes.substr(i, end - i));
    last_was_cr_ = bytes[end] == '\r';
    i = end + 1;
    const std::string complete = std::move(partial_);
    partial_.clear();
    if (!line(complete, on_event)) return false;
  }
  return true;
}

bool SseParser::line(std::string_view l, const Handler& on_event) {
  if (l.empty()) {
    // Blank line: dispatch. An event that carried no data line is dropped, as browsers do.
    const std::string name = event_.empty() ? std::string("message") : event_;
    event_.clear();
    if (!has_data_) return true;
    const std::string data = std::move(data_);
    data_.clear();
    has_data_ = false;
    return on_event(name, data);
  }
  if (l.front() == ':') return true;  // comment, typically a keep-alive
  const auto colon = l.find(':');
  const std::string_view field = l.substr(0, colon);
  std::string_view value =
      colon == std::string_view::npos ? std::string_view{} : l.substr(colon + 1);
  if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  if (field == "event") {
    event_ = std::string(value);
  } else if (field == "data") {
    if (has_data_) data_.push_back('\n');
    data_.append(value);
    has_data_ = true;
  }
  // "id" and "retry" only matter to a reconnecting browser; unknown fields are ignored by spec.
  return true;
}

}  // namespace podium::client
