#pragma once
// docs/openapi.yaml as a checker of responses: every response the integration and e2e tests
// receive through Api (support/api.h) is held to the schema the document gives the operation and
// status, so that the contract the dashboard's types are generated from cannot drift from what
// the server sends.
//
//   auto verdict = OpenApiContract::shared().check("GET", "/api/v1/runs?limit=5", 200,
//                                                  "application/json", body);
//   if (!verdict.errors.empty()) ...   // "GET /api/v1/runs -> 200 (listRuns): /items/0: ..."
//
// What is checked: the operation is found by method and path (HEAD answers as GET, without a
// body); the status is one the operation documents, or one that the document's conventions let
// any request get (400, 404, 405, 409, 413, 422, 431, 500, 503: problem+json); the Content-Type
// is one the response documents; a JSON body conforms to its schema; a response documented
// without content has no body. Paths outside /api/ that the document does not describe (the
// dashboard's files) are not checked.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/integration/support/json_schema.h"

namespace podium::it {

struct ContractVerdict {
  bool checked = false;             // false: the document does not describe this path
  std::string operation;            // operationId, or "(unknown path)"
  std::vector<std::string> errors;  // empty: conforms
};

class OpenApiContract {
 public:
  explicit OpenApiContract(nlohmann::json document);

  // The repository's docs/openapi.yaml, read once per process; a document that cannot be read
  // throws std::runtime_error (every test then fails with that message).
  static const OpenApiContract& shared();

  ContractVerdict check(const std::string& method, const std::string& target, int status,
                        const std::string& content_type, const std::string& body) const;

  // One event of a text/event-stream answer of GET `target` (200): its name is one the media
  // type's `x-podium-events` lists, and its data (JSON) conforms to the schema given there.
  ContractVerdict check_event(const std::string& target, const std::string& event,
                              const std::string& data) const;

 private:
  const nlohmann::json* find_path(const std::string& path) const;
  const nlohmann::json& deref(const nlohmann::json& node) const;
  void check_response(const nlohmann::json& response, bool head, int status,
                      const std::string& content_type, const std::string& body,
                      std::vector<std::string>& errors) const;

  JsonSchema schemas_;
};

// docs/openapi.yaml (or any OpenAPI YAML) as JSON: scalars typed by the YAML 1.2 core schema.
nlohmann::json load_openapi_yaml(const std::string& file);

// Responses checked and problems found by this process so far (for the run's summary line).
struct ContractTally {
  long checked = 0;
  long unchecked = 0;
  long failed = 0;
};
ContractTally contract_tally();
void count_contract_verdict(const ContractVerdict& v);

}  // namespace podium::it
