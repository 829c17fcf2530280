#include "backend/common/problem.h"

#include "engine/core/text/http_status.h"

namespace podium::http {

std::string status_title(int status) {
  const auto phrase = core::reason_phrase(status);
  return phrase.empty() ? "Error" : std::string(phrase);
}

std::string problem_type(int status) {
  std::string title = status_title(status);
  std::string slug;
  for (char c : title) slug.push_back(c == ' ' ? '-' : static_cast<char>(std::tolower(c)));
  return "https://podium.dev/problems/" + slug;
}

Response Problem::to_response() const {
  nlohmann::json j = extra.is_object() ? extra : nlohmann::json::object();
  j["type"] = problem_type(status);
  j["title"] = title.empty() ? status_title(status) : title;
  j["status"] = status;
  j["detail"] = detail;
  if (!errors.empty()) {
    auto arr = nlohmann::json::array();
    for (const auto& e : errors) arr.push_back(core::to_json(e));
    j["errors"] = std::move(arr);
  }
  Response r;
  r.status = status;
  // Invalid UTF-8 from user input must not make serialization throw.
  r.body = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  r.set_header("Content-Type", "application/problem+json");
  return r;
}

Problem bad_request(std::string detail, std::vector<FieldError> errors) {
  return {400, "", std::move(detail), std::move(errors), nlohmann::json::object()};
}
Problem unauthorized(std::string detail) {
  return {401, "", std::move(detail), {}, nlohmann::json::object()};
}
Problem forbidden(std::string detail) {
  return {403, "", std::move(detail), {}, nlohmann::json::object()};
}
Problem not_found(std::string detail) {
  return {404, "", std::move(detail), {}, nlohmann::json::object()};
}
Problem conflict(std::string detail) {
  return {409, "", std::move(detail), {}, nlohmann::json::object()};
}
Problem unprocessable(std::string detail, std::vector<FieldError> errors) {
  return {422, "", std::move(detail), std::move(errors), nlohmann::json::object()};
}
Problem payload_too_large(std::string detail) {
  return {413, "", std::move(detail), {}, nlohmann::json::object()};
}
Problem unavailable(std::string detail) {
  return {503, "", std::move(detail), {}, nlohmann::json::object()};
}

}  // namespace podium::http
