#include "engine/bundle/archive.h"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <optional>
#include <set>

namespace podium::bundle {

namespace {

constexpr size_t kBlock = 512;
constexpr size_t kMaxPaxBytes = 64 * 1024;
constexpr size_t kMaxPathBytes = 4096;

// Header field offsets and sizes (POSIX.1-1988 ustar).
struct Field {
  size_t offset;
  size_t size;
};
constexpr Field kName{0, 100}, kMode{100, 8}, kUid{108, 8}, kGid{116, 8}, kSize{124, 12},
    kMtime{136, 12}, kChecksum{148, 8}, kType{156, 1}, kLinkname{157, 100}, kMagic{257, 6},
    kVersion{263, 2}, kPrefix{345, 155};

std::string_view field(const char* block, Field f) {
  std::string_view v(block + f.offset, f.size);
  const auto nul = v.find('\0');
  return nul == std::string_view::npos ? v : v.substr(0, nul);
}

std::optional<std::uint64_t> parse_octal(std::string_view v) {
  while (!v.empty() && (v.front() == ' ')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == ' ' || v.back() == '\0')) v.remove_suffix(1);
  if (v.empty()) return 0;
  std::uint64_t n = 0;
  for (char c : v) {
    if (c < '0' || c > '7') return std::nullopt;
    if (n > (std::uint64_t{1} << 60)) return std::nullopt;
    n = n * 8 + static_cast<std::uint64_t>(c - '0');
  }
  return n;
}

void put_octal(char* block, Field f, std::uint64_t value) {
  // size-1 digits, zero padded, then NUL.
  std::string digits(f.size - 1, '0');
  for (size_t i = digits.size(); i-- > 0 && value;) {
    digits[i] = static_cast<char>('0' + (value & 7));
    value >>= 3;
  }
  std::memcpy(block + f.offset, digits.data(), digits.size());
  block[f.offset + f.size - 1] = '\0';
}

unsigned header_checksum(const char* block) {
  unsigned sum = 0;
  for (size_t i = 0; i < kBlock; ++i) {
    const bool in_field = i >= kChecksum.offset && i < kChecksum.offset + kChecksum.size;
    sum += in_field ? ' ' : static_cast<unsigned char>(block[i]);
  }
  return sum;
}

std::vector<std::string_view> segments(std::string_view path) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (;;) {
    const auto slash = path.find('/', start);
    out.push_back(path.substr(start, slash == std::string_view::npos ? slash : slash - start));
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return out;
}

std::string pax_record(std::string_view key, std::string_view value) {
  // "LEN key=value\n" where LEN counts the whole record including its own digits.
  const size_t body = 1 + key.size() + 1 + value.size() + 1;
  size_t len = body + 1;
  while (std::to_string(len).size() + body != len) len = std::to_string(len).size() + body;
  return std::to_string(len) + " " + std::string(key) + "=" + std::string(value) + "\n";
}

std::map<std::string, std::string> parse_pax(std::string_view data) {
  std::map<std::string, std::string> out;
  while (!data.empty()) {
    const auto space = data.find(' ');
    if (space == std::string_view::npos || space == 0 || space > 8)
      throw BundleError("malformed pax header record");
    std::uint64_t len = 0;
    for (char c : data.substr(0, space)) {
      if (c < '0' || c > '9') throw BundleError("malformed pax header record length");
      len = len * 10 + static_cast<std::uint64_t>(c - '0');
    }
    if (len <= space + 2 || len > data.size() || data[len - 1] != '\n')
      throw BundleError("malformed pax header record");
    const auto record = data.substr(space + 1, len - space - 2);
    const auto eq = record.find('=');
    if (eq == std::string_view::npos) throw BundleError("pax header record without '='");
    out[std::string(record.substr(0, eq))] = std::string(record.substr(eq + 1));
    data.remove_prefix(len);
  }
  return out;
}

std::string lexical_parent(std::string_view path) {
  const auto slash = path.rfind('/');
  return slash == std::string_view::npos ? std::string() : std::string(path.substr(0, slash));
}

}  // namespace

std::string check_entry_path(std::string_view path) {
  if (path.empty()) return "an empty path";
  if (path.size() > kMaxPathBytes) return "a path longer than 4096 bytes";
  if (path.front() == '/') return "an absolute path: " + std::string(path);
  if (path.find('\0') != std::string_view::npos) return "a path with a NUL byte";
  for (auto seg : segments(path)) {
    if (seg.empty()) return "a path with an empty segment: " + std::string(path);
    if (seg == "." || seg == "..") return "a path with '.' or '..': " + std::string(path);
    if (seg.size() > 255) return "a path segment longer than 255 bytes";
  }
  return {};
}

std::string check_link_target(std::string_view path, std::string_view target) {
  if (target.empty()) return "an empty symbolic link target at " + std::string(path);
  if (target.size() > kMaxPathBytes) return "a symbolic link target longer than 4096 bytes";
  if (target.front() == '/')
    return "a symbolic link to an absolute path: " + std::string(path) + " -> " +
           std::string(target);
  if (target.find('\0') != std::string_view::npos) return "a symbolic link target with a NUL";
  // Resolve lexically from the link's directory; it must never climb above the tree's root.
  std::vector<std::string_view> stack;
  const std::string parent = lexical_parent(path);
  if (!parent.empty())
    for (auto seg : segments(parent)) stack.push_back(seg);
  // `parent` is owned above; the views into it stay valid for this function.
  for (auto seg : segments(target)) {
    if (seg.empty() || seg == ".") continue;
    if (seg == "..") {
      if (stack.empty())
        return "a symbolic link that leaves the bundle: " + std::string(path) + " -> " +
               std::string(target);
      stack.pop_back();
    } else {
      stack.push_back(seg);
    }
  }
  return {};
}

// ---------------------------------------------------------------------------------------------
// Writer

struct BundleWriter::Deflater {
  z_stream z{};
  std::string out;
  bool done = false;
  std::uint64_t max_out = 0;
  Deflater(std::uint64_t max) : max_out(max) {
    // windowBits 15 + 16: a gzip wrapper; zlib writes mtime 0 and no name, so it is canonical.
    if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
      throw BundleError("zlib: cannot start compression");
  }
  ~Deflater() { deflateEnd(&z); }
  void write(std::string_view in, int flush) {
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    z.avail_in = static_cast<uInt>(in.size());
    std::array<char, 65536> buf;
    int rc = Z_OK;
    do {
      z.next_out = reinterpret_cast<Bytef*>(buf.data());
      z.avail_out = static_cast<uInt>(buf.size());
      rc = deflate(&z, flush);
      if (rc == Z_STREAM_ERROR) throw BundleError("zlib: compression failed");
      out.append(buf.data(), buf.size() - z.avail_out);
      if (out.size() > max_out)
        throw BundleError("the compressed bundle exceeds the limit of " + std::to_string(max_out) +
                          " bytes");
    } while (z.avail_out == 0 || (flush == Z_FINISH && rc != Z_STREAM_END));
  }
};

BundleWriter::BundleWriter(BundleLimits limits)
    : limits_(limits), deflater_(std::make_unique<Deflater>(limits.max_compressed_bytes)) {}

BundleWriter::~BundleWriter() = default;

void BundleWriter::add_raw(std::string_view bytes) {
  // Feed in pieces: avail_in is 32-bit.
  constexpr size_t kPiece = 1 << 20;
  for (size_t at = 0; at < bytes.size(); at += kPiece)
    deflater_->write(bytes.substr(at, kPiece), Z_NO_FLUSH);
}

void BundleWriter::add_header(std::string_view path, char type, std::uint64_t size, unsigned mode,
                              std::string_view link_target) {
  std::string pax;
  if (path.size() > kName.size - 1) pax += pax_record("path", path);
  if (link_target.size() > kLinkname.size - 1) pax += pax_record("linkpath", link_target);
  if (!pax.empty()) {
    add_header("././@PaxHeader", 'x', pax.size(), 0644, {});
    pax.resize((pax.size() + kBlock - 1) / kBlock * kBlock, '\0');
    add_raw(pax);
  }
  std::array<char, kBlock> b{};
  std::copy_n(path.begin(), std::min(path.size(), kName.size - 1),
              b.begin() + static_cast<std::ptrdiff_t>(kName.offset));
  put_octal(b.data(), kMode, mode);
  put_octal(b.data(), kUid, 0);
  put_octal(b.data(), kGid, 0);
  put_octal(b.data(), kSize, size);
  put_octal(b.data(), kMtime, 0);
  b[kType.offset] = type;
  // copy_n, not memcpy: an empty view's data() may be null.
  std::copy_n(link_target.begin(), std::min(link_target.size(), kLinkname.size - 1),
              b.begin() + static_cast<std::ptrdiff_t>(kLinkname.offset));
  std::memcpy(b.data() + kMagic.offset, "ustar", 6);
  std::memcpy(b.data() + kVersion.offset, "00", 2);
  // Checksum: six octal digits, NUL, space.
  const unsigned sum = header_checksum(b.data());
  std::string digits(6, '0');
  unsigned v = sum;
  for (size_t i = 6; i-- > 0; v >>= 3) digits[i] = static_cast<char>('0' + (v & 7));
  std::memcpy(b.data() + kChecksum.offset, digits.data(), 6);
  b[kChecksum.offset + 6] = '\0';
  b[kChecksum.offset + 7] = ' ';
  add_raw(std::string_view(b.data(), b.size()));
}

void BundleWriter::add_file(std::string_view path, bool executable, std::string_view content) {
  if (auto why = check_entry_path(path); !why.empty()) throw BundleError("cannot pack " + why);
  if (summary_.entries + 1 > limits_.max_entries)
    throw BundleError("the bundle has more than " + std::to_string(limits_.max_entries) + " files");
  if (summary_.uncompressed_bytes + content.size() > limits_.max_uncompressed_bytes)
    throw BundleError("the bundle's files add up to more than " +
                      std::to_string(limits_.max_uncompressed_bytes) + " bytes");
  paths_.emplace_back(path);
  add_header(path, '0', content.size(), executable ? 0755 : 0644, {});
  add_raw(content);
  if (const auto pad = content.size() % kBlock) add_raw(std::string(kBlock - pad, '\0'));
  ++summary_.entries;
  summary_.uncompressed_bytes += content.size();
}

void BundleWriter::add_symlink(std::string_view path, std::string_view target) {
  if (auto why = check_entry_path(path); !why.empty()) throw BundleError("cannot pack " + why);
  if (auto why = check_link_target(path, target); !why.empty())
    throw BundleError("cannot pack " + why);
  if (summary_.entries + 1 > limits_.max_entries)
    throw BundleError("the bundle has more than " + std::to_string(limits_.max_entries) + " files");
  paths_.emplace_back(path);
  add_header(path, '2', 0, 0777, target);
  ++summary_.entries;
}

std::string BundleWriter::finish() {
  std::sort(paths_.begin(), paths_.end());
  if (std::adjacent_find(paths_.begin(), paths_.end()) != paths_.end())
    throw BundleError("the bundle names a path twice");
  deflater_->write(std::string(2 * kBlock, '\0'), Z_FINISH);
  return std::move(deflater_->out);
}

// ---------------------------------------------------------------------------------------------
// Reader

namespace {

class TarReader {
 public:
  TarReader(const BundleLimits& limits, const EntryHandler& on_entry, const DataHandler& on_data)
      : limits_(limits), on_entry_(on_entry), on_data_(on_data) {}

  // Consumes as much of `buf` as forms whole units; leaves the rest.
  void feed(std::string& buf) {
    size_t at = 0;
    for (;;) {
      if (state_ == State::data) {
        const auto n = static_cast<size_t>(std::min<std::uint64_t>(remaining_, buf.size() - at));
        if (n) {
          if (on_data_) on_data_(std::string_view(buf).substr(at, n));
          at += n;
          remaining_ -= n;
        }
        if (remaining_ > 0) break;
        state_ = State::padding;
        remaining_ = padding_;
      }
      if (state_ == State::padding || state_ == State::skip) {
        const auto n = static_cast<size_t>(std::min<std::uint64_t>(remaining_, buf.size() - at));
        at += n;
        remaining_ -= n;
        if (remaining_ > 0) break;
        state_ = State::header;
      }
      if (state_ == State::pax) {
        if (buf.size() - at < remaining_) break;
        pax_ = parse_pax(std::string_view(buf).substr(at, pax_size_));
        at += remaining_;
        remaining_ = 0;
        state_ = State::header;
      }
      if (state_ == State::end) {
        for (size_t i = at; i < buf.size(); ++i)
          if (buf[i] != '\0') throw BundleError("data after the end of the archive");
        at = buf.size();
        break;
      }
      if (state_ == State::header) {
        if (buf.size() - at < kBlock) break;
        header(buf.data() + at);
        at += kBlock;
      }
    }
    buf.erase(0, at);
  }

  BundleSummary finish() {
    if (state_ != State::end) throw BundleError("the archive is truncated");
    // A path may not pass through a file or a symbolic link of the same archive: the unpacker
    // would otherwise write outside the tree it is filling.
    for (const auto& [path, kind] : kinds_) {
      for (auto slash = path.find('/'); slash != std::string::npos;
           slash = path.find('/', slash + 1)) {
        auto it = kinds_.find(path.substr(0, slash));
        if (it != kinds_.end() && it->second != 'd')
          throw BundleError("the archive puts " + path + " under a file or symbolic link");
      }
    }
    return summary_;
  }

 private:
  enum class State { header, data, padding, skip, pax, end };

  void header(const char* b) {
    if (std::all_of(b, b + kBlock, [](char c) { return c == '\0'; })) {
      state_ = State::end;  // the first zero block ends the archive; the rest must be zeros
      return;
    }
    const auto stored = parse_octal(field(b, kChecksum));
    if (!stored || *stored != header_checksum(b))
      throw BundleError("a tar header has a bad checksum (entry " +
                        std::to_string(summary_.entries + 1) + ")");
    if (field(b, kMagic).substr(0, 5) != "ustar")
      throw BundleError("not a POSIX (ustar) tar archive");
    const auto size = parse_octal(field(b, kSize));
    if (!size) throw BundleError("a tar header has a malformed size");
    const char type = b[kType.offset];
    if (type == 'x' || type == 'g') {
      if (*size > kMaxPaxBytes) throw BundleError("a pax header over 64 KiB");
      if (type == 'g') {
        state_ = State::skip;
        remaining_ = round_up(*size);
        return;
      }
      state_ = State::pax;
      pax_size_ = static_cast<size_t>(*size);
      remaining_ = round_up(*size);
      return;
    }
    std::string path;
    if (auto it = pax_.find("path"); it != pax_.end()) {
      path = it->second;
    } else {
      const auto prefix = field(b, kPrefix);
      path = prefix.empty() ? std::string(field(b, kName))
                            : std::string(prefix) + "/" + std::string(field(b, kName));
    }
    std::string link = std::string(field(b, kLinkname));
    if (auto it = pax_.find("linkpath"); it != pax_.end()) link = it->second;
    pax_.clear();
    while (path.size() >= 2 && path.compare(0, 2, "./") == 0) path.erase(0, 2);
    if (type == '5') {
      while (!path.empty() && path.back() == '/') path.pop_back();
      if (path.empty() || path == ".") {  // the archive's own root ("./" from GNU tar)
        state_ = State::skip;
        remaining_ = round_up(*size);
        return;
      }
    }
    if (auto why = check_entry_path(path); !why.empty())
      throw BundleError("the archive has " + why);
    if (++summary_.entries > limits_.max_entries)
      throw BundleError("the archive has more than " + std::to_string(limits_.max_entries) +
                        " entries");
    const char kind = type == '\0' ? '0' : type;
    if (kind != '0' && kind != '2' && kind != '5')
      throw BundleError(std::string("the archive has an entry of type '") + type + "' at " + path +
                        "; only files, directories and symbolic links are allowed");
    if (!kinds_.emplace(path, kind == '5' ? 'd' : kind).second)
      throw BundleError("the archive names " + path + " twice");
    if (kind == '5') {
      state_ = State::skip;
      remaining_ = round_up(*size);
      return;
    }
    BundleEntry e;
    e.path = path;
    if (kind == '2') {
      if (auto why = check_link_target(path, link); !why.empty())
        throw BundleError("the archive has " + why);
      e.kind = EntryKind::symlink;
      e.link_target = link;
      if (on_entry_) on_entry_(e);
      state_ = State::skip;
      remaining_ = round_up(*size);
      return;
    }
    if (summary_.uncompressed_bytes + *size > limits_.max_uncompressed_bytes)
      throw BundleError("the archive's files add up to more than " +
                        std::to_string(limits_.max_uncompressed_bytes) + " bytes");
    summary_.uncompressed_bytes += *size;
    const auto mode = parse_octal(field(b, kMode));
    if (!mode) throw BundleError("a tar header has a malformed mode at " + path);
    e.kind = EntryKind::file;
    e.executable = (*mode & 0111) != 0;
    e.size = *size;
    if (on_entry_) on_entry_(e);
    state_ = State::data;
    remaining_ = *size;
    padding_ = round_up(*size) - *size;
  }

  static std::uint64_t round_up(std::uint64_t n) { return (n + kBlock - 1) / kBlock * kBlock; }

  const BundleLimits& limits_;
  const EntryHandler& on_entry_;
  const DataHandler& on_data_;
  State state_ = State::header;
  std::uint64_t remaining_ = 0;
  std::uint64_t padding_ = 0;
  size_t pax_size_ = 0;
  std::map<std::string, std::string> pax_;
  std::map<std::string, char> kinds_;
  BundleSummary summary_;
};

}  // namespace

BundleSummary read_bundle(std::string_view compressed, const BundleLimits& limits,
                          const EntryHandler& on_entry, const DataHandler& on_data) {
  if (compressed.size() > limits.max_compressed_bytes)
    throw BundleError("the bundle exceeds the limit of " +
                      std::to_string(limits.max_compressed_bytes) + " bytes");
  if (compressed.size() < 2 || static_cast<unsigned char>(compressed[0]) != 0x1f ||
      static_cast<unsigned char>(compressed[1]) != 0x8b)
    throw BundleError("not a gzip-compressed archive");
  z_stream z{};
  if (inflateInit2(&z, 15 + 16) != Z_OK) throw BundleError("zlib: cannot start decompression");
  struct End {
    z_stream* z;
    ~End() { inflateEnd(z); }
  } end{&z};
  TarReader tar(limits, on_entry, on_data);
  // The tar stream may not expand beyond the content limit plus its headers: a bound on what a
  // small body can make the reader do.
  const std::uint64_t max_tar =
      limits.max_uncompressed_bytes + (limits.max_entries + 2) * 3 * kBlock + kMaxPaxBytes;
  std::uint64_t produced = 0;
  std::string pending;
  std::array<char, 65536> buf;
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(compressed.data()));
  z.avail_in = static_cast<uInt>(compressed.size());
  for (;;) {
    z.next_out = reinterpret_cast<Bytef*>(buf.data());
    z.avail_out = static_cast<uInt>(buf.size());
    const int rc = inflate(&z, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR)
      throw BundleError(std::string("the archive is not valid gzip: ") +
                        (z.msg ? z.msg : "inflate failed"));
    const size_t n = buf.size() - z.avail_out;
    produced += n;
    if (produced > max_tar) throw BundleError("the archive expands beyond its limits");
    pending.append(buf.data(), n);
    tar.feed(pending);
    if (rc == Z_STREAM_END) break;
    if (rc == Z_BUF_ERROR || (n == 0 && z.avail_in == 0))
      throw BundleError("the archive is truncated (gzip stream ends early)");
  }
  if (z.avail_in != 0) throw BundleError("data after the end of the gzip stream");
  if (!pending.empty()) throw BundleError("the archive is truncated");
  return tar.finish();
}

BundleSummary inspect_bundle(std::string_view compressed, const BundleLimits& limits) {
  return read_bundle(compressed, limits, {}, {});
}

}  // namespace podium::bundle
