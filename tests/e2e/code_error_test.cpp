// Issue 27 point 4 acceptance: a rank that dies on an ImportError before the first training step
// ends the run `failed` / `code_error` after one attempt, no restart spent although the budget
// allows some, with the exception line on the run. After the first step the same error is still
// an `error` that spends the budget.

#include <chrono>
#include <string>
#include <thread>

#include "tests/e2e/support/e2e.h"

namespace podium::e2e {
namespace {

using namespace std::chrono_literals;

constexpr const char* kExceptionLine =
    "ModuleNotFoundError: No module named 'podium_no_such_module'";

class CodeError : public E2eTest {};

TEST_F(CodeError, ImportErrorBeforeTheFirstStepFailsAtOnceWithTheMessage) {
  const auto cluster = create_cluster("cpu-2", 1);
  start_workers(cluster, 1, 2);
  // Rank 1 dies on the import; rank 0 waits to be stopped, as a gang peer would.
  const json run =
      submit(command_spec(unique_name("import"), cluster,
                          {"/bin/sh", "-c",
                           "if [ \"$JAX_PROCESS_ID\" = 1 ]; then exec /usr/bin/python3 -c 'import "
                           "podium_no_such_module'; fi; echo waiting; exec sleep 600"},
                          3));
  const std::string id = run["id"];

  json done;
  ASSERT_TRUE(wait_for_state(id, "failed", 120s, &done));
  EXPECT_EQ(done.value("failure_class", json()), json("code_error")) << diagnostics(id);
  EXPECT_EQ(done.value("restarts", -1), 0) << done.dump();
  EXPECT_EQ(done.value("recoveries", -1), 0) << done.dump();
  // GET /runs/{id} carries the exception line.
  const json shown = get_run(id);
  ASSERT_TRUE(shown.contains("failure_detail") && shown["failure_detail"].is_string())
      << shown.dump();
  const std::string detail = shown["failure_detail"];
  EXPECT_NE(detail.find(kExceptionLine), std::string::npos) << detail;
  EXPECT_NE(detail.find("rank 1"), std::string::npos) << detail;

  // Not retried although the budget (3) allowed it: exactly one attempt, whose rank 1 exited 1.
  std::this_thread::sleep_for(1s);
  const auto att = attempts(id);
  ASSERT_EQ(att.size(), 1u) << describe_attempts(att) << diagnostics(id);
  EXPECT_EQ(att[0].value("state", ""), "failed") << describe_attempts(att);
  EXPECT_EQ(att[0].value("failure_class", json()), json("code_error")) << describe_attempts(att);
  bool rank1_exited_1 = false;
  for (const auto& h : att[0].value("hosts", json::array()))
    if (h.value("rank", -1) == 1) rank1_exited_1 = h.value("exit_code", json()) == json(1);
  EXPECT_TRUE(rank1_exited_1) << describe_attempts(att);
  const json classification = att[0].value("classification", json());
  EXPECT_EQ(classification.value("deciding_signature", json()), json("python_code_error"))
      << classification.dump();
  EXPECT_EQ(classification.value("deciding_rank", json()), json(1)) << classification.dump();
  // The traceback is in the stored log as the rank printed it.
  bool line_stored = false;
  for (const auto& l : stored_logs(id, att[0].value("id", ""), 1))
    line_stored |= l.value("line", "") == kExceptionLine;
  EXPECT_TRUE(line_stored) << diagnostics(id);
  EXPECT_EQ(get_run(id).value("state", ""), "failed");
}

TEST_F(CodeError, ImportErrorAfterTheFirstStepSpendsTheBudget) {
  const auto cluster = create_cluster("cpu-1", 1);
  start_worker(cluster, 0, 0);
  // A step completes (MaxText's step line), then the same exception: not proof that the code
  // cannot run, so the generic error with its restarts.
  const json run = submit(command_spec(
      unique_name("late-import"), cluster,
      {"/usr/bin/python3", "-c",
       "print('completed step: 0, seconds: 0.5, TFLOP/s/device: 1.0, Tokens/s/device: 10.0, "
       "total_weights: 64, loss: 2.5', flush=True)\nimport podium_no_such_module"},
      1));
  const std::string id = run["id"];

  json done;
  ASSERT_TRUE(wait_for_state(id, "failed", 180s, &done));
  EXPECT_EQ(done.value("failure_class", json()), json("error")) << diagnostics(id);
  EXPECT_EQ(done.value("restarts", -1), 1) << done.dump();
  std::this_thread::sleep_for(1s);
  const auto att = attempts(id);
  ASSERT_EQ(att.size(), 2u) << describe_attempts(att) << diagnostics(id);
  for (const auto& a : att) {
    EXPECT_EQ(a.value("failure_class", json()), json("error")) << describe_attempts(att);
    EXPECT_EQ(a.value("first_step", json()), json(0)) << describe_attempts(att);
  }
  // The run still says why it failed: the exit, without the code-error wording.
  const json shown = get_run(id);
  EXPECT_EQ(shown.value("failure_detail", json()), json("rank 0 exited with code 1"))
      << shown.dump();
}

}  // namespace
}  // namespace podium::e2e
