#include "engine/worker/line_splitter.h"

#include "engine/core/text/utf8.h"

namespace podium::worker {

void LineSplitter::feed(std::string_view bytes, std::vector<std::string>& out) {
  while (!bytes.empty()) {
    const size_t nl = bytes.find('\n');
    const std::string_view piece = bytes.substr(0, nl);
    if (!cutting_) {
      // Keep a few bytes beyond the limit: a "\r" to strip, or the tail of a character that
      // sanitizing may shorten. sanitize_utf8 cuts exactly afterwards.
      const size_t room = max_ + 4 > partial_.size() ? max_ + 4 - partial_.size() : 0;
      partial_.append(piece.substr(0, room));
      if (piece.size() > room) cutting_ = true;
    }
    if (nl == std::string_view::npos) return;
    emit(out);
    bytes.remove_prefix(nl + 1);
  }
}

void LineSplitter::finish(std::vector<std::string>& out) {
  if (!partial_.empty() || cutting_) emit(out);
}

void LineSplitter::emit(std::vector<std::string>& out) {
  if (!partial_.empty() && partial_.back() == '\r' && !cutting_) partial_.pop_back();
  out.push_back(core::sanitize_utf8(partial_, core::NulBytes::replace, max_));
  partial_.clear();
  cutting_ = false;
}

}  // namespace podium::worker
