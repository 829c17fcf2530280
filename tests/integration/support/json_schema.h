#pragma once
// A JSON Schema (2020-12) validator for the subset docs/openapi.yaml uses, so that the tests can
// hold every response the server sends to the schema the contract gives it.
//
//   JsonSchema schemas(openapi_document);        // the whole document: $refs resolve inside it
//   auto errors = schemas.validate(body, openapi_document["components"]["schemas"]["Run"]);
//   // errors: {"/items/0/state: \"paused\" is not one of [queued, ...]", ...}; empty: conforms
//
// Supported keywords: $ref (local, "#/..."), type (a name or a list), enum, const, properties,
// required, additionalProperties, minProperties, maxProperties, items, minItems, maxItems,
// uniqueItems, minimum, maximum, exclusiveMinimum, exclusiveMaximum, minLength, maxLength,
// pattern, allOf, anyOf, oneOf, not, and format "date-time" (RFC 3339, checked: the contract
// promises it). Annotations (description, examples, default, x-*, ...) are ignored. Any other
// keyword is reported as an error instead of being skipped, so a schema can never claim more
// than this validator checks.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace podium::it {

class JsonSchema {
 public:
  explicit JsonSchema(nlohmann::json document);

  // Every way `instance` fails `schema` (a node of the document, or a {"$ref": ...}), each as
  // "<JSON pointer into the instance>: <what is wrong>". Empty when it conforms.
  std::vector<std::string> validate(const nlohmann::json& instance,
                                    const nlohmann::json& schema) const;

  const nlohmann::json& document() const { return document_; }

 private:
  nlohmann::json document_;
};

// RFC 3339 date-time ("2025-01-31T12:00:00.000000Z", an offset instead of Z allowed).
bool is_rfc3339_date_time(const std::string& s);

}  // namespace podium::it
