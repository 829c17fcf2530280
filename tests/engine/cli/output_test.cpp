#include "engine/cli/output.h"

#include <gtest/gtest.h>

#include "engine/cli/exit_codes.h"

namespace podium::cli {
namespace {

TEST(Format, Values) {
  EXPECT_EQ(format_value(nullptr), "-");
  EXPECT_EQ(format_value(Json(nullptr)), "-");
  EXPECT_EQ(format_value(Json("x")), "x");
  EXPECT_EQ(format_value(Json(true)), "true");
  EXPECT_EQ(format_value(Json(42)), "42");
  EXPECT_EQ(format_value(Json(1.5)), "1.5");
  EXPECT_EQ(format_value(Json::array({2, 4, 4})), "2, 4, 4");
  EXPECT_EQ(format_value(Json::array()), "-");
  EXPECT_EQ(format_value(Json::parse(R"({"a":1})")), R"({"a":1})");
}

TEST(Format, Numbers) {
  EXPECT_EQ(format_number(3.0), "3");
  EXPECT_EQ(format_number(1.23456), "1.235");
  EXPECT_EQ(format_number(1.5), "1.5");
  EXPECT_EQ(format_number(134.91), "134.9");
  EXPECT_EQ(format_number(1153.5), "1153.5");
  EXPECT_EQ(format_number(11819.175), "11819.2");
  EXPECT_EQ(format_number(2307.0), "2307");
  EXPECT_EQ(format_number(0.000123456), "0.0001235");
  EXPECT_EQ(format_count(6.738e9), "6.74B");
  EXPECT_EQ(format_count(1048576), "1.05M");
  EXPECT_EQ(format_count(1500), "1.5K");
  EXPECT_EQ(format_count(999), "999");
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_bytes(1536), "1.5 KiB");
  EXPECT_EQ(format_bytes(3.0 * 1024 * 1024 * 1024), "3 GiB");
  EXPECT_EQ(format_percent(0.4321), "43.2%");
  EXPECT_EQ(format_percent(1), "100%");
}

TEST(Format, Time) {
  const Json t = "2025-01-02T15:04:05.123456Z";
  EXPECT_EQ(format_time(&t), "2025-01-02 15:04:05");
  const Json other = "yesterday";
  EXPECT_EQ(format_time(&other), "yesterday");
  EXPECT_EQ(format_time(nullptr), "-");
}

TEST(FindPath, DottedAndMissing) {
  const Json j = Json::parse(R"({"a":{"b":{"c":3}},"s":"x"})");
  ASSERT_NE(find_path(j, "a.b.c"), nullptr);
  EXPECT_EQ(*find_path(j, "a.b.c"), 3);
  EXPECT_EQ(find_path(j, "a.x"), nullptr);
  EXPECT_EQ(find_path(j, "s.t"), nullptr);  // through a non-object
  EXPECT_EQ(*find_any(j, {"nope", "s"}), "x");
}

TEST(Table, AlignsColumnsAndShowsMissingFieldsAsDash) {
  const Json items = Json::parse(R"([
    {"id":"r-1","name":"short","steps":5},
    {"id":"r-22","name":"a much longer name","steps":12345},
    {"id":"r-3"}
  ])");
  const std::string table = render_table({field_column("ID", "id"), field_column("NAME", "name"),
                                          field_column("STEPS", "steps", true)},
                                         items);
  EXPECT_EQ(table,
            "ID     NAME                 STEPS\n"
            "r-1    short                    5\n"
            "r-22   a much longer name   12345\n"
            "r-3    -                        -\n");
}

TEST(Table, NoTrailingBlanksAndUtf8Width) {
  const Json items = Json::parse(R"([{"a":"\u00e9t\u00e9","b":""},{"a":"x","b":"y\nz"}])");
  const std::string table = render_table({field_column("A", "a"), field_column("B", "b")}, items);
  EXPECT_EQ(table,
            "A     B\n"
            "\xC3\xA9t\xC3\xA9   -\n"
            "x     y z\n");
}

TEST(Table, HeaderOnlyForNoItems) {
  EXPECT_EQ(render_table({field_column("ID", "id")}, Json::array()), "ID\n");
}

TEST(Details, NestedView) {
  const Json j = Json::parse(R"({
    "name":"v7","accelerator":{"type":"tpu7x-64","physical_mesh":[2,4,4,2]},
    "labels":{},"tags":[],"hosts":[{"slice":0,"host":1},{"slice":0,"host":2}],
    "script":"line one\nline two\n","price":null})");
  EXPECT_EQ(render_details(j),
            "name: v7\n"
            "accelerator:\n"
            "  type: tpu7x-64\n"
            "  physical_mesh: [2, 4, 4, 2]\n"
            "labels: {}\n"
            "tags: []\n"
            "hosts:\n"
            "  - slice: 0\n"
            "    host: 1\n"
            "  - slice: 0\n"
            "    host: 2\n"
            "script: |\n"
            "  line one\n"
            "  line two\n"
            "price: -\n");
}

TEST(Problem, TitleDetailAndFieldErrors) {
  const std::string body = R"({"type":"about:blank","title":"Unprocessable Entity","status":422,
    "detail":"the run spec is invalid","errors":[{"field":"steps","message":"must be positive"},
    {"code":"hbm_exceeded","message":"needs 120 GiB","hint":"use remat_policy: full"}]})";
  EXPECT_EQ(render_problem(422, body),
            "error: Unprocessable Entity: the run spec is invalid\n"
            "  steps: must be positive\n"
            "  hbm_exceeded: needs 120 GiB\n"
            "    hint: use remat_policy: full\n");
}

TEST(Problem, TitleOnlyAndMissingTitle) {
  EXPECT_EQ(render_problem(409, R"({"title":"Conflict"})"), "error: Conflict\n");
  EXPECT_EQ(render_problem(404, R"({"detail":"no run r-1"})"),
            "error: HTTP 404 Not Found: no run r-1\n");
}

TEST(Problem, NonJsonBody) {
  EXPECT_EQ(render_problem(502, "<html>bad gateway</html>\nmore"),
            "error: HTTP 502 Bad Gateway: <html>bad gateway</html>\n");
  EXPECT_EQ(render_problem(500, ""), "error: HTTP 500 Internal Server Error\n");
  EXPECT_EQ(render_problem(599, ""), "error: HTTP 599\n");
  const std::string long_body(500, 'x');
  EXPECT_EQ(render_problem(500, long_body).size(),
            std::string("error: HTTP 500 Internal Server Error: ").size() + 203 + 1);
}

TEST(ExitCodes, StatusMapping) {
  EXPECT_EQ(exit_code_for_status(200), kExitOk);
  EXPECT_EQ(exit_code_for_status(201), kExitOk);
  EXPECT_EQ(exit_code_for_status(204), kExitOk);
  EXPECT_EQ(exit_code_for_status(400), kExitFailed);
  EXPECT_EQ(exit_code_for_status(401), kExitAuth);
  EXPECT_EQ(exit_code_for_status(403), kExitAuth);
  EXPECT_EQ(exit_code_for_status(404), kExitNotFound);
  EXPECT_EQ(exit_code_for_status(409), kExitFailed);
  EXPECT_EQ(exit_code_for_status(413), kExitFailed);
  EXPECT_EQ(exit_code_for_status(422), kExitFailed);
  EXPECT_EQ(exit_code_for_status(503), kExitFailed);
  EXPECT_EQ(kExitUsage, 2);
  EXPECT_EQ(kExitTransport, 3);
}

}  // namespace
}  // namespace podium::cli
