#include "engine/core/logs/checkpoint_lines.h"

#include "engine/core/text/ascii.h"

#include <cctype>
#include <charconv>

namespace podium::core {

namespace {

// The integer right after `at` in `s` (spaces skipped).
std::optional<std::int64_t> integer_after(std::string_view s, size_t at) {
  while (at < s.size() && s[at] == ' ') ++at;
  size_t end = at;
  while (end < s.size() && std::isdigit(static_cast<unsigned char>(s[end]))) ++end;
  if (end == at || end - at > 15) return std::nullopt;
  std::int64_t v = 0;
  std::from_chars(s.data() + at, s.data() + end, v);
  return v;
}

// "gs://b/run/checkpoints/100" -> 100 (a finished step directory is a plain number).
std::optional<std::int64_t> trailing_step(std::string_view path) {
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  const auto slash = path.rfind('/');
  const std::string_view last = slash == std::string_view::npos ? path : path.substr(slash + 1);
  if (last.empty()) return std::nullopt;
  for (char c : last)
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
  return integer_after(last, 0);
}

}  // namespace

std::optional<CheckpointLine> parse_checkpoint_line(std::string_view message) noexcept {
  try {
    if (message.size() > 4096) return std::nullopt;
    const std::string m = ascii_lower(message);
    if (m.find("checkpoint") == std::string::npos && m.find("restoring") == std::string::npos)
      return std::nullopt;
    if (auto at = m.find("saved a checkpoint at step"); at != std::string::npos) {
      CheckpointLine c;
      c.step = integer_after(m, at + 26);
      if (c.step) return c;
    }
    if (auto at = m.find("finished saving checkpoint to"); at != std::string::npos) {
      const auto open = message.find('`', at);
      const auto close = open == std::string_view::npos ? open : message.find('`', open + 1);
      if (close != std::string_view::npos) {
        CheckpointLine c;
        c.path = std::string(message.substr(open + 1, close - open - 1));
        c.step = trailing_step(c.path);
        return c;
      }
    }
    if (m.find("restoring") != std::string::npos) {
      // "restoring from this run's directory step 100", "... latest step 100",
      // "Restoring checkpoint from step 100".
      const auto at = m.rfind("step");
      if (at != std::string::npos) {
        CheckpointLine c;
        c.kind = CheckpointLine::Kind::restored;
        c.step = integer_after(m, at + 4);
        if (c.step) return c;
      }
    }
  } catch (...) {
  }
  return std::nullopt;
}

bool is_remote_output(std::string_view path) {
  const auto scheme = path.find("://");
  if (scheme == std::string_view::npos || scheme == 0) return false;
  return path.substr(0, scheme) != "file";
}

}  // namespace podium::core
