// The agent protocol (docs/agent-protocol.md): register, heartbeat, assignment long-poll, rank
// status, log batches and checkpoints. Worker tokens only, each confined to its own cluster.
#include <algorithm>
#include <cctype>
#include <chrono>

#include "backend/api/api_context.h"
#include "backend/api/checkpoint_lifecycle.h"
#include "backend/api/resolve.h"
#include "backend/api/route_table.h"
#include "backend/api/sql_util.h"
#include "backend/common/json_input.h"
#include "backend/common/problem.h"
#include "backend/common/secrets.h"
#include "backend/ingest/log_ingest.h"
#include "backend/sched/dispatch/attempt_lifecycle.h"
#include "backend/sched/dispatch/external_attempts.h"
#include "backend/sched/dispatch/worker_notices.h"
#include "engine/core/launch/maxtext_launch.h"
#include "engine/core/logs/maxtext_log.h"
#include "engine/core/text/json_text.h"
#include "engine/core/topology/accelerator.h"

namespace podium::api {

namespace {

using nlohmann::json;

constexpr size_t kMaxLinesPerBatch = 5000;

const std::string& token_cluster(const http::RequestContext& rc) {
  return rc.principal->cluster_id;
}

// Only a host's own credential acts as that host's agent: an attach token, a cluster's worker
// token or another host's credential is 403. (A credential is bound to its worker row, and so to
// the row's cluster.)
void require_worker_credential(const http::RequestContext& rc, const std::string& worker_id) {
  if (!rc.principal->attempt_id.empty())
    throw http::forbidden("an attach token acts for its attempt's ranks only, not as an agent");
  if (rc.principal->worker_id.empty())
    throw http::forbidden(
        "a cluster's worker token may only register; use the credential the registration "
        "returned");
  if (rc.principal->worker_id != worker_id)
    throw http::forbidden("this credential belongs to worker " + rc.principal->worker_id +
                          ", not " + worker_id);
}

// The worker row, checked against the token's cluster: 404 unknown (the agent registers again),
// 403 another cluster's worker.
void require_worker(db::Transaction& tx, const http::RequestContext& rc,
                    const std::string& worker_id) {
  require_worker_credential(rc, worker_id);
  auto w = tx.exec("SELECT cluster_id FROM workers WHERE id = $1", {worker_id});
  if (w.empty()) throw http::not_found("unknown worker " + worker_id + "; register again");
  if (w.at(0, "cluster_id") != token_cluster(rc))
    throw http::forbidden("this worker token belongs to another cluster");
}

struct AttemptRow {
  std::string run_id;
  int number = 0;
  std::string state;
};

// lock: take the attempt row FOR UPDATE, as every path that ends an attempt does first.
AttemptRow require_attempt(db::Transaction& tx, const http::RequestContext& rc,
                           const std::string& attempt_id, bool lock = false) {
  auto a = tx.exec(
      std::string("SELECT a.run_id, a.number, a.state, r.cluster_id FROM attempts a JOIN runs r "
                  "ON r.id = a.run_id WHERE a.id = $1") +
          (lock ? " FOR UPDATE OF a" : ""),
      {attempt_id});
  if (a.empty()) throw http::not_found("no attempt " + attempt_id);
  if (!rc.principal->attempt_id.empty() && rc.principal->attempt_id != attempt_id)
    throw http::forbidden("this attach token belongs to another attempt");
  if (a.at(0, "cluster_id") != token_cluster(rc))
    throw http::forbidden("this worker token belongs to another cluster");
  return {a.at(0, "run_id"), static_cast<int>(a.int64(0, "number")), a.at(0, "state")};
}

// A host acts only for its own ranks: another worker's rank (or a cluster token's guess) is 403.
// Attach tokens are confined to their attempt by require_attempt.
void require_own_rank(db::Transaction& tx, const http::RequestContext& rc,
                      const std::string& attempt_id, std::optional<int64_t> rank) {
  if (!rc.principal->attempt_id.empty()) return;
  if (rc.principal->worker_id.empty())
    throw http::forbidden(
        "a cluster's worker token may only register; use the credential the registration "
        "returned");
  auto h = rank ? tx.exec(
                      "SELECT worker_id FROM attempt_hosts WHERE attempt_id = $1 AND rank = "
                      "$2::int",
                      {attempt_id, std::to_string(*rank)})
                : tx.exec(
                      "SELECT worker_id FROM attempt_hosts WHERE attempt_id = $1 AND worker_id = "
                      "$2 LIMIT 1",
                      {attempt_id, rc.principal->worker_id});
  if (h.empty()) {
    if (rank)
      throw http::not_found("attempt " + attempt_id + " has no rank " + std::to_string(*rank));
    throw http::forbidden("this worker holds no rank of attempt " + attempt_id);
  }
  if (h.at(0, "worker_id") != rc.principal->worker_id)
    throw http::forbidden("rank " + std::to_string(rank.value_or(0)) + " of attempt " + attempt_id +
                          " belongs to another worker");
}

json running_list(http::ObjectReader& reader, const json& body) {
  json out = json::array();
  if (!reader.present("running") || reader.is_null("running")) {
    reader.any("running");
    return out;
  }
  auto v = reader.any("running");
  if (!v || !v->is_array()) {
    reader.error("running", "must be an array of {attempt_id, rank}");
    return out;
  }
  for (size_t i = 0; i < v->size() && i < 1024; ++i) {
    const auto& e = (*v)[i];
    if (!e.is_object() || !e.contains("attempt_id") || !e["attempt_id"].is_string() ||
        !e.contains("rank") || !e["rank"].is_number_integer()) {
      reader.error("running[" + std::to_string(i) + "]", "must be {attempt_id, rank[, pid]}");
      continue;
    }
    out.push_back({{"attempt_id", e["attempt_id"]}, {"rank", e["rank"]}});
  }
  (void)body;
  return out;
}

// What the agent found on its host (`software` of the register body): versions as the package
// metadata spells them, and the MaxText module layout it could import. Unknown keys are
// ignored, so that a newer agent can report more to an older server; null when absent.
json software_report(http::ObjectReader& in) {
  auto given = in.object("software", false, false);
  if (!given) return nullptr;
  json out = json::object();
  for (const char* key : {"python", "jax", "jaxlib", "libtpu", "maxtext", "maxtext_layout"}) {
    auto it = given->find(key);
    if (it == given->end() || it->is_null()) continue;
    const std::string field = std::string("software.") + key;
    if (!it->is_string()) {
      in.error(field, "must be a string");
    } else if (it->get<std::string>().size() > 128 || !http::valid_utf8(it->get<std::string>())) {
      in.error(field, "must be UTF-8 of at most 128 bytes");
    } else {
      out[key] = *it;
    }
  }
  if (out.contains("maxtext_layout") &&
      !core::parse_maxtext_layout(out["maxtext_layout"].get<std::string>()))
    in.error("software.maxtext_layout", "must be package or legacy");
  return out;
}

// What a rank ran with (`environment` of its running report, engine/worker/software_probe.h):
// versions as strings, commits as hex. Unknown keys are ignored (a newer agent may report more);
// null when absent.
json rank_environment(http::ObjectReader& in) {
  auto given = in.object("environment", false, false);
  if (!given) return nullptr;
  json out = json::object();
  for (const auto& [key, value] : given->items()) {
    const bool version =
        key == "python" || key == "jax" || key == "jaxlib" || key == "libtpu" || key == "maxtext";
    const bool commit = key == "git_commit" || key == "maxtext_commit";
    if ((!version && !commit) || value.is_null()) continue;
    const std::string field = "environment." + key;
    if (!value.is_string()) {
      in.error(field, "must be a string");
      continue;
    }
    const auto& text = value.get_ref<const std::string&>();
    if (version && (text.empty() || text.size() > 128 || !http::valid_utf8(text)))
      in.error(field, "must be UTF-8 of 1 to 128 bytes");
    else if (commit && (text.size() < 7 || text.size() > 64 ||
                        text.find_first_not_of("0123456789abcdef") != std::string::npos))
      in.error(field, "must be 7 to 64 lowercase hex digits");
    else
      out[key] = value;
  }
  return out.empty() ? json(nullptr) : out;
}

http::Response handle_register(ApiContext& ctx, http::RequestContext& rc) {
  auto body = http::parse_json_object(rc.request);
  http::ObjectReader in(body);
  auto cluster = in.string("cluster", true);
  auto slice = in.integer("slice", true, 0, 1 << 20);
  auto host = in.integer("host", true, 0, 1 << 20);
  auto hostname = in.string("hostname", false, 255).value_or("");
  auto address = in.string("address", false, 255).value_or("");
  auto devices = in.integer("devices", false, 0, 1 << 20).value_or(1);
  auto version = in.string("version", false, 64).value_or("");
  auto instance = in.string("instance", false, 128).value_or("");
  // The credential this host's agent got last time (kept in its workdir): proof that a new agent
  // process is the same host's, so it may take the slot over at once.
  auto presented = in.string("credential", false, 512);
  json running = running_list(in, body);
  const json software = software_report(in);
  in.reject_unknown_fields();
  in.finish();

  if (!rc.principal->worker_id.empty() || !rc.principal->attempt_id.empty())
    throw http::forbidden("register with the cluster's worker token");
  const std::string credential = secrets::new_token("pdh_");
  auto out = ctx.db.transact([&](db::Transaction& tx) {
    auto cluster_id = find_cluster_id(tx, *cluster);
    if (!cluster_id) throw http::not_found("no cluster " + *cluster);
    if (*cluster_id != token_cluster(rc))
      throw http::forbidden("this worker token belongs to another cluster");
    auto c = tx.exec("SELECT accelerator, num_slices FROM clusters WHERE id = $1 FOR SHARE",
                     {*cluster_id});
    const auto acc = core::parse_accelerator(c.at(0, "accelerator"));
    const int hosts = acc.value ? acc.value->hosts_per_slice : 1;
    const auto slices = c.int64(0, "num_slices");
    std::vector<http::FieldError> errors;
    if (*slice >= slices)
      errors.push_back({"slice", "the cluster has slices 0.." + std::to_string(slices - 1)});
    if (*host >= hosts)
      errors.push_back({"host", "a slice of " + c.at(0, "accelerator") + " has hosts 0.." +
                                    std::to_string(hosts - 1)});
    if (!errors.empty()) throw http::unprocessable("no such host in this cluster", errors);

    auto prev = tx.exec(
        "SELECT id, instance, credential_hash, (last_heartbeat_at > now() - make_interval(secs "
        "=> $4::int)) AS live, extract(epoch FROM now() - last_heartbeat_at)::int AS silent "
        "FROM workers WHERE cluster_id = $1 AND slice = $2::int AND host = $3::int FOR UPDATE",
        {*cluster_id, std::to_string(*slice), std::to_string(*host),
         std::to_string(ctx.engine.heartbeat_deadline.count())});
    if (!prev.empty() && prev.at(0, "instance") != instance && prev.boolean(0, "live") &&
        !prev.is_null(0, "credential_hash") &&
        !(presented && secrets::token_hash(*presented) == prev.at(0, "credential_hash")))
      throw http::conflict("host " + std::to_string(*slice) + "/" + std::to_string(*host) +
                           " of cluster " + *cluster + " is held by a live agent (heard " +
                           prev.at(0, "silent") +
                           " s ago); stop it, or wait until it has been silent for " +
                           std::to_string(ctx.engine.heartbeat_deadline.count()) + " s");
    // The same agent process registering again (the server restarted, or it lost touch) with
    // its current credential keeps it: its ranks' log uploads and exit reports in flight carry
    // that credential, and a fresh one would refuse them (401) before the agent has read it.
    // A new agent process (another instance) always gets a fresh one; the old one dies.
    const bool same_process = !prev.empty() && !instance.empty() &&
                              prev.at(0, "instance") == instance &&
                              !prev.is_null(0, "credential_hash") && presented &&
                              secrets::token_hash(*presented) == prev.at(0, "credential_hash");
    const std::string issued = same_process ? *presented : credential;
    std::string worker_id;
    if (prev.empty()) {
      worker_id = new_id("wkr");
      tx.exec(
          "INSERT INTO workers (id, cluster_id, slice, host, hostname, address, devices, "
          "version, instance, credential_hash, software) VALUES ($1, $2, $3::int, $4::int, $5, "
          "$6, $7::int, $8, $9, $10, $11::jsonb)",
          {worker_id, *cluster_id, std::to_string(*slice), std::to_string(*host), hostname, address,
           std::to_string(devices), version, instance, secrets::token_hash(credential),
           core::json_text(software)});
    } else {
      worker_id = prev.at(0, "id");
      // Another agent process took over this host: what the old one ran is gone, except the
      // ranks the new one says it still supervises.
      if (prev.at(0, "instance") != instance)
        sched::mark_worker_ranks_lost(tx, worker_id,
                                      "its agent restarted (host " + std::to_string(*slice) + "/" +
                                          std::to_string(*host) + ")",
                                      ctx.engine, core::json_text(running));
      tx.exec(
          "UPDATE workers SET hostname = $2, address = $3, devices = $4::int, version = $5, "
          "instance = $6, registered_at = now(), last_heartbeat_at = now(), credential_hash = $7, "
          "software = $8::jsonb WHERE id = $1",
          {worker_id, hostname, address, std::to_string(devices), version, instance,
           secrets::token_hash(issued), core::json_text(software)});
    }
    sched::notify_runs(tx, "*");  // new capacity: the scheduler looks again
    return json{{"worker_id", worker_id},
                {"credential", issued},
                {"heartbeat_seconds", ctx.engine.heartbeat_interval.count()},
                {"heartbeat_deadline_seconds", ctx.engine.heartbeat_deadline.count()}};
  });
  // The host's previous credential (another agent process's) is refused from the next request.
  forget_credentials(ctx);
  return json_response(200, out);
}

http::Response handle_heartbeat(ApiContext& ctx, http::RequestContext& rc) {
  auto body = http::parse_json_object(rc.request);
  http::ObjectReader in(body);
  auto worker_id = in.string("worker_id", true, 64);
  const bool reports_running = body.contains("running") && body["running"].is_array();
  const json running = running_list(in, body);
  // "notice": what the host's metadata server announced (a string), or null when nothing stands;
  // absent from agents that do not watch one.
  const bool reports_notice = in.present("notice");
  std::optional<std::string> notice;
  if (reports_notice && in.is_null("notice"))
    in.any("notice");
  else if (reports_notice)
    notice = in.string("notice", false, 200);
  if (notice && (notice->empty() || !std::all_of(notice->begin(), notice->end(), [](char c) {
                   return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' ||
                          c == '.' || c == ':' || c == ' ';
                 })))
    in.error("notice", "must be a short word or phrase ([A-Za-z0-9_.:- ]), or null");
  in.reject_unknown_fields();
  in.finish();
  require_worker_credential(rc, *worker_id);

  // The common heartbeat changes nothing but the time: one statement, one round trip, its commit
  // not waiting for the WAL flush (set_config(..., true) holds for its implicit transaction; see
  // below why that is safe). It also says whether the rest is needed: a notice that changed, or
  // a rank running for two intervals that the agent no longer lists. 1,000 agents send 333 of
  // these a second, and each round trip waits for a database process among the busy ones.
  const auto fast = ctx.db.exec_alone(
      "WITH cfg AS (SELECT set_config('synchronous_commit', 'off', true) AS v), "
      "w AS (UPDATE workers SET last_heartbeat_at = now() WHERE id = $1 RETURNING notice) "
      "SELECT (SELECT count(*) FROM cfg) AS cfg, (SELECT count(*) FROM w) AS found, "
      "($2::boolean AND EXISTS (SELECT 1 FROM w WHERE w.notice IS DISTINCT FROM $3::text)) "
      "AS notice_changed, ($4::jsonb IS NOT NULL AND EXISTS (SELECT 1 FROM attempt_hosts ah "
      "WHERE ah.worker_id = $1 AND ah.ended_at IS NULL AND ah.state = 'running' AND "
      "ah.started_at < now() - make_interval(secs => $5::int) AND NOT EXISTS (SELECT 1 FROM "
      "jsonb_array_elements($4::jsonb) k WHERE k->>'attempt_id' = ah.attempt_id AND "
      "(k->>'rank')::int = ah.rank))) AS unlisted",
      {*worker_id, reports_notice ? "true" : "false", notice ? db::Param(*notice) : db::Param(),
       reports_running ? db::Param(core::json_text(running)) : db::Param(),
       std::to_string(2 * ctx.engine.heartbeat_interval.count())});
  if (fast.int64(0, "found") == 0)
    throw http::not_found("unknown worker " + *worker_id + "; register again");
  if (!fast.boolean(0, "notice_changed") && !fast.boolean(0, "unlisted"))
    return json_response(200, {{"heartbeat_seconds", ctx.engine.heartbeat_interval.count()}});

  ctx.db.transact([&](db::Transaction& tx) {
    // A heartbeat's commit does not wait for the WAL flush (one fsync, milliseconds on a real
    // disk: the heartbeat lane's two threads could not keep up with 1,000 agents every 3 s).
    // Safe: everything a heartbeat writes is sent again by the next one (its time, the ranks
    // the agent supervises, the notice that stands), so losing the last fraction of a second
    // of heartbeats in a database crash forgets nothing; and any later synchronous commit,
    // e.g. the dispatcher acting on a rank this heartbeat declared lost, flushes it first.
    tx.exec("SET LOCAL synchronous_commit TO off");
    require_worker(tx, rc, *worker_id);
    tx.exec("UPDATE workers SET last_heartbeat_at = now() WHERE id = $1", {*worker_id});
    if (reports_notice) sched::record_worker_notice(tx, *worker_id, notice, ctx.engine);
    if (!reports_running) return;
    // The agent lists every rank it supervises from launch until its exit was acknowledged. A
    // rank the server has running on this worker for two heartbeats that the agent does not list
    // is gone without a word (the agent lost it): it is lost now, not at the deadline, which
    // would never come while the agent keeps heartbeating.
    sched::mark_worker_ranks_lost(tx, *worker_id, "no longer supervised by its agent", ctx.engine,
                                  core::json_text(running), 2 * ctx.engine.heartbeat_interval);
  });
  return json_response(200, {{"heartbeat_seconds", ctx.engine.heartbeat_interval.count()}});
}

// One look at the database: a cancel, an assignment, or nothing.
std::optional<json> next_for_worker(ApiContext& ctx, const http::RequestContext& rc,
                                    const std::string& worker_id) {
  require_worker_credential(rc, worker_id);
  const std::string redeliver = std::to_string(ctx.engine.redelivery_after.count());
  // Most looks find nothing (an agent polling again after its rank ended, a parked poll's
  // periodic recheck): one read says so, instead of a transaction of five statements. It
  // matches every row the transaction below would act on, and some more.
  auto look = ctx.db.exec_alone(
      "SELECT EXISTS (SELECT 1 FROM workers WHERE id = $1) AS known, EXISTS (SELECT 1 FROM "
      "attempt_hosts WHERE worker_id = $1 AND ended_at IS NULL AND (state = 'pending' OR "
      "(state = 'delivered' AND delivered_at < now() - make_interval(secs => $2::int)) OR "
      "(cancel_requested_at IS NOT NULL AND state IN ('delivered', 'running') AND "
      "(cancel_delivered_at IS NULL OR cancel_delivered_at < now() - make_interval(secs => "
      "$2::int))))) AS work",
      {worker_id, redeliver});
  if (look.boolean(0, "known") && !look.boolean(0, "work")) return std::nullopt;
  return ctx.db.transact([&](db::Transaction& tx) -> std::optional<json> {
    require_worker(tx, rc, worker_id);
    // A rank delivered but never reported running, cancelled, and still silent after its cancel
    // was delivered a while ago: the agent never started it (a lost response). It ends here;
    // an agent that did start it after all gets 409 for its late report and stops it.
    // (ended_at IS NULL, implied by the state, lets the worker's partial index serve it: without
    // it every look scanned the whole table, the database's main cost with 1,000 agents.)
    auto never_started = tx.exec(
        "UPDATE attempt_hosts SET state = 'cancelled', ended_at = now() WHERE worker_id = $1 AND "
        "ended_at IS NULL AND state = 'delivered' AND cancel_requested_at IS NOT NULL AND "
        "cancel_delivered_at < now() - make_interval(secs => $2::int) RETURNING attempt_id",
        {worker_id, redeliver});
    for (size_t i = 0; i < never_started.size(); ++i)
      sched::finish_attempt_if_done(tx, never_started.at(i, "attempt_id"), ctx.engine);
    auto cancels = tx.exec(
        "UPDATE attempt_hosts SET cancel_delivered_at = now() WHERE worker_id = $1 AND "
        "ended_at IS NULL AND cancel_requested_at IS NOT NULL AND state IN ('delivered', "
        "'running') AND (cancel_delivered_at IS NULL OR cancel_delivered_at < now() - "
        "make_interval(secs => $2::int)) RETURNING attempt_id",
        {worker_id, redeliver});
    if (!cancels.empty()) {
      json ids = json::array();
      for (size_t i = 0; i < cancels.size(); ++i) ids.push_back(cancels.at(i, "attempt_id"));
      return json{{"cancel", ids}, {"grace_seconds", ctx.engine.cancel_grace.count()}};
    }
    auto a = tx.exec(
        "SELECT ah.attempt_id, ah.rank, ah.command::text AS command, ah.env::text AS env, "
        "ah.workdir, ah.checkpoint_dir, a.run_id, a.state AS attempt_state, r.code_bundle, "
        "b.size_bytes AS code_bundle_bytes FROM attempt_hosts ah JOIN attempts a ON a.id = "
        "ah.attempt_id JOIN runs r ON r.id = a.run_id LEFT JOIN code_bundles b ON b.digest = "
        "r.code_bundle WHERE ah.worker_id = $1 AND ah.ended_at IS NULL "
        "AND ah.cancel_requested_at IS NULL AND (ah.state = 'pending' OR (ah.state = 'delivered' "
        "AND ah.delivered_at < now() - make_interval(secs => $2::int))) ORDER BY a.seq, ah.rank "
        "LIMIT 1 FOR UPDATE OF ah SKIP LOCKED",
        {worker_id, redeliver});
    if (a.empty()) return std::nullopt;
    const std::string attempt_id = a.at(0, "attempt_id");
    tx.exec(
        "UPDATE attempt_hosts SET state = 'delivered', delivered_at = now() WHERE attempt_id = $1 "
        "AND rank = $2::int",
        {attempt_id, a.at(0, "rank")});
    if (a.at(0, "attempt_state") == "pending") sched::mark_attempt_delivered(tx, attempt_id);
    return json{{"attempt_id", attempt_id},
                {"run_id", a.at(0, "run_id")},
                {"run_name", a.at(0, "run_id")},
                {"rank", a.int64(0, "rank")},
                {"command", json::parse(a.at(0, "command"))},
                {"env", json::parse(a.at(0, "env"))},
                {"workdir", a.at(0, "workdir")},
                {"checkpoint_dir", nullable_string(a, 0, "checkpoint_dir")},
                {"code_bundle", a.is_null(0, "code_bundle")
                                    ? json(nullptr)
                                    : json{{"digest", a.at(0, "code_bundle")},
                                           {"size_bytes", a.int64(0, "code_bundle_bytes")}}},
                {"grace_seconds", ctx.engine.cancel_grace.count()}};
  });
}

// The assignment long-poll, parked in the HTTP layer between looks at the database: it holds no
// handler thread while it waits, is woken by NOTIFY podium_agents <worker id> (through the
// hub's observer) and reads the database once per wake-up.
class AssignmentPoll final : public http::Deferred {
 public:
  AssignmentPoll(ApiContext& ctx, const http::RequestContext& rc, std::string worker_id,
                 std::chrono::steady_clock::time_point deadline, std::uint64_t since)
      : ctx_(ctx),
        request_(rc.request),
        params_(rc.params),
        principal_(rc.principal),
        route_(rc.route),
        worker_id_(std::move(worker_id)),
        deadline_(deadline),
        since_(since) {
    request_.body.clear();
  }

  http::Wait wait() override {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline_ - std::chrono::steady_clock::now());
    auto* hub = &ctx_.hub;
    // New work and cancels NOTIFY the worker. Redeliveries (an answer the agent never acted on,
    // scheduler.redelivery_after later) come from the clock alone: look again at that pace.
    const auto recheck =
        std::chrono::duration_cast<std::chrono::milliseconds>(ctx_.engine.redelivery_after);
    return {{"podium_agents:" + worker_id_},
            std::clamp(left, std::chrono::milliseconds(0), recheck),
            [hub, worker = worker_id_, since = since_] {
              return hub->fired("podium_agents", worker, since);
            }};
  }

  // Whether a wake-up or the recheck's timeout ended the wait, the database decides.
  std::optional<http::Response> resume(bool /*timed_out*/) override {
    since_ = ctx_.hub.generation();
    http::RequestContext rc{request_, params_, principal_, route_};
    if (auto next = next_for_worker(ctx_, rc, worker_id_)) return json_response(200, *next);
    if (ctx_.hub.stopping() || std::chrono::steady_clock::now() >= deadline_)
      return http::Response::empty(204);
    return std::nullopt;  // nothing yet: wait for the rest of the time
  }

 private:
  ApiContext& ctx_;
  http::Request request_;  // a copy: the HTTP layer's request is gone while this waits
  std::map<std::string, std::string> params_;
  std::optional<http::Principal> principal_;
  std::string route_;
  std::string worker_id_;
  std::chrono::steady_clock::time_point deadline_;
  std::uint64_t since_;
};

http::Response handle_assignment(ApiContext& ctx, http::RequestContext& rc) {
  auto worker_id = rc.request.query_param("worker_id");
  if (!worker_id || worker_id->empty() || worker_id->size() > 64)
    throw http::bad_request("worker_id is required", {{"worker_id", "required"}});
  const int64_t wait = query_integer(rc, "wait", 0, 60, "an integer from 0 to 60").value_or(25);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(wait);
  const auto since = ctx.hub.generation();
  if (auto next = next_for_worker(ctx, rc, *worker_id)) return json_response(200, *next);
  if (wait == 0 || ctx.hub.stopping()) return http::Response::empty(204);
  http::Response parked;
  parked.deferred = std::make_shared<AssignmentPoll>(ctx, rc, *worker_id, deadline, since);
  return parked;
}

http::Response handle_status(ApiContext& ctx, http::RequestContext& rc) {
  auto body = http::parse_json_object(rc.request);
  http::ObjectReader in(body);
  auto rank = in.integer("rank", true, 0, 1 << 20);
  auto state = in.choice("state", true, {"running", "exited"});
  std::optional<int64_t> exit_code, signal, pid;
  if (in.present("exit_code") && !in.is_null("exit_code"))
    exit_code = in.integer("exit_code", false, -1, 255);
  else
    in.any("exit_code");
  if (in.present("signal") && !in.is_null("signal"))
    signal = in.integer("signal", false, 1, 128);
  else
    in.any("signal");
  if (in.present("pid") && !in.is_null("pid"))
    pid = in.integer("pid", false, 1, INT32_MAX);
  else
    in.any("pid");
  in.string("worker_id", false, 64);
  const json environment = rank_environment(in);
  in.reject_unknown_fields();
  if (state && *state == "exited" && !exit_code && !signal)
    in.error("exit_code", "an exited rank needs exit_code or signal");
  in.finish();
  const std::string attempt_id = rc.param("id");
  const bool failed_exit = *state == "exited" && (signal || (exit_code && *exit_code != 0));

  // First the rank's own row, under its own lock only: a gang's reports commit side by side
  // (one WAL flush for many) instead of one after another behind the attempt's row lock, which
  // held 512 reports of a 256-host gang to about 120 a second. A failing rank ends the whole
  // attempt, so it takes the attempt's lock first, as every other path that ends one does.
  ctx.db.transact([&](db::Transaction& tx) {
    require_attempt(tx, rc, attempt_id, /*lock=*/failed_exit);
    require_own_rank(tx, rc, attempt_id, *rank);
    auto h = tx.exec(
        "SELECT state, exit_code, signal FROM attempt_hosts WHERE attempt_id = $1 AND rank = "
        "$2::int FOR UPDATE",
        {attempt_id, std::to_string(*rank)});
    if (h.empty())
      throw http::not_found("attempt " + attempt_id + " has no rank " + std::to_string(*rank));
    const std::string cur = h.at(0, "state");
    if (*state == "running") {
      if (cur == "running") return;  // a retried report: the attempt's step below still runs
      if (cur != "pending" && cur != "delivered")
        throw http::conflict("rank " + std::to_string(*rank) + " already ended (" + cur + ")");
      tx.exec(
          "UPDATE attempt_hosts SET state = 'running', started_at = now(), pid = $3::int, "
          "environment = $4::jsonb WHERE attempt_id = $1 AND rank = $2::int",
          {attempt_id, std::to_string(*rank), pid ? db::Param(std::to_string(*pid)) : db::Param(),
           environment.is_null() ? db::Param() : db::Param(core::json_text(environment))});
      return;
    }
    if (cur == "exited") {
      if (h.opt_int64(0, "exit_code") == exit_code && h.opt_int64(0, "signal") == signal) return;
      throw http::conflict("rank " + std::to_string(*rank) + " already reported another exit");
    }
    if (cur == "lost" || cur == "cancelled")
      throw http::conflict("rank " + std::to_string(*rank) + " was already declared " + cur);
    tx.exec(
        "UPDATE attempt_hosts SET state = 'exited', ended_at = now(), exit_code = $3::int, "
        "signal = $4::int, pid = COALESCE(pid, $5::int) WHERE attempt_id = $1 AND rank = $2::int",
        {attempt_id, std::to_string(*rank),
         exit_code ? db::Param(std::to_string(*exit_code)) : db::Param(),
         signal ? db::Param(std::to_string(*signal)) : db::Param(),
         pid ? db::Param(std::to_string(*pid)) : db::Param()});
    if (failed_exit) {
      const std::string what =
          signal ? "signal " + std::to_string(*signal) : "exit code " + std::to_string(*exit_code);
      // Ends the attempt: the other ranks get a cancel; finished here if none is left.
      sched::end_attempt(tx, attempt_id, "rank " + std::to_string(*rank) + " ended with " + what,
                         false, ctx.engine);
    }
  });

  // Then the attempt's step, in a transaction that began after the rank's commit: of a gang's
  // last reports, the one that committed last sees every other, so the attempt moves exactly
  // once (the UPDATE's condition is re-checked under the row lock). A report retried after a
  // crash between the two transactions takes this step then; the reaper's sweep is the net.
  auto out = ctx.db.transact([&](db::Transaction& tx) {
    if (*state == "running") {
      sched::start_attempt_if_all_running(tx, attempt_id);
    } else if (!failed_exit) {
      // Most exits are not the last: a look without a lock spares them the attempt's row lock.
      auto open =
          tx.exec("SELECT 1 FROM attempt_hosts WHERE attempt_id = $1 AND ended_at IS NULL LIMIT 1",
                  {attempt_id});
      if (open.empty()) sched::finish_attempt_if_done(tx, attempt_id, ctx.engine);
    }
    auto now =
        tx.exec("SELECT state, ending_cause IS NOT NULL AS ending FROM attempts WHERE id = $1",
                {attempt_id});
    return json{{"attempt_state", now.at(0, "state")}, {"cancel", now.boolean(0, "ending")}};
  });
  return json_response(200, out);
}

http::Response handle_logs(ApiContext& ctx, http::RequestContext& rc) {
  auto body = http::parse_json_object(rc.request);
  http::ObjectReader in(body);
  auto rank = in.integer("rank", true, 0, 1 << 20);
  auto seq = in.integer("seq", true, 0, INT64_MAX / 2);
  auto lines_json = in.any("lines");
  in.reject_unknown_fields();
  std::vector<std::string> lines;
  if (!lines_json || !lines_json->is_array())
    in.error("lines", "required: an array of strings");
  else if (lines_json->size() > kMaxLinesPerBatch)
    in.error("lines", "at most " + std::to_string(kMaxLinesPerBatch) + " lines per batch");
  else
    for (size_t i = 0; i < lines_json->size(); ++i) {
      if (!(*lines_json)[i].is_string()) {
        in.error("lines[" + std::to_string(i) + "]", "must be a string");
        break;
      }
      lines.push_back((*lines_json)[i].get<std::string>());
    }
  in.finish();
  const std::string attempt_id = rc.param("id");
  // Built once, outside the transaction: Database::transact runs it again after a retryable
  // error (a batch racing a copy of itself, batch_rows.h), and a batch moved into the first
  // run would be empty in the second, its lines acknowledged and lost.
  ingest::LogBatch batch;
  batch.attempt_id = attempt_id;
  batch.rank = static_cast<int>(*rank);
  batch.seq = *seq;
  batch.lines = std::move(lines);
  auto result = ctx.db.transact([&](db::Transaction& tx) {
    auto attempt = require_attempt(tx, rc, attempt_id);
    require_own_rank(tx, rc, attempt_id, *rank);
    // A worker's credential: require_own_rank read the rank's row (404 when there is none). An
    // attach token skips that read: the rank must still exist.
    if (!rc.principal->attempt_id.empty() &&
        tx.exec("SELECT 1 FROM attempt_hosts WHERE attempt_id = $1 AND rank = $2::int",
                {attempt_id, std::to_string(*rank)})
            .empty())
      throw http::not_found("attempt " + attempt_id + " has no rank " + std::to_string(*rank));
    batch.run_id = attempt.run_id;
    batch.attempt_number = attempt.number;
    return ingest::ingest_log_batch(tx, batch);
  });
  if (result.stored > 0)
    ctx.metrics.count("podium_log_lines_ingested_total", "Log lines stored from agents.",
                      result.stored);
  if (result.metric_steps > 0)
    ctx.metrics.count("podium_metric_steps_ingested_total",
                      "Step metrics parsed from rank 0's lines.", result.metric_steps);
  return json_response(200, {{"stored", result.stored}, {"next_seq", result.next_seq}});
}

http::Response handle_checkpoint(ApiContext& ctx, http::RequestContext& rc) {
  auto body = http::parse_json_object(rc.request);
  http::ObjectReader in(body);
  auto step = in.integer("step", true, 0, INT64_MAX / 2);
  auto uri = in.string("uri", true, 4096);
  std::optional<int64_t> bytes;
  if (in.present("bytes") && !in.is_null("bytes"))
    bytes = in.integer("bytes", false, 0, INT64_MAX);
  else
    in.any("bytes");
  in.reject_unknown_fields();
  in.finish();
  const std::string attempt_id = rc.param("id");
  json deletions;
  bool created = ctx.db.transact([&](db::Transaction& tx) {
    auto attempt = require_attempt(tx, rc, attempt_id);
    require_own_rank(tx, rc, attempt_id, std::nullopt);
    auto r = tx.exec(
        "INSERT INTO checkpoints (id, run_id, attempt_id, attempt_number, step, uri, bytes) "
        "VALUES ($1, $2, $3, $4::int, $5::bigint, $6, $7::bigint) ON CONFLICT (run_id, step) DO "
        "NOTHING RETURNING id",
        {new_id("ckp"), attempt.run_id, attempt_id, std::to_string(attempt.number),
         std::to_string(*step), *uri, bytes ? db::Param(std::to_string(*bytes)) : db::Param()});
    // Retention, then what this agent is to delete (again, on a retried report).
    choose_checkpoint_deletions(tx, attempt.run_id, attempt_id);
    deletions = checkpoint_deletions_for(tx, attempt.run_id, attempt_id);
    if (r.empty()) return false;
    // An elastic run waiting to grow does so now, from this checkpoint, unless it is the final
    // one (MaxText names it steps - 1, the reference workload steps): nothing left to grow for.
    auto grow = tx.exec(
        "SELECT r.current_slices FROM runs r JOIN attempts a ON a.run_id = r.id WHERE a.id = $1 "
        "AND r.grow_requested AND r.state = 'running' AND a.finished_at IS NULL AND "
        "a.ending_cause IS NULL AND (r.spec->>'steps' IS NULL OR $2::bigint + 1 < "
        "(r.spec->>'steps')::bigint)",
        {attempt_id, std::to_string(*step)});
    if (!grow.empty())
      sched::end_attempt(tx, attempt_id,
                         "grow: restarting on more slices from checkpoint " + std::to_string(*step),
                         false, ctx.engine);
    return true;
  });
  return json_response(created ? 201 : 200,
                       {{"step", *step}, {"created", created}, {"delete", deletions}});
}

// The agent's outcome of a deletion a checkpoint report's answer asked for (idempotent).
http::Response handle_checkpoint_deletion(ApiContext& ctx, http::RequestContext& rc) {
  auto body = http::parse_json_object(rc.request);
  http::ObjectReader in(body);
  auto step = in.integer("step", true, 0, INT64_MAX / 2);
  in.string("uri", false, 4096);
  auto deleted = in.boolean("deleted", true);
  std::string error;
  if (in.present("error") && !in.is_null("error"))
    error = in.string("error", false, 4096).value_or("");
  else
    in.any("error");
  in.reject_unknown_fields();
  if (deleted && !*deleted && error.empty()) in.error("error", "a failed deletion needs its error");
  in.finish();
  const std::string attempt_id = rc.param("id");
  auto out = ctx.db.transact([&](db::Transaction& tx) {
    auto attempt = require_attempt(tx, rc, attempt_id);
    require_own_rank(tx, rc, attempt_id, std::nullopt);
    return record_checkpoint_deletion(tx, attempt.run_id, *step, *deleted, error);
  });
  return json_response(200, out);
}

// POST /agent/attach: a rank under an external engine joins its attempt (docs/executors.md).
// 200 with the rank's assignment once every rank joined, 202 while others are missing.
http::Response handle_attach(ApiContext& ctx, http::RequestContext& rc) {
  if (rc.principal->attempt_id.empty())
    throw http::forbidden("attach needs the attempt's attach token (PODIUM_ATTACH_TOKEN)");
  auto body = http::parse_json_object(rc.request);
  http::ObjectReader in(body);
  in.string("engine", false, 32);
  auto rank = in.integer("rank", true, 0, 1 << 20);
  in.integer("world", false, 1, 1 << 20);
  auto slice = in.integer("slice", true, 0, 1 << 20);
  auto host = in.integer("host", true, 0, 1 << 20);
  auto engine_job = in.string("engine_job", false, 128).value_or("");
  in.string("engine_restart", false, 32);
  in.string("node", false, 255);
  auto address = in.string("address", false, 255).value_or("");
  auto hostname = in.string("hostname", false, 255).value_or("");
  in.string("version", false, 64);
  in.reject_unknown_fields();
  in.finish();
  sched::JoinRequest join;
  join.attempt_id = rc.principal->attempt_id;
  join.rank = static_cast<int>(*rank);
  join.slice = static_cast<int>(*slice);
  join.host = static_cast<int>(*host);
  join.address = address.empty() ? "127.0.0.1" : address;
  join.hostname = hostname;
  join.engine_job = engine_job;
  try {
    auto out = ctx.db.transact(
        [&](db::Transaction& tx) { return sched::join_external_rank(tx, join, ctx.engine); });
    if (!out) return json_response(202, {{"state", "waiting"}, {"retry_after_ms", 500}});
    return json_response(200, *out);
  } catch (const sched::JoinRefused& e) {
    if (e.kind == sched::JoinRefused::Kind::mismatch)
      throw http::unprocessable(e.what(), {{"rank", e.what()}});
    throw http::conflict(e.what());
  } catch (const std::invalid_argument& e) {
    // The spec cannot be launched: the attempt ends as a config failure, the rank is told why.
    ctx.db.transact([&](db::Transaction& tx) {
      // Recorded as a config signature: the classifier then fails the run (deterministic).
      tx.exec(
          "INSERT INTO attempt_signatures (attempt_id, rank, signature, excerpt) VALUES ($1, "
          "$2::int, $3, $4) ON CONFLICT DO NOTHING",
          {join.attempt_id, std::to_string(join.rank),
           std::string(core::to_string(core::FailureSignature::invalid_config_value)),
           std::string("cannot launch: ") + e.what()});
      sched::end_attempt(tx, join.attempt_id, std::string("cannot launch: ") + e.what(), false,
                         ctx.engine);
    });
    throw http::conflict(std::string("cannot launch: ") + e.what());
  }
}

}  // namespace

void register_agent_routes(http::Router& router, ApiContext& ctx) {
  RouteTable routes(router, ctx);
  routes.add("POST", "/api/v1/agent/attach", http::Access::agent, handle_attach);
  routes.add("POST", "/api/v1/agent/register", http::Access::agent, handle_register);
  // Liveness: its own handler threads and database connections, so a busy server never
  // misses a heartbeat and declares healthy hosts lost.
  routes.add("POST", "/api/v1/agent/heartbeat", http::Access::agent, handle_heartbeat,
             http::liveness_lane());
  routes.add("GET", "/api/v1/agent/assignment", http::Access::agent, handle_assignment);
  routes.add("POST", "/api/v1/agent/attempts/{id}/status", http::Access::agent, handle_status);
  routes.add("POST", "/api/v1/agent/attempts/{id}/logs", http::Access::agent, handle_logs);
  routes.add("POST", "/api/v1/agent/attempts/{id}/checkpoints", http::Access::agent,
             handle_checkpoint);
  routes.add("POST", "/api/v1/agent/attempts/{id}/checkpoint-deletions", http::Access::agent,
             handle_checkpoint_deletion);
}

}  // namespace podium::api
