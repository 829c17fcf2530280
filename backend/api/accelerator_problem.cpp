#include "backend/api/accelerator_problem.h"

#include <string>

namespace podium::api {

http::Problem accelerator_problem(const core::Parsed<core::AcceleratorType>& refused) {
  const std::string& message = refused.errors.front().message;
  std::string choices;
  for (const auto& c : refused.valid_choices) choices += (choices.empty() ? "" : ", ") + c;
  auto p = http::unprocessable(message + (choices.empty() ? "" : "; valid choices: " + choices),
                               {{"accelerator", message}});
  p.extra["valid_choices"] = refused.valid_choices;
  return p;
}

}  // namespace podium::api
