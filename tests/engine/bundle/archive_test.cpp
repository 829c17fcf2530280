#include "engine/bundle/archive.h"

#include <zlib.h>

#include <gtest/gtest.h>

#include <map>

namespace podium::bundle {
namespace {

struct Read {
  std::map<std::string, BundleEntry> entries;
  std::map<std::string, std::string> contents;
  BundleSummary summary;
};

Read read_all(const std::string& bytes, const BundleLimits& limits = {}) {
  Read out;
  std::string current;
  out.summary = read_bundle(
      bytes, limits,
      [&](const BundleEntry& e) {
        current = e.path;
        out.entries[e.path] = e;
        out.contents[e.path];
      },
      [&](std::string_view d) { out.contents[current].append(d); });
  return out;
}

std::string gzip(const std::string& raw) {
  z_stream z{};
  deflateInit2(&z, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY);
  std::string out(compressBound(static_cast<uLong>(raw.size())) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(raw.data()));
  z.avail_in = static_cast<uInt>(raw.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

std::string gunzip(const std::string& gz) {
  z_stream z{};
  inflateInit2(&z, 31);
  std::string out(64 << 20, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data()));
  z.avail_in = static_cast<uInt>(gz.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  inflate(&z, Z_FINISH);
  out.resize(z.total_out);
  inflateEnd(&z);
  return out;
}

// A raw ustar header with a correct checksum, for archives the writer would never produce.
std::string raw_header(const std::string& name, char type, size_t size,
                       const std::string& link = {}) {
  std::string b(512, '\0');
  b.replace(0, name.size(), name);
  b.replace(100, 7, "0000644");
  char sz[13];
  std::snprintf(sz, sizeof sz, "%011zo", size);
  b.replace(124, 11, sz);
  b[156] = type;
  b.replace(157, link.size(), link);
  b.replace(257, 6, std::string("ustar\0", 6));
  b.replace(263, 2, "00");
  b.replace(148, 8, "        ");
  unsigned sum = 0;
  for (unsigned char c : b) sum += c;
  char ck[8];
  std::snprintf(ck, sizeof ck, "%06o", sum);
  b.replace(148, 7, std::string(ck, 6) + '\0');
  return b;
}

std::string padded(std::string s) {
  s.resize((s.size() + 511) / 512 * 512, '\0');
  return s;
}

TEST(BundleArchive, RoundTripsFilesModesLinksAndLongPaths) {
  BundleWriter w;
  const std::string long_path = std::string(150, 'd') + "/" + std::string(120, 'f') + ".py";
  const std::string big(700000, 'x');
  w.add_file("train.py", false, "print('hi')\n");
  w.add_file("bin/run.sh", true, "#!/bin/sh\n");
  w.add_file("empty.txt", false, "");
  w.add_file(long_path, false, big);
  w.add_symlink("lib/current", "../bin");
  const auto bytes = w.finish();
  auto r = read_all(bytes);
  ASSERT_EQ(r.entries.size(), 5u);
  EXPECT_EQ(r.summary.entries, 5u);
  EXPECT_EQ(r.summary.uncompressed_bytes, 12u + 10u + big.size());
  EXPECT_EQ(r.contents["train.py"], "print('hi')\n");
  EXPECT_TRUE(r.entries["bin/run.sh"].executable);
  EXPECT_FALSE(r.entries["train.py"].executable);
  EXPECT_EQ(r.contents["empty.txt"], "");
  EXPECT_EQ(r.contents[long_path], big);
  EXPECT_EQ(r.entries["lib/current"].kind, EntryKind::symlink);
  EXPECT_EQ(r.entries["lib/current"].link_target, "../bin");
}

TEST(BundleArchive, TheSameEntriesGiveTheSameBytes) {
  auto make = [] {
    BundleWriter w;
    w.add_file("a.py", false, "a");
    w.add_file("b/c.py", true, "c");
    return w.finish();
  };
  EXPECT_EQ(make(), make());
}

TEST(BundleArchive, GnuTarStyleArchivesWithDirectoriesAndDotPrefixRead) {
  std::string tar = raw_header("./", '5', 0) + raw_header("./src/", '5', 0) +
                    raw_header("./src/m.py", '0', 3) + padded("abc") + std::string(10240, '\0');
  auto r = read_all(gzip(tar));
  ASSERT_EQ(r.entries.size(), 1u);
  EXPECT_EQ(r.contents["src/m.py"], "abc");
}

TEST(BundleArchive, RejectsTraversalAbsoluteAndEscapingLinks) {
  for (const auto& name : {std::string("../evil"), std::string("/etc/passwd"),
                           std::string("a/../../b"), std::string("a//b")}) {
    auto tar = raw_header(name, '0', 1) + padded("x") + std::string(1024, '\0');
    EXPECT_THROW(read_all(gzip(tar)), BundleError) << name;
  }
  auto link_out = raw_header("a/l", '2', 0, "../../etc") + std::string(1024, '\0');
  EXPECT_THROW(read_all(gzip(link_out)), BundleError);
  auto link_abs = raw_header("l", '2', 0, "/etc") + std::string(1024, '\0');
  EXPECT_THROW(read_all(gzip(link_abs)), BundleError);
}

TEST(BundleArchive, RejectsWritingThroughALinkOrAFileAndDuplicates) {
  auto through_link = raw_header("l", '2', 0, "sub") + raw_header("l/x", '0', 1) + padded("x") +
                      std::string(1024, '\0');
  EXPECT_THROW(read_all(gzip(through_link)), BundleError);
  auto under_file = raw_header("f", '0', 1) + padded("x") + raw_header("f/x", '0', 1) +
                    padded("x") + std::string(1024, '\0');
  EXPECT_THROW(read_all(gzip(under_file)), BundleError);
  auto twice = raw_header("f", '0', 1) + padded("x") + raw_header("f", '0', 1) + padded("y") +
               std::string(1024, '\0');
  EXPECT_THROW(read_all(gzip(twice)), BundleError);
}

TEST(BundleArchive, RejectsHardLinksDevicesBadChecksumsAndTruncation) {
  EXPECT_THROW(read_all(gzip(raw_header("h", '1', 0, "x") + std::string(1024, '\0'))), BundleError);
  EXPECT_THROW(read_all(gzip(raw_header("d", '3', 0) + std::string(1024, '\0'))), BundleError);
  auto bad = raw_header("f", '0', 1);
  bad[0] = 'g';  // checksum no longer matches
  EXPECT_THROW(read_all(gzip(bad + padded("x") + std::string(1024, '\0'))), BundleError);
  // A header promising more data than follows, and no end blocks.
  EXPECT_THROW(read_all(gzip(raw_header("f", '0', 5000) + padded("x"))), BundleError);
  BundleWriter w;
  w.add_file("a", false, std::string(5000, 'a'));
  auto good = w.finish();
  EXPECT_THROW(read_all(good.substr(0, good.size() - 9)), BundleError);  // gzip cut short
  EXPECT_THROW(read_all(good + "junk"), BundleError);
  EXPECT_THROW(read_all("not gzip at all"), BundleError);
  EXPECT_THROW(read_all(gzip(std::string(1024, '\0') + "trailing")), BundleError);
}

TEST(BundleArchive, LimitsBoundWhatASmallBodyExpandsTo) {
  BundleWriter w;
  w.add_file("zeros", false, std::string(4 << 20, '\0'));  // compresses to a few KiB
  const auto bomb = w.finish();
  ASSERT_LT(bomb.size(), 64u << 10);
  BundleLimits small;
  small.max_uncompressed_bytes = 1 << 20;
  EXPECT_THROW(read_all(bomb, small), BundleError);
  BundleLimits few;
  few.max_entries = 2;
  BundleWriter many;
  for (int i = 0; i < 3; ++i) many.add_file("f" + std::to_string(i), false, "x");
  EXPECT_THROW(read_all(many.finish(), few), BundleError);
  BundleLimits tiny;
  tiny.max_compressed_bytes = 100;
  EXPECT_THROW(read_all(bomb, tiny), BundleError);
}

TEST(BundleArchive, WriterRefusesWhatTheReaderWouldRefuse) {
  BundleWriter w;
  EXPECT_THROW(w.add_file("../x", false, ""), BundleError);
  EXPECT_THROW(w.add_symlink("l", "/abs"), BundleError);
  EXPECT_THROW(w.add_symlink("l", "../out"), BundleError);
  BundleLimits l;
  l.max_uncompressed_bytes = 10;
  BundleWriter limited(l);
  EXPECT_THROW(limited.add_file("big", false, std::string(11, 'x')), BundleError);
  BundleWriter dup;
  dup.add_file("a", false, "1");
  dup.add_file("a", false, "2");
  EXPECT_THROW(dup.finish(), BundleError);
}

TEST(BundleArchive, ThePlainTarInsideIsReadableByOtherTools) {
  BundleWriter w;
  w.add_file("m.py", false, "abc");
  const auto tar = gunzip(w.finish());
  ASSERT_GE(tar.size(), 2048u);
  EXPECT_EQ(tar.substr(0, 4), "m.py");
  EXPECT_EQ(tar.substr(257, 5), "ustar");
  EXPECT_EQ(tar.substr(512, 3), "abc");
}

}  // namespace
}  // namespace podium::bundle
