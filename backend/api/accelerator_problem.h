#pragma once
// The 422 for an accelerator name the catalog does not know (engine/core/topology/accelerator.h),
// the same wherever a request names one (cluster create, run import): the message with the valid
// choices, the `accelerator` field, and `valid_choices` as a list for clients to offer.
#include "backend/common/problem.h"
#include "engine/core/topology/accelerator.h"

namespace podium::api {

http::Problem accelerator_problem(const core::Parsed<core::AcceleratorType>& refused);

}  // namespace podium::api
