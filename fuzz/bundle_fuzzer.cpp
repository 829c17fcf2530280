// Code bundles are uploaded by clients and unpacked on every host: any bytes must be read to a
// verdict (entries or BundleError) without a crash, a hang or unbounded memory, and whatever
// is accepted must be what the reader promised (file data adding up to each entry's size, safe
// paths only).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "engine/bundle/archive.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace podium::bundle;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  // Small limits: every limit check is reached by short inputs, and an input spends its time in
  // the reader's logic instead of inflating megabytes of zeros (with 4 MB the end-of-archive
  // scan of a gzip bomb took two thirds of every run and held the fuzzer near 1,100 exec/s).
  BundleLimits limits;
  limits.max_compressed_bytes = 32 << 10;
  limits.max_uncompressed_bytes = 256 << 10;
  limits.max_entries = 64;
  std::uint64_t expected = 0, got = 0, total = 0;
  bool open = false;
  try {
    auto summary = read_bundle(
        bytes, limits,
        [&](const BundleEntry& e) {
          if (open && got != expected) std::abort();
          if (!check_entry_path(e.path).empty()) std::abort();
          if (e.kind == EntryKind::symlink && !check_link_target(e.path, e.link_target).empty())
            std::abort();
          expected = e.kind == EntryKind::file ? e.size : 0;
          got = 0;
          open = true;
        },
        [&](std::string_view d) {
          got += d.size();
          total += d.size();
        });
    if (open && got != expected) std::abort();
    if (summary.uncompressed_bytes != total) std::abort();
  } catch (const BundleError&) {
  }
  return 0;
}
