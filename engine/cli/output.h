#pragma once
// Text output of the CLI: value formatting, aligned tables, an indented "details" view of one
// resource, and problem+json error rendering. Pure functions over JSON, unit-tested.

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/cli/json.h"

namespace podium::cli {

// The value at a dotted path ("accelerator.type"), nullptr when any step is missing.
const Json* find_path(const Json& value, std::string_view dotted);
// The first of several paths that is present and not null (field names that vary by version).
const Json* find_any(const Json& value, std::initializer_list<std::string_view> paths);

// "-" for null/missing, strings as is, numbers via format_number, arrays of scalars joined
// with ", ", other structures as compact JSON.
std::string format_value(const Json* value);
std::string format_value(const Json& value);
// Integers exactly; otherwise a few significant digits without trailing zeros.
std::string format_number(double v);
// 6.74B, 1.05M, 12.3K; integers below 1000 as is.
std::string format_count(double v);
// 1.5 GiB, 512 B.
std::string format_bytes(double v);
// A fraction as a percentage: 0.4321 → "43.2%".
std::string format_percent(double fraction);
// RFC 3339 timestamps shortened for tables: "2025-01-02T15:04:05.123Z" → "2025-01-02 15:04:05".
std::string format_time(const Json* value);

struct Column {
  std::string header;
  std::function<std::string(const Json& item)> cell;
  bool right_align = false;  // numbers read better right-aligned
};
// A column showing format_value of the field at `path`.
Column field_column(std::string header, std::string path, bool right_align = false);

// Header and one line per item, columns separated by three spaces, no trailing blanks.
// Widths count UTF-8 code points; newlines and tabs inside cells become spaces.
std::string render_table(const std::vector<Column>& columns, const Json& items);

// An indented key: value view of an object (nested objects indented, arrays of objects as
// "- " items, arrays of scalars inline, multi-line strings as "|" blocks).
std::string render_details(const Json& value);

// "error: <title>: <detail>" then one indented line per errors[] entry (field or code, message,
// hint). A body that is not problem+json is shown as "error: HTTP <status> <reason>: <text>".
std::string render_problem(int status, std::string_view body);

}  // namespace podium::cli
