// The response checker of the integration and e2e tests (support/json_schema.h,
// support/openapi_contract.h): that it rejects what does not conform, accepts what does, and that
// docs/openapi.yaml itself is a document it can check with (every $ref resolves, every keyword
// is one it implements). No server, no database.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <set>

#include "tests/integration/support/env.h"
#include "tests/integration/support/json_schema.h"
#include "tests/integration/support/openapi_contract.h"

namespace podium::it {
namespace {

using nlohmann::json;

bool mentions(const std::vector<std::string>& errors, const std::string& what) {
  for (const auto& e : errors)
    if (e.find(what) != std::string::npos) return true;
  return false;
}

const json kSchemas = json::parse(R"({
  "components": {"schemas": {
    "Stamp": {"type": "string", "format": "date-time"},
    "Thing": {
      "type": "object", "additionalProperties": false, "required": ["id", "state", "at"],
      "properties": {
        "id": {"type": "string", "minLength": 1, "maxLength": 4, "pattern": "^t"},
        "state": {"type": "string", "enum": ["on", "off"]},
        "count": {"type": ["integer", "null"], "minimum": 0, "maximum": 10},
        "at": {"$ref": "#/components/schemas/Stamp"},
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2, "uniqueItems": true},
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        "kind": {"oneOf": [{"const": "a"}, {"type": "integer"}]},
        "either": {"anyOf": [{"type": "boolean"}, {"type": "null"}]}
      }
    }
  }}
})");

TEST(JsonSchema, AcceptsAConformingInstance) {
  JsonSchema s(kSchemas);
  const json thing = {{"id", "t1"},         {"state", "on"},
                      {"count", nullptr},   {"at", "2025-01-31T12:00:00.000000Z"},
                      {"tags", {"x", "y"}}, {"labels", {{"k", "v"}}},
                      {"kind", 3},          {"either", true}};
  EXPECT_EQ(s.validate(thing, {{"$ref", "#/components/schemas/Thing"}}),
            std::vector<std::string>{});
  // 2.0 is an integer in JSON Schema (nlohmann keeps it a float).
  EXPECT_TRUE(s.validate(json::parse("2.0"), {{"type", "integer"}}).empty());
}

TEST(JsonSchema, NamesEveryDeviationWithItsPointer) {
  JsonSchema s(kSchemas);
  const json thing = {{"id", "x12345"},    {"state", "paused"},       {"count", 11},
                      {"at", "yesterday"}, {"tags", {"x", "x", "z"}}, {"labels", {{"k", 1}}},
                      {"kind", "b"},       {"either", "no"},          {"extra", 1}};
  const auto errors = s.validate(thing, {{"$ref", "#/components/schemas/Thing"}});
  for (const char* want : {"/id: \"x12345\" does not match ^t", "/id: longer than 4",
                           "/state: \"paused\" is not one of", "/count: 11 is above the maximum",
                           "/at: \"yesterday\" is not an RFC 3339", "/tags: more than 2 items",
                           "/tags: items 0 and 1 are equal", "/labels/k: integer 1 where string",
                           "/kind: matches none of the oneOf", "/either: matches none of the anyOf",
                           "/: property 'extra' is not in the schema"})
    EXPECT_TRUE(mentions(errors, want)) << want << " not in " << ::testing::PrintToString(errors);
  EXPECT_TRUE(mentions(s.validate(json::object(), {{"$ref", "#/components/schemas/Thing"}}),
                       "required property 'id' is missing"));
  EXPECT_TRUE(mentions(s.validate(1, {{"oneOf", {{{"type", "integer"}}, {{"type", "number"}}}}}),
                       "matches 2 of the oneOf alternatives"));
}

TEST(JsonSchema, RefusesWhatItCannotCheckInsteadOfPassingIt) {
  JsonSchema s(kSchemas);
  EXPECT_TRUE(mentions(s.validate(1, {{"$ref", "#/components/schemas/Nope"}}), "unresolvable"));
  EXPECT_TRUE(mentions(s.validate(1, {{"multipleOf", 2}}), "'multipleOf' is not supported"));
  // Annotations describe and never fail.
  EXPECT_TRUE(s.validate(1, {{"description", "d"}, {"examples", {2}}, {"x-podium", true}}).empty());
}

TEST(JsonSchema, Rfc3339DateTimes) {
  EXPECT_TRUE(is_rfc3339_date_time("2025-01-31T12:00:00Z"));
  EXPECT_TRUE(is_rfc3339_date_time("2025-01-31T12:00:00.000000Z"));
  EXPECT_TRUE(is_rfc3339_date_time("2025-01-31T12:00:00+02:00"));
  EXPECT_FALSE(is_rfc3339_date_time("2025-01-31 12:00:00Z"));
  EXPECT_FALSE(is_rfc3339_date_time("2025-13-31T12:00:00Z"));
  EXPECT_FALSE(is_rfc3339_date_time("2025-01-31T12:00:00"));
}

const json kDocument = json::parse(R"({
  "paths": {
    "/api/v1/things/{id}": {
      "get": {"operationId": "getThing", "responses": {
        "200": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}}},
        "404": {"$ref": "#/components/responses/NotFound"}}},
      "delete": {"operationId": "deleteThing", "responses": {"204": {"description": "gone"}}}
    },
    "/api/v1/things/{id}/stream": {
      "get": {"operationId": "streamThing", "responses": {
        "200": {"content": {"text/event-stream": {"schema": {"type": "string"},
                "x-podium-events": {"description": "d", "thing": {"$ref": "#/components/schemas/Thing"}}}}}}}
    },
    "/api/v1/things/import": {
      "post": {"operationId": "importThing", "responses": {
        "201": {"content": {"text/plain; charset=utf-8": {"schema": {"type": "string"}}}}}}
    }
  },
  "components": {
    "responses": {
      "NotFound": {"content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}},
      "BadRequest": {"content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}},
      "Unavailable": {"content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}}
    },
    "schemas": {
      "Thing": {"type": "object", "additionalProperties": false, "required": ["id"],
                "properties": {"id": {"type": "string"}}},
      "Problem": {"type": "object", "required": ["status"], "properties": {"status": {"type": "integer"}}}
    }
  }
})");

TEST(OpenApiContract, HoldsEachResponseToItsOperationAndStatus) {
  OpenApiContract c(kDocument);
  auto ok = c.check("GET", "/api/v1/things/t1?x=1", 200, "application/json", R"({"id":"t1"})");
  EXPECT_TRUE(ok.checked);
  EXPECT_EQ(ok.operation, "getThing");
  EXPECT_TRUE(ok.errors.empty()) << ::testing::PrintToString(ok.errors);

  EXPECT_TRUE(mentions(
      c.check("GET", "/api/v1/things/t1", 200, "application/json", R"({"id":"t1","n":2})").errors,
      "property 'n' is not in the schema"));
  EXPECT_TRUE(mentions(c.check("GET", "/api/v1/things/t1", 200, "text/html", "<p>").errors,
                       "Content-Type 'text/html' is not documented"));
  EXPECT_TRUE(mentions(c.check("GET", "/api/v1/things/t1", 200, "application/json", "{").errors,
                       "not JSON"));
  EXPECT_TRUE(mentions(c.check("GET", "/api/v1/things/t1", 201, "application/json", "{}").errors,
                       "status 201 is not documented for getThing"));
  EXPECT_TRUE(mentions(c.check("DELETE", "/api/v1/things/t1", 204, "", "x").errors,
                       "documented without a body"));
  EXPECT_TRUE(c.check("DELETE", "/api/v1/things/t1", 204, "", "").errors.empty());
  // HEAD answers as GET without a body.
  EXPECT_TRUE(c.check("HEAD", "/api/v1/things/t1", 200, "application/json", "").errors.empty());
}

TEST(OpenApiContract, HoldsEachEventOfAStreamToTheSchemaOfItsName) {
  OpenApiContract c(kDocument);
  auto ok = c.check_event("/api/v1/things/t1/stream?x=1", "thing", R"({"id":"t1"})");
  EXPECT_EQ(ok.operation, "streamThing");
  EXPECT_TRUE(ok.errors.empty()) << ::testing::PrintToString(ok.errors);
  EXPECT_TRUE(mentions(c.check_event("/api/v1/things/t1/stream", "thing", R"({"id":1})").errors,
                       "event 'thing': /id: integer 1 where string"));
  EXPECT_TRUE(mentions(c.check_event("/api/v1/things/t1/stream", "other", "{}").errors,
                       "event 'other' is not documented"));
  EXPECT_TRUE(mentions(c.check_event("/api/v1/things/t1/stream", "description", "{}").errors,
                       "event 'description' is not documented"));
  EXPECT_TRUE(mentions(c.check_event("/api/v1/things/t1/stream", "thing", "{").errors, "not JSON"));
  EXPECT_TRUE(mentions(c.check_event("/api/v1/things/t1", "thing", "{}").errors,
                       "no event stream with x-podium-events is documented for getThing"));
}

TEST(OpenApiContract, LiteralSegmentsWinAndConventionsCoverTheRest) {
  OpenApiContract c(kDocument);
  // "/things/import" is its own operation, not getThing's {id}.
  auto imported = c.check("POST", "/api/v1/things/import", 201, "text/plain; charset=utf-8", "ok");
  EXPECT_EQ(imported.operation, "importThing");
  EXPECT_TRUE(imported.errors.empty()) << ::testing::PrintToString(imported.errors);
  // Statuses any request may get are problem+json.
  EXPECT_TRUE(
      c.check("GET", "/api/v1/things/t1", 503, "application/problem+json", R"({"status":503})")
          .errors.empty());
  EXPECT_TRUE(mentions(c.check("PUT", "/api/v1/things/t1", 405, "application/json", "{}").errors,
                       "Content-Type 'application/json' is not documented"));
  EXPECT_TRUE(mentions(c.check("GET", "/api/v1/nothing", 200, "application/json", "{}").errors,
                       "status 200 is not documented for (unknown path)"));
  EXPECT_TRUE(
      c.check("GET", "/api/v1/nothing", 404, "application/problem+json", R"({"status":404})")
          .errors.empty());
  // The dashboard's files are not the API's.
  EXPECT_FALSE(c.check("GET", "/runs/abc", 200, "text/html", "<html>").checked);
}

// Every schema node of the document, with where it is.
void each_schema(const json& node, const std::string& at,
                 const std::function<void(const json&, const std::string&)>& visit) {
  if (!node.is_object()) return;
  visit(node, at);
  for (const char* k : {"items", "additionalProperties", "not"})
    if (node.contains(k) && node[k].is_object()) each_schema(node[k], at + "/" + k, visit);
  if (node.contains("properties"))
    for (const auto& [name, sub] : node["properties"].items())
      each_schema(sub, at + "/properties/" + name, visit);
  for (const char* k : {"allOf", "anyOf", "oneOf"})
    if (node.contains(k))
      for (size_t i = 0; i < node[k].size(); ++i)
        each_schema(node[k][i], at + "/" + k + "/" + std::to_string(i), visit);
}

TEST(OpenApiContract, TheRepositorysDocumentUsesOnlyWhatTheCheckerImplements) {
  const json doc = load_openapi_yaml((repo_root() / "docs" / "openapi.yaml").string());
  JsonSchema schemas(doc);
  std::vector<std::string> problems;
  const auto lint = [&](const json& schema, const std::string& at) {
    // Validating null against the node visits every keyword of it: unsupported keywords and
    // unresolvable $refs report themselves whatever the instance.
    for (const auto& e : schemas.validate(nullptr, schema))
      if (e.find("not supported") != std::string::npos ||
          e.find("unresolvable") != std::string::npos)
        problems.push_back(at + ": " + e);
  };
  for (const auto& [name, schema] : doc["components"]["schemas"].items())
    each_schema(schema, "#/components/schemas/" + name, lint);
  int media = 0;
  for (const auto& [path, item] : doc["paths"].items())
    for (const auto& [method, op] : item.items()) {
      if (!op.is_object() || !op.contains("responses")) continue;
      for (const auto& [status, response] : op["responses"].items())
        if (response.contains("content"))
          for (const auto& [type, m] : response["content"].items())
            if (m.contains("schema")) {
              ++media;
              each_schema(m["schema"], path + " " + method + " " + status + " " + type, lint);
            }
    }
  EXPECT_GT(media, 50);
  EXPECT_TRUE(problems.empty()) << ::testing::PrintToString(problems);
}

// Every object a response can hold, following $refs (each component once), with where it is.
void each_response_object(const json& doc, const json& node, const std::string& at,
                          std::set<std::string>& seen,
                          const std::function<void(const json&, const std::string&)>& visit) {
  if (!node.is_object()) return;
  if (node.contains("$ref")) {
    const std::string ref = node["$ref"].get<std::string>();
    if (!seen.insert(ref).second) return;
    const json& target = doc.at(json::json_pointer(ref.substr(1)));
    each_response_object(doc, target, ref, seen, visit);
    return;
  }
  bool object = node.contains("properties");
  if (node.contains("type")) {
    const json& t = node["type"];
    object = object || t == "object" || (t.is_array() && std::count(t.begin(), t.end(), "object"));
  }
  if (object) visit(node, at);
  for (const char* k : {"items", "additionalProperties", "not"})
    if (node.contains(k)) each_response_object(doc, node[k], at + "/" + k, seen, visit);
  if (node.contains("properties"))
    for (const auto& [name, sub] : node["properties"].items())
      each_response_object(doc, sub, at + "/properties/" + name, seen, visit);
  for (const char* k : {"allOf", "anyOf", "oneOf"})
    if (node.contains(k))
      for (size_t i = 0; i < node[k].size(); ++i)
        each_response_object(doc, node[k][i], at + "/" + k + "/" + std::to_string(i), seen, visit);
}

// The schemas are exact: an object a response holds says what else it may hold
// (additionalProperties false, or the schema of its values for a map); none is left open by
// default or by `additionalProperties: true`, which would let any member through unchecked.
TEST(OpenApiContract, EveryObjectInAResponseSaysWhatMembersItMayHave) {
  const json doc = load_openapi_yaml((repo_root() / "docs" / "openapi.yaml").string());
  std::set<std::string> seen;
  std::vector<std::string> open;
  int objects = 0;
  const auto check = [&](const json& schema, const std::string& at) {
    ++objects;
    const auto extra = schema.find("additionalProperties");
    if (extra == schema.end() || *extra == true) open.push_back(at);
  };
  for (const auto& [path, item] : doc["paths"].items())
    for (const auto& [method, op] : item.items()) {
      if (!op.is_object() || !op.contains("responses")) continue;
      for (const auto& [status, response] : op["responses"].items()) {
        const json& r =
            response.contains("$ref")
                ? doc.at(json::json_pointer(response["$ref"].get<std::string>().substr(1)))
                : response;
        if (r.contains("content"))
          for (const auto& [type, m] : r["content"].items()) {
            const std::string at = path + " " + method + " " + status + " " + type;
            if (m.contains("schema")) each_response_object(doc, m["schema"], at, seen, check);
            if (m.contains("x-podium-events"))
              for (const auto& [event, schema] : m["x-podium-events"].items())
                if (event != "description")
                  each_response_object(doc, schema, at + " event " + event, seen, check);
          }
      }
    }
  EXPECT_GT(objects, 100);
  EXPECT_TRUE(open.empty()) << ::testing::PrintToString(open);
}

}  // namespace
}  // namespace podium::it
