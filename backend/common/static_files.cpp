#include "backend/common/static_files.h"

#include <filesystem>
#include <fstream>
#include <sstream>

namespace podium::http {

namespace fs = std::filesystem;

std::string content_type_for(const std::string& path) {
  auto ext = fs::path(path).extension().string();
  if (ext == ".html") return "text/html; charset=utf-8";
  if (ext == ".js" || ext == ".mjs") return "text/javascript; charset=utf-8";
  if (ext == ".css") return "text/css; charset=utf-8";
  if (ext == ".json" || ext == ".map") return "application/json";
  if (ext == ".svg") return "image/svg+xml";
  if (ext == ".png") return "image/png";
  if (ext == ".ico") return "image/x-icon";
  if (ext == ".woff2") return "font/woff2";
  if (ext == ".txt") return "text/plain; charset=utf-8";
  return "application/octet-stream";
}

StaticFiles::StaticFiles(std::string root) {
  std::error_code ec;
  if (root.empty() || !fs::is_directory(root, ec)) return;
  root_ = fs::canonical(root, ec).string();
  if (ec) root_.clear();
}

std::optional<Response> StaticFiles::serve(const Request& req) const {
  if (!enabled() || (req.method != "GET" && req.method != "HEAD")) return std::nullopt;
  const std::string& p = req.path;
  if (p.rfind("/api/", 0) == 0 || p == "/api") return std::nullopt;
  if (p.find('\0') != std::string::npos) return std::nullopt;

  std::error_code ec;
  fs::path candidate = fs::weakly_canonical(fs::path(root_) / fs::path(p).relative_path(), ec);
  const bool inside =
      !ec && (candidate.string() == root_ || candidate.string().rfind(root_ + "/", 0) == 0);
  if (!inside) return std::nullopt;  // traversal attempt: treated as unknown
  bool is_asset = fs::is_regular_file(candidate, ec);
  if (!is_asset) {
    // Paths that name a file (have an extension) and do not exist are 404s, not the app shell.
    if (fs::path(p).has_extension()) return std::nullopt;
    candidate = fs::path(root_) / "index.html";
    if (!fs::is_regular_file(candidate, ec)) return std::nullopt;
  }
  std::ifstream in(candidate, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  auto res = Response::text(200, ss.str(), content_type_for(candidate.string()));
  // Vite names built assets by content hash: cache them for a year; never cache the shell.
  if (is_asset && p.rfind("/assets/", 0) == 0)
    res.set_header("Cache-Control", "public, max-age=31536000, immutable");
  else
    res.set_header("Cache-Control", "no-cache");
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_header("Content-Security-Policy", kDashboardContentSecurityPolicy);
  res.set_header("Referrer-Policy", "same-origin");
  res.set_header("X-Frame-Options", "DENY");
  return res;
}

}  // namespace podium::http
