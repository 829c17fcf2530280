#pragma once
// RFC 9457 problem+json responses: every error Podium returns has this shape.

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "backend/common/http_message.h"
#include "engine/core/validation/field_error.h"

namespace podium::http {

// The field errors a problem lists are core's (engine/core/validation/field_error.h), the type
// every validator reports, so a parser's errors pass through unchanged.
using core::FieldError;

// A handler throws Problem for an expected failure (bad input, not found, conflict); the router
// turns it into the response. Impossible states are not Problems: they are bugs (500).
struct Problem {
  int status = 500;
  std::string title;
  std::string detail;
  std::vector<FieldError> errors;
  nlohmann::json extra = nlohmann::json::object();  // extra members, e.g. {"plan": {...}}

  Response to_response() const;
};

// core::reason_phrase (engine/core/text/http_status.h), or "Error" for other codes: the
// problem+json title.
std::string status_title(int status);
// "about:blank"-style type URI per status, stable for clients to switch on.
std::string problem_type(int status);

Problem bad_request(std::string detail, std::vector<FieldError> errors = {});
Problem unauthorized(std::string detail = "missing or invalid credentials");
Problem forbidden(std::string detail = "not allowed for this account");
Problem not_found(std::string detail);
Problem conflict(std::string detail);
Problem unprocessable(std::string detail, std::vector<FieldError> errors = {});
Problem payload_too_large(std::string detail);
Problem unavailable(std::string detail);

}  // namespace podium::http
