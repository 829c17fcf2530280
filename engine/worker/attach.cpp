#include "engine/worker/attach.h"

#include <thread>

#include "engine/core/text/json_text.h"
#include "engine/worker/assignment.h"
#include "engine/worker/code_tree.h"
#include "engine/worker/environment.h"
#include "engine/worker/log_spool.h"
#include "engine/worker/logging.h"
#include "engine/worker/rank_runner.h"

namespace podium::worker {

namespace {

using std::chrono::milliseconds;

// Sleeps in short slices so a stop request is seen quickly; false when stopped.
bool pause(std::chrono::milliseconds d, const std::atomic<bool>& stop) {
  const auto until = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < until) {
    if (stop) return false;
    std::this_thread::sleep_for(std::min<milliseconds>(
        milliseconds(100),
        std::chrono::duration_cast<milliseconds>(until - std::chrono::steady_clock::now()) +
            milliseconds(1)));
  }
  return !stop;
}

}  // namespace

int run_attach(const core::AttachIdentity& identity, const AttachOptions& options,
               std::shared_ptr<ControlPlane> api, std::shared_ptr<ProcessLauncher> launcher,
               std::shared_ptr<Clock> clock, const std::atomic<bool>& stop) {
  nlohmann::json body = core::to_json(identity);
  body["address"] = options.address;
  body["hostname"] = options.hostname;
  const auto deadline = std::chrono::steady_clock::now() + options.join_timeout;
  Backoff backoff;
  std::optional<Assignment> assignment;
  bool announced_wait = false;
  while (!assignment) {
    if (stop) return 128 + 15;
    if (std::chrono::steady_clock::now() >= deadline) {
      log().error("rank {}: not every rank joined within {} s; giving up", identity.rank,
                  std::chrono::duration_cast<std::chrono::seconds>(options.join_timeout).count());
      return kAttachUnreached;
    }
    const ApiResult r = api->call("POST", "attach", core::json_text(body), milliseconds(10000));
    if (r.ok() && r.status == 202) {
      if (!announced_wait)
        log().info("rank {}: joined; waiting for the other ranks", identity.rank);
      announced_wait = true;
      backoff.reset();
      if (!pause(milliseconds(500), stop)) return 128 + 15;
      continue;
    }
    if (r.ok()) {
      auto parsed = parse_assignment(r.json());
      if (auto* a = std::get_if<Assignment>(&parsed)) {
        assignment = std::move(*a);
        break;
      }
      log().error("rank {}: the server's assignment is unusable: {}", identity.rank,
                  std::holds_alternative<AssignmentError>(parsed)
                      ? std::get<AssignmentError>(parsed).message
                      : std::string("not an assignment"));
      return kAttachRefused;
    }
    if (!r.transient()) {
      log().error("rank {}: the server refused to attach it: {}", identity.rank, r.describe());
      return kAttachRefused;
    }
    log().warn("rank {}: server not reached ({}); retrying", identity.rank, r.describe());
    if (!pause(backoff.next(), stop)) return 128 + 15;
  }
  if (!options.command.empty()) assignment->command = options.command;
  if (assignment->invalid.empty() && !options.code_bundle.empty() &&
      options.code_bundle != assignment->code_bundle) {
    // The job was built for one bundle and Podium assigns another (or none): neither the image's
    // code nor a guess is what the run asked for. A job without PODIUM_CODE_BUNDLE (submitted
    // before bundles reached engines) takes the assignment's.
    assignment->invalid =
        std::string(kCodeBundleUnusable) + "the job names " + options.code_bundle +
        " but the assignment " +
        (assignment->code_bundle.empty() ? std::string("none") : assignment->code_bundle);
  }
  log().info(
      "rank {} of attempt {}: starting {}", assignment->rank, assignment->attempt_id,
      assignment->command.empty() ? std::string("(no command)") : assignment->command.front());

  std::filesystem::create_directories(options.workdir);
  SpoolBudget budget(256ull * 1024 * 1024);
  RankContext ctx;
  ctx.api = api.get();
  ctx.launcher = launcher.get();
  ctx.clock = clock.get();
  ctx.budget = &budget;
  ctx.agent_workdir = options.workdir;
  ctx.base_env = current_environment();
  // The token was for this process; the rank's program does not get it.
  std::erase_if(ctx.base_env, [](const std::string& e) {
    return e.rfind("PODIUM_ATTACH_TOKEN=", 0) == 0 || e.rfind("PODIUM_TOKEN=", 0) == 0;
  });
  ctx.echo = options.echo;
  ctx.probe_python = options.probe_python;
  RankRunner runner(std::move(*assignment), std::move(ctx));
  runner.start();
  bool cancelled = false;
  while (!runner.wait_finished(milliseconds(200))) {
    if (stop && !cancelled) {
      // The engine is stopping the task (scancel, pod deletion): the rank gets its grace.
      log().info("rank {}: stopping (grace {} s)", identity.rank, runner.grace().count() / 1000);
      runner.cancel(runner.grace());
      cancelled = true;
    }
  }
  const auto status = runner.exit_status();
  if (!status) return kAttachUnreached;
  if (status->signal) return 128 + *status->signal;
  return status->exit_code.value_or(1);
}

}  // namespace podium::worker
