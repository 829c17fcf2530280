#pragma once
// The code bundle's archive format: a gzip-compressed POSIX tar (ustar, with pax "path" and
// "linkpath" records for long names) holding regular files and relative symbolic links only.
// Pure: bytes in, bytes out; the filesystem side is in bundle_files.h.
//
// Writing is canonical so that the same tree gives the same bytes (and so the same digest):
// entries in the order given (the packer sorts them), mtime 0, owner 0:0 without names, mode
// 0644 or 0755, gzip header without a name or a time.
//
// Reading treats the archive as untrusted (an uploaded body): every header checksum, size,
// path and link target is checked, and the limits bound what a small archive may expand to.

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace podium::bundle {

// A malformed or unsafe archive, or one over a limit; what() says which and where.
class BundleError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct BundleLimits {
  std::uint64_t max_compressed_bytes = 128ull << 20;
  std::uint64_t max_uncompressed_bytes = 1ull << 30;
  std::uint64_t max_entries = 100000;
};

enum class EntryKind { file, symlink };

struct BundleEntry {
  std::string path;  // relative, '/'-separated, no "." or ".." segments
  EntryKind kind = EntryKind::file;
  bool executable = false;  // files: any execute bit was set
  std::uint64_t size = 0;   // files: content bytes
  std::string link_target;  // symlinks: relative, stays inside the tree
};

struct BundleSummary {
  std::uint64_t entries = 0;
  std::uint64_t uncompressed_bytes = 0;  // file contents
};

// "" when `path` may name an entry, else why not.
std::string check_entry_path(std::string_view path);
// "" when a symlink at `path` may point to `target` (relative, lexically inside the tree).
std::string check_link_target(std::string_view path, std::string_view target);

class BundleWriter {
 public:
  explicit BundleWriter(BundleLimits limits = {});
  ~BundleWriter();
  BundleWriter(const BundleWriter&) = delete;
  BundleWriter& operator=(const BundleWriter&) = delete;

  // Throw BundleError for a bad path or target, a duplicate, or a limit passed.
  void add_file(std::string_view path, bool executable, std::string_view content);
  void add_symlink(std::string_view path, std::string_view target);
  // The compressed archive. The writer is spent afterwards.
  std::string finish();
  const BundleSummary& summary() const { return summary_; }

 private:
  void add_raw(std::string_view bytes);
  void add_header(std::string_view path, char type, std::uint64_t size, unsigned mode,
                  std::string_view link_target);
  struct Deflater;
  BundleLimits limits_;
  BundleSummary summary_;
  std::vector<std::string> paths_;
  std::unique_ptr<Deflater> deflater_;
};

// Reads the whole archive, calling on_entry once per entry and then on_data with the file's
// content in pieces (the pieces of one file add up to entry.size). Throws BundleError.
using EntryHandler = std::function<void(const BundleEntry&)>;
using DataHandler = std::function<void(std::string_view)>;
BundleSummary read_bundle(std::string_view compressed, const BundleLimits& limits,
                          const EntryHandler& on_entry, const DataHandler& on_data);

// Validates without keeping anything (what the server does with an upload).
BundleSummary inspect_bundle(std::string_view compressed, const BundleLimits& limits);

}  // namespace podium::bundle
