#include "backend/api/dataset_scan.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace podium::api {

std::optional<std::string> local_path(const std::string& uri) {
  if (uri.rfind("file://", 0) == 0) return uri.substr(7);
  if (!uri.empty() && uri.front() == '/') return uri;
  return std::nullopt;
}

DatasetScan scan_dataset(const std::string& path, const std::string& format,
                         std::chrono::milliseconds budget) {
  DatasetScan out;
  // O_NONBLOCK so that opening a FIFO cannot block; the regular-file check follows.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    out.error = "cannot open " + path + ": " + std::strerror(errno);
    return out;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    out.error = path + " is not a regular file";
    return out;
  }
  out.bytes = static_cast<int64_t>(st.st_size);
  const auto deadline = std::chrono::steady_clock::now() + budget;

  if (format == "jsonl" || format == "text") {
    std::vector<char> buf(1 << 20);
    int64_t lines = 0;
    bool line_has_content = false;
    for (;;) {
      ssize_t n = ::read(fd, buf.data(), buf.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      for (ssize_t i = 0; i < n; ++i) {
        char c = buf[static_cast<size_t>(i)];
        if (c == '\n') {
          if (line_has_content) ++lines;
          line_has_content = false;
        } else if (c != '\r' && c != ' ' && c != '\t') {
          line_has_content = true;
        }
      }
      if (std::chrono::steady_clock::now() > deadline) {
        out.truncated = true;
        break;
      }
    }
    if (line_has_content) ++lines;
    if (!out.truncated) out.records = lines;
  } else if (format == "tfrecord") {
    // Each record: uint64 length, uint32 masked crc of length, data, uint32 masked crc of data.
    int64_t records = 0;
    off_t pos = 0;
    bool ok = true;
    while (pos < st.st_size) {
      uint64_t len = 0;
      if (::pread(fd, &len, sizeof len, pos) != static_cast<ssize_t>(sizeof len)) {
        ok = false;
        break;
      }
      const uint64_t next = static_cast<uint64_t>(pos) + 8 + 4 + len + 4;
      if (next > static_cast<uint64_t>(st.st_size)) {
        ok = false;
        break;
      }
      pos = static_cast<off_t>(next);
      ++records;
      if ((records & 0xffff) == 0 && std::chrono::steady_clock::now() > deadline) {
        out.truncated = true;
        break;
      }
    }
    if (ok && !out.truncated) out.records = records;
  }
  ::close(fd);
  return out;
}

}  // namespace podium::api
