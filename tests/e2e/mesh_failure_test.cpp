// Issue 32 acceptance: a parallelism that JAX cannot lay out on the hosts' CPU devices fails
// inside JAX with JAX's own message, is classed `mesh` and is not retried, and Podium's plan of
// the same spec had predicted it.

#include <algorithm>
#include <chrono>

#include "tests/e2e/support/e2e.h"

namespace podium::e2e {
namespace {

using namespace std::chrono_literals;

class MeshFailure : public E2eTest {};

TEST_F(MeshFailure, JaxRefusesTheLayoutThePlanPredictedAndTheRunIsNotRetried) {
  // Two hosts of two devices: 4 devices in the slice; fsdp 3 cannot be laid out on them.
  const auto cluster = create_cluster("cpu-2x2", 1);
  start_workers(cluster, 1, 2);
  json spec = reference_spec(unique_name("mesh"), cluster, dataset(),
                             {.steps = 10, .checkpoint_period = 5, .max_restarts = 3});
  spec["parallelism"] = {{"ici_fsdp", 3}};

  // The plan predicts it, naming the product that does not match.
  const json plan = it::require_status(admin().post("/api/v1/plan", spec), 200).json;
  EXPECT_FALSE(plan.value("ok", true)) << plan.dump(2);
  const auto& errors = plan["errors"];
  const auto predicted = std::find_if(errors.begin(), errors.end(), [](const json& e) {
    return e.value("code", "") == "mesh_product_mismatch";
  });
  ASSERT_NE(predicted, errors.end()) << plan.dump(2);
  EXPECT_NE(predicted->value("message", "").find("4"), std::string::npos) << predicted->dump();
  // So a submission is refused; forced through, the run meets JAX.
  EXPECT_EQ(admin().post("/api/v1/runs", spec).status, 422);
  spec["force"] = true;
  const std::string id = submit(spec)["id"];

  json done;
  ASSERT_TRUE(wait_for_state(id, "failed", 180s, &done)) << diagnostics(id);
  EXPECT_EQ(done.value("failure_class", json()), json("mesh")) << done.dump(2);
  EXPECT_EQ(done.value("restarts", -1), 0) << done.dump(2);
  const auto att = attempts(id);
  ASSERT_EQ(att.size(), 1u) << describe_attempts(att);
  EXPECT_EQ(att[0].value("failure_class", json()), json("mesh")) << describe_attempts(att);

  // JAX's own words, from inside jax (mesh_utils), not a check of the workload's.
  bool jax_said = false;
  for (int rank : {0, 1})
    for (const auto& line : local_rank_lines(att[0], rank))
      jax_said =
          jax_said || line.find("Number of devices 4 must equal the product of mesh_shape") !=
                          std::string::npos;
  EXPECT_TRUE(jax_said) << diagnostics(id);
  // Both processes had joined through Podium's coordinator variables before the mesh failed.
  const auto lines0 = local_rank_lines(att[0], 0);
  EXPECT_TRUE(std::any_of(lines0.begin(), lines0.end(), [](const std::string& l) {
    return l.find("process 0 of 2") != std::string::npos;
  })) << diagnostics(id);
}

}  // namespace
}  // namespace podium::e2e
