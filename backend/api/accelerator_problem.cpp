#include "backend/api/accelerator_problem.h"

#include <string>

namespace podium::api {

http::Problem accelerator_problem(const core::AcceleratorError& e) {
  std::string choices;
  for (const auto& c : e.valid_choices) choices += (choices.empty() ? "" : ", ") + c;
  auto p = http::unprocessable(e.message + (choices.empty() ? "" : "; valid choices: " + choices),
                               {{"accelerator", e.message}});
  p.extra["valid_choices"] = e.valid_choices;
  return p;
}

}  // namespace podium::api
