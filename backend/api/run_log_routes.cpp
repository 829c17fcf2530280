// A run's logs: paged history (GET /runs/{id}/logs; ?q= searches the run's lines) and live
// follow (GET /runs/{id}/logs/stream, Server-Sent Events).
#include <algorithm>
#include <chrono>
#include <iterator>
#include <tuple>
#include <vector>

#include "backend/api/api_context.h"
#include "backend/api/route_table.h"
#include "backend/api/sql_util.h"
#include "backend/common/cursor.h"
#include "backend/common/problem.h"
#include "backend/ingest/step_line_store.h"
#include "engine/core/text/json_text.h"

namespace podium::api {

namespace {

using nlohmann::json;

constexpr int kDefaultLogLimit = 500;
constexpr int kMaxLogLimit = 5000;
constexpr std::size_t kMaxSearchBytes = 256;

struct LogFilter {
  std::optional<std::string> attempt;  // id or number
  std::optional<int> rank;
  std::optional<std::int64_t> after;  // seq
};

LogFilter read_filter(const http::RequestContext& rc) {
  LogFilter f;
  f.attempt = rc.request.query_param("attempt");
  if (f.attempt && (f.attempt->empty() || f.attempt->size() > 64))
    throw http::bad_request("attempt must be an attempt id or number", {{"attempt", "invalid"}});
  if (auto r = query_integer(rc, "rank", 0, 1 << 20, "an integer >= 0"))
    f.rank = static_cast<int>(*r);
  f.after = query_integer(rc, "after", -1, INT64_MAX / 2, "an integer >= -1");
  return f;
}

void require_run(db::Transaction& tx, const std::string& id) {
  if (tx.exec("SELECT 1 FROM runs WHERE id = $1", {id}).empty())
    throw http::not_found("no run " + id);
}

// Rank 0's step lines stored once (backend/ingest/step_line_store.h) come back as their
// metrics rows with a NULL line; their text is rebuilt here.
json log_item(const db::Result& r, size_t i) {
  return {{"attempt", r.int64(i, "attempt_number")},
          {"attempt_id", r.at(i, "attempt_id")},
          {"rank", r.int64(i, "rank")},
          {"seq", r.int64(i, "seq")},
          {"ts", r.at(i, "ts")},
          {"line", r.is_null(i, "line") ? ingest::rebuilt_step_line(r, i) : r.at(i, "line")}};
}

// SQL matching an attempt given as id or as number.
const char* kAttemptMatch =
    "($2::text IS NULL OR l.attempt_id = $2 OR l.attempt_number::text = $2)";

// Columns of a log_lines row beside a stored-once step row (the m_* columns are NULL).
const char* kNoStepColumns =
    "NULL::bigint AS m_step, NULL::float8 AS m_seconds, NULL::float8 AS m_tflops, NULL::float8 "
    "AS m_tokens, NULL::float8 AS m_weights, NULL::float8 AS m_loss, NULL::text AS m_prefix";

// A page position (attempt, rank, seq) for rank 0's stored-once lines, which have rank 0 only:
// the (attempt_number, log_seq) after which they follow the position.
std::pair<std::int64_t, std::int64_t> step_row_position(const json& position) {
  const std::int64_t a = position["a"], r = position["r"], s = position["s"];
  if (r < 0) return {a, -1};
  if (r == 0) return {a, s};
  return {a, INT64_MAX / 2};  // past rank 0 of attempt a: only later attempts
}

struct Line {
  std::int64_t attempt, rank, seq;
  json item;
};

// Up to `limit` of a run's text lines after `position` (and matching the search), in order.
std::vector<Line> text_lines(db::Transaction& tx, const std::string& run_id,
                             const LogFilter& filter, const json& position, int limit,
                             const std::optional<std::string>& search, const char* search_match) {
  auto r = tx.exec(
      "SELECT l.attempt_id, l.attempt_number, l.rank, l.seq, " + rfc3339("l.ts") +
          " AS ts, l.line, " + kNoStepColumns + " FROM log_lines l WHERE l.run_id = $1 AND " +
          kAttemptMatch +
          " AND ($3::int IS NULL OR l.rank = $3::int) AND ($4::bigint IS NULL OR l.seq > "
          "$4::bigint) AND (l.attempt_number, l.rank, l.seq) > ($5::int, $6::int, $7::bigint) "
          "AND ($9::text IS NULL OR " +
          search_match + ") ORDER BY l.attempt_number, l.rank, l.seq LIMIT $8::int",
      {run_id, filter.attempt, filter.rank ? db::Param(std::to_string(*filter.rank)) : db::Param(),
       filter.after ? db::Param(std::to_string(*filter.after)) : db::Param(), position["a"].dump(),
       position["r"].dump(), position["s"].dump(), std::to_string(limit), search});
  std::vector<Line> out;
  out.reserve(r.size());
  for (size_t i = 0; i < r.size(); ++i)
    out.push_back(
        {r.int64(i, "attempt_number"), r.int64(i, "rank"), r.int64(i, "seq"), log_item(r, i)});
  return out;
}

// One read of rank 0's stored-once step lines after (attempt, seq), in order.
db::Result step_rows(db::Transaction& tx, const std::string& run_id, const LogFilter& filter,
                     std::pair<std::int64_t, std::int64_t> after, int limit) {
  return tx.exec(
      "SELECT m.attempt_id, m.attempt_number, 0 AS rank, m.log_seq AS seq, " + rfc3339("m.at") +
          " AS ts, NULL::text AS line, " + ingest::kRebuiltLineColumns +
          " FROM metrics m WHERE m.run_id = $1 AND m.log_seq IS NOT NULL AND ($2::text IS NULL "
          "OR m.attempt_id = $2 OR m.attempt_number::text = $2) AND ($3::int IS NULL OR "
          "$3::int = 0) AND ($4::bigint IS NULL OR m.log_seq > $4::bigint) AND "
          "(m.attempt_number, m.log_seq) > ($5::int, $6::bigint) "
          "ORDER BY m.attempt_number, m.log_seq LIMIT $7::int",
      {run_id, filter.attempt, filter.rank ? db::Param(std::to_string(*filter.rank)) : db::Param(),
       filter.after ? db::Param(std::to_string(*filter.after)) : db::Param(),
       std::to_string(after.first), std::to_string(after.second), std::to_string(limit)});
}

bool before(const Line& a, const Line& b) {
  return std::tie(a.attempt, a.rank, a.seq) < std::tie(b.attempt, b.rank, b.seq);
}

// Case-insensitive substring as the text lines' SQL compares (ASCII letters folded; a rebuilt
// step line is ASCII but for its logger prefix).
bool contains_folded(const std::string& line, const std::string& term) {
  auto fold = [](unsigned char c) { return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c; };
  if (term.size() > line.size()) return false;
  for (size_t i = 0; i + term.size() <= line.size(); ++i) {
    size_t k = 0;
    while (k < term.size() && fold(static_cast<unsigned char>(line[i + k])) ==
                                  fold(static_cast<unsigned char>(term[k])))
      ++k;
    if (k == term.size()) return true;
  }
  return false;
}

// Up to `limit` stored-once step lines after `position`, matching the search when there is one.
// A search rebuilds each line to compare it, a chunk at a time, and stops once every line it
// could still find would sort after `bound` (the last text line a full page already holds).
std::vector<Line> step_lines(db::Transaction& tx, const std::string& run_id,
                             const LogFilter& filter, const json& position, int limit,
                             const std::optional<std::string>& search,
                             const std::optional<Line>& bound) {
  constexpr int kChunk = 5000;
  std::vector<Line> out;
  auto after = step_row_position(position);
  while (static_cast<int>(out.size()) < limit) {
    auto r = step_rows(tx, run_id, filter, after, search ? kChunk : limit);
    for (size_t i = 0; i < r.size() && static_cast<int>(out.size()) < limit; ++i) {
      Line line{r.int64(i, "attempt_number"), 0, r.int64(i, "seq"), json()};
      if (bound && before(*bound, line)) return out;
      json item = log_item(r, i);
      if (search && !contains_folded(item["line"].get_ref<const std::string&>(), *search)) continue;
      line.item = std::move(item);
      out.push_back(std::move(line));
    }
    if (!search || r.size() < static_cast<size_t>(kChunk)) break;
    after = {r.int64(r.size() - 1, "attempt_number"), r.int64(r.size() - 1, "seq")};
  }
  return out;
}

http::Response list_logs(ApiContext& ctx, http::RequestContext& rc) {
  const std::string run_id = rc.param("id");
  auto filter = read_filter(rc);
  auto limit = query_integer(rc, "limit", 1, kMaxLogLimit, "an integer from 1 to 5000")
                   .value_or(kDefaultLogLimit);
  // Search within the run's lines: a case-insensitive substring, as one looks for an error.
  std::optional<std::string> search = rc.request.query_param("q");
  if (search && search->empty()) search.reset();
  if (search && search->size() > kMaxSearchBytes)
    throw http::bad_request("q is too long",
                            {{"q", "at most " + std::to_string(kMaxSearchBytes) + " bytes"}});
  json position = {{"a", -1}, {"r", -1}, {"s", -1}};
  if (auto c = rc.request.query_param("cursor"); c && !c->empty()) {
    auto decoded = http::decode_cursor(ctx.cursor_key, *c);
    if (!decoded || !decoded->is_object() || !(*decoded)["a"].is_number_integer() ||
        !(*decoded)["r"].is_number_integer() || !(*decoded)["s"].is_number_integer())
      throw http::bad_request("invalid cursor", {{"cursor", "not a cursor this server issued"}});
    position = *decoded;
  }
  // A search reads every line of the run, so the comparison is what it costs. Lowering a line
  // under the database's UTF-8 collation goes through wide characters; under "C" it is a byte
  // loop, 2.6 times faster over 100,000 lines. For a term of ASCII characters (nearly every
  // search of a log) the two find the same lines, but for the rare characters outside ASCII whose
  // lower case is ASCII (the Kelvin sign); any other term uses the full case folding.
  const bool ascii_search = search && std::all_of(search->begin(), search->end(), [](char c) {
                              return static_cast<unsigned char>(c) < 0x80;
                            });
  const char* search_match =
      ascii_search ? "strpos(lower(l.line COLLATE \"C\"), lower($9::text COLLATE \"C\")) > 0"
                   : "strpos(lower(l.line), lower($9::text)) > 0";
  const int want = limit + 1;
  auto page = ctx.db.transact(
      [&](db::Transaction& tx) {
        // Text lines and stored-once step lines are two reads: one snapshot for both, so that a
        // batch committing between them cannot leave a hole the cursor would step over.
        tx.exec("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ");
        require_run(tx, run_id);
        auto texts = text_lines(tx, run_id, filter, position, want, search, search_match);
        std::optional<Line> bound;
        if (static_cast<int>(texts.size()) == want) bound = texts.back();
        auto steps = step_lines(tx, run_id, filter, position, want, search, bound);
        std::vector<Line> merged;
        merged.reserve(texts.size() + steps.size());
        std::merge(std::make_move_iterator(texts.begin()), std::make_move_iterator(texts.end()),
                   std::make_move_iterator(steps.begin()), std::make_move_iterator(steps.end()),
                   std::back_inserter(merged), before);
        if (static_cast<int>(merged.size()) > want) merged.resize(static_cast<size_t>(want));
        return merged;
      },
      db::TxMode::read_only);
  json items = json::array();
  const size_t n = std::min(page.size(), static_cast<size_t>(limit));
  for (size_t i = 0; i < n; ++i) items.push_back(std::move(page[i].item));
  json next = nullptr;
  if (page.size() > n && n > 0)
    next = http::encode_cursor(
        ctx.cursor_key,
        {{"a", page[n - 1].attempt}, {"r", page[n - 1].rank}, {"s", page[n - 1].seq}});
  return json_response(200, {{"items", items}, {"next_cursor", next}});
}

// Follows a run's output. Each (attempt, rank) is read from the position last sent, in seq order:
// one rank's lines are uploaded one batch after another, so its stored lines have no gaps, while
// across ranks commit order may differ from arrival order (which an id watermark would miss).
class LogStream : public http::BodyStream {
 public:
  LogStream(ApiContext& ctx, std::string run_id, LogFilter filter)
      : ctx_(ctx), run_id_(std::move(run_id)), filter_(std::move(filter)) {}

  bool next(std::string& chunk) override {
    if (done_) return false;
    if (!started_) {
      started_ = true;
      chunk = "retry: 2000\n\n";
      return true;
    }
    since_ = ctx_.hub.generation();
    std::string state;
    try {
      auto [lines, run_state] = read();
      state = run_state;
      for (size_t i = 0; i < lines.size(); ++i) {
        json item = log_item(lines, i);
        positions_[item["attempt_id"].get<std::string>() + "/" +
                   std::to_string(item["rank"].get<std::int64_t>())] = item["seq"];
        chunk += "event: log\ndata: " + core::json_text(item) + "\n\n";
      }
      if (lines.size() >= kBatch) return true;  // more to send: no waiting
    } catch (const std::exception& e) {
      // The database went away: tell the client and end; it reconnects (retry: 2000).
      chunk += "event: error\ndata: " + core::json_text({{"detail", e.what()}}) + "\n\n";
      done_ = true;
      return true;
    }
    if (state.empty()) {
      chunk += "event: end\ndata: {\"state\":null,\"detail\":\"the run was deleted\"}\n\n";
      done_ = true;
      return true;
    }
    if (state != last_state_) {
      last_state_ = state;
      chunk += "event: state\ndata: " + core::json_text({{"state", state}}) + "\n\n";
    }
    if (state == "succeeded" || state == "failed" || state == "cancelled") {
      // Lines may still arrive right after the end (the last batches of a rank): one grace round.
      if (++terminal_rounds_ > 2) {
        chunk += "event: end\ndata: " + core::json_text({{"state", state}}) + "\n\n";
        done_ = true;
        return true;
      }
    }
    const auto now = std::chrono::steady_clock::now();
    if (!chunk.empty()) {
      last_sent_ = now;
      return true;
    }
    if (ctx_.hub.stopping()) {
      chunk = "event: end\ndata: {\"detail\":\"the server is shutting down\"}\n\n";
      done_ = true;
      return true;
    }
    if (now - last_sent_ >= kKeepAlive) {
      last_sent_ = now;
      chunk = ": keep-alive\n\n";  // also finds out that a client has gone away
      return true;
    }
    terminal_ = state == "succeeded" || state == "failed" || state == "cancelled";
    return true;  // nothing now: idle() says how to wait
  }

  // New lines and state changes NOTIFY podium_logs <run>. Between them the follower holds no
  // thread; it looks again after a second in a finished run's grace rounds, and when the next
  // keep-alive is due.
  std::optional<http::Wait> idle() override {
    auto* hub = &ctx_.hub;
    const auto until_keep_alive = std::chrono::duration_cast<std::chrono::milliseconds>(
        last_sent_ + kKeepAlive - std::chrono::steady_clock::now());
    return http::Wait{
        {"podium_logs:" + run_id_},
        terminal_ ? std::chrono::milliseconds(1000)
                  : std::max(until_keep_alive, std::chrono::milliseconds(0)),
        [hub, run = run_id_, since = since_] { return hub->fired("podium_logs", run, since); }};
  }

 private:
  static constexpr size_t kBatch = 2000;

  std::pair<db::Result, std::string> read() {
    json pos = json::object();
    for (const auto& [k, v] : positions_) pos[k] = v;
    return ctx_.db.transact(
        [&](db::Transaction& tx) {
          auto s = tx.exec("SELECT state FROM runs WHERE id = $1", {run_id_});
          std::string state = s.empty() ? "" : s.at(0, "state");
          // Per host, its text lines and (rank 0) its stored-once step lines after the last
          // seq sent; both kinds drew their arrival id in seq order when stored, so ordering by
          // id and cutting at the batch size keeps each host's lines gapless.
          auto lines = tx.exec(
              "SELECT l.* FROM attempt_hosts ah JOIN attempts a ON a.id = ah.attempt_id CROSS "
              "JOIN LATERAL ((SELECT l.attempt_id, l.attempt_number, l.rank, l.seq, " +
                  rfc3339("l.ts") + " AS ts, l.line, l.id, " + kNoStepColumns +
                  " FROM log_lines l WHERE l.attempt_id = ah.attempt_id AND l.rank = ah.rank AND "
                  "l.seq > COALESCE(($4::jsonb ->> (ah.attempt_id || '/' || ah.rank))::bigint, "
                  "-1) ORDER BY l.seq LIMIT $5::int) UNION ALL (SELECT m.attempt_id, "
                  "m.attempt_number, 0, m.log_seq, " +
                  rfc3339("m.at") + ", NULL::text, m.log_id, " + ingest::kRebuiltLineColumns +
                  " FROM metrics m WHERE ah.rank = 0 AND m.run_id = a.run_id AND "
                  "m.attempt_number = a.number AND m.log_seq IS NOT NULL AND m.log_seq > "
                  "COALESCE(($4::jsonb ->> (ah.attempt_id || '/0'))::bigint, -1) ORDER BY "
                  "m.log_seq LIMIT $5::int)) l WHERE a.run_id = $1 AND ($2::text IS NULL OR "
                  "a.id = $2 OR a.number::text = $2) AND ($3::int IS NULL OR ah.rank = $3::int) "
                  "ORDER BY l.id LIMIT $5::int",
              {run_id_, filter_.attempt,
               filter_.rank ? db::Param(std::to_string(*filter_.rank)) : db::Param(),
               core::json_text(pos), std::to_string(kBatch)});
          return std::make_pair(std::move(lines), state);
        },
        db::TxMode::read_only);
  }

  ApiContext& ctx_;
  std::string run_id_;
  LogFilter filter_;
  std::map<std::string, json> positions_;
  std::string last_state_;
  static constexpr std::chrono::seconds kKeepAlive{15};
  bool started_ = false;
  bool done_ = false;
  bool terminal_ = false;
  int terminal_rounds_ = 0;
  std::uint64_t since_ = 0;
  std::chrono::steady_clock::time_point last_sent_ = std::chrono::steady_clock::now();
};

http::Response stream_logs(ApiContext& ctx, http::RequestContext& rc) {
  const std::string run_id = rc.param("id");
  auto filter = read_filter(rc);
  ctx.db.transact([&](db::Transaction& tx) { require_run(tx, run_id); }, db::TxMode::read_only);
  http::Response res;
  res.status = 200;
  res.set_header("Content-Type", "text/event-stream");
  res.set_header("Cache-Control", "no-store");
  res.set_header("X-Accel-Buffering", "no");
  res.stream = std::make_shared<LogStream>(ctx, run_id, std::move(filter));
  return res;
}

}  // namespace

void register_run_log_routes(http::Router& router, ApiContext& ctx) {
  RouteTable routes(router, ctx);
  routes.add("GET", "/api/v1/runs/{id}/logs", http::Access::reader, list_logs);
  routes.add("GET", "/api/v1/runs/{id}/logs/stream", http::Access::reader, stream_logs);
}

}  // namespace podium::api
