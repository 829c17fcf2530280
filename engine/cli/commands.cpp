// Helpers shared by the commands: API calls with uniform error reporting, list paging, input.

#include "engine/cli/commands.h"

#include <fstream>
#include <istream>
#include <set>

#include "engine/cli/exit_codes.h"
#include "engine/client/http_client.h"

namespace podium::cli {

Command make_command(std::string group, std::string name, std::string args, std::string summary,
                     std::vector<OptionSpec> options, size_t min_args, size_t max_args,
                     std::function<int(Context&)> run, std::string details) {
  Command c;
  c.group = std::move(group);
  c.name = std::move(name);
  c.args = std::move(args);
  c.summary = std::move(summary);
  c.details = std::move(details);
  c.options = std::move(options);
  c.min_args = min_args;
  c.max_args = max_args;
  c.run = std::move(run);
  return c;
}

int usage_error(Context& ctx, const std::string& message) {
  ctx.err << "error: " << message << "\n"
          << command_usage(ctx.command) << "\n"
          << "Run 'podium " << ctx.command.path() << " --help' for details.\n";
  return kExitUsage;
}

int report_status(Context& ctx, int status, const std::string& body) {
  ctx.err << render_problem(status, body);
  if (status == 401) {
    ctx.err << (ctx.config.token.empty()
                    ? "hint: no token given: pass --token or set PODIUM_TOKEN\n"
                    : "hint: the server rejected the token (--token / PODIUM_TOKEN)\n");
  }
  return exit_code_for_status(status);
}

int report_transport(Context& ctx, const std::string& message) {
  ctx.err << "error: cannot talk to the server at " << ctx.config.server << ": " << message << "\n";
  return kExitTransport;
}

int report_unreadable(Context& ctx, const std::string& what) {
  ctx.err << "error: unexpected answer from the server at " << ctx.config.server << ": " << what
          << "\n";
  return kExitTransport;
}

Call call(Context& ctx, const std::string& method, const std::string& path, const std::string& body,
          bool report_errors) {
  Call c;
  auto result = ctx.api.request(method, path, body);
  if (!result.response) {
    c.exit = report_transport(ctx, result.error ? result.error->message : "no response");
    return c;
  }
  c.status = result.response->status;
  c.body = std::move(result.response->body);
  if (!c.body.empty()) c.json = Json::parse(c.body, nullptr, /*allow_exceptions=*/false);
  if (c.json.is_discarded()) c.json = nullptr;
  if (c.status < 200 || c.status >= 300) {
    c.exit = report_errors ? report_status(ctx, c.status, c.body) : exit_code_for_status(c.status);
  }
  return c;
}

std::string segment(const std::string& id) {
  return client::percent_encode(id);
}

std::string with_query(std::string path, const std::string& key, const std::string& value) {
  path += path.find('?') == std::string::npos ? '?' : '&';
  path += key + "=" + client::percent_encode(value);
  return path;
}

void print_raw(Context& ctx, const Call& c) {
  ctx.out << c.body;
  if (c.body.empty() || c.body.back() != '\n') ctx.out << "\n";
}

int print_object(Context& ctx, const Call& c) {
  if (ctx.json) {
    print_raw(ctx, c);
    return kExitOk;
  }
  if (!c.json.is_object() && !c.json.is_array())
    return report_unreadable(ctx, "expected a JSON object");
  ctx.out << render_details(c.json);
  return kExitOk;
}

std::optional<long long> int_option(Context& ctx, const std::string& name, long long min,
                                    int& exit) {
  const auto text = ctx.args.value(name);
  if (!text) return std::nullopt;
  const auto v = parse_int(*text);
  if (!v || *v < min) {
    exit = usage_error(ctx, "--" + name + " must be an integer >= " + std::to_string(min) +
                                ", not '" + *text + "'");
    return std::nullopt;
  }
  return v;
}

namespace {

// Reads a whole stream with read()/gcount(): GCC 12 flags rdbuf() and istreambuf_iterator
// copies with a false -Wnull-dereference inside libstdc++'s streambuf.
std::string slurp(std::istream& in) {
  std::string data;
  char buf[64 * 1024];
  while (in.read(buf, sizeof buf) || in.gcount() > 0)
    data.append(buf, static_cast<size_t>(in.gcount()));
  return data;
}

}  // namespace

std::optional<std::string> read_input(Context& ctx, const std::string& file, int& exit) {
  if (file == "-") {
    if (ctx.env.in == nullptr) {
      exit = usage_error(ctx, "no standard input to read");
      return std::nullopt;
    }
    return slurp(*ctx.env.in);
  }
  std::ifstream f(file, std::ios::binary);
  if (!f) {
    exit = usage_error(ctx, "cannot read " + file);
    return std::nullopt;
  }
  std::string data = slurp(f);
  if (f.bad()) {
    exit = usage_error(ctx, "cannot read " + file);
    return std::nullopt;
  }
  return data;
}

namespace {

// A list answer is {"items":[...],"next_cursor":...}; a bare array is accepted too.
bool split_page(const Json& body, Json& items, std::optional<std::string>& next) {
  next.reset();
  if (body.is_array()) {
    items = body;
    return true;
  }
  if (!body.is_object()) return false;
  const auto it = body.find("items");
  if (it == body.end() || !it->is_array()) return false;
  items = *it;
  if (const auto c = body.find("next_cursor");
      c != body.end() && c->is_string() && !c->get<std::string>().empty()) {
    next = c->get<std::string>();
  }
  return true;
}

// The server's page size limit (contract: default 50, max 500).
constexpr long long kMaxPage = 500;

}  // namespace

int print_list(Context& ctx, const std::string& path, const std::vector<Column>& columns,
               const std::string& noun) {
  int exit = kExitOk;
  const auto limit = int_option(ctx, "limit", 1, exit);
  if (exit != kExitOk) return exit;
  const bool all = ctx.args.has("all");

  Json items = Json::array();
  std::optional<std::string> next;
  if (!all) {
    const Call c =
        call(ctx, "GET", limit ? with_query(path, "limit", std::to_string(*limit)) : path);
    if (!c.ok()) return c.exit;
    if (!split_page(c.json, items, next))
      return report_unreadable(ctx, "expected a list of " + noun);
    if (ctx.json) {
      print_raw(ctx, c);
      return kExitOk;
    }
  } else {
    // --all follows every cursor; --limit then caps the total number of items.
    std::set<std::string> seen_cursors;
    std::optional<std::string> cursor;
    do {
      long long page = kMaxPage;
      if (limit) page = std::min<long long>(page, *limit - static_cast<long long>(items.size()));
      std::string p = with_query(path, "limit", std::to_string(page));
      if (cursor) p = with_query(p, "cursor", *cursor);
      const Call c = call(ctx, "GET", p);
      if (!c.ok()) return c.exit;
      Json page_items;
      if (!split_page(c.json, page_items, next))
        return report_unreadable(ctx, "expected a list of " + noun);
      for (auto& item : page_items) items.push_back(std::move(item));
      if (next && !seen_cursors.insert(*next).second) {
        return report_unreadable(ctx, "the server returned the same cursor twice");
      }
      cursor = next;
    } while (cursor && (!limit || static_cast<long long>(items.size()) < *limit));
    if (limit && static_cast<long long>(items.size()) > *limit)
      items.erase(items.begin() + *limit, items.end());
    if (ctx.json) {
      Json combined = Json::object();
      combined["items"] = items;
      combined["next_cursor"] = next ? Json(*next) : Json(nullptr);
      ctx.out << combined.dump(2) << "\n";
      return kExitOk;
    }
  }
  if (items.empty()) {
    ctx.err << "no " << noun << " found\n";
    return kExitOk;
  }
  ctx.out << render_table(columns, items);
  if (next && !all) ctx.err << "(more " << noun << " available: use --all, or a larger --limit)\n";
  return kExitOk;
}

}  // namespace podium::cli
