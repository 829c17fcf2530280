#include "engine/cli/output.h"

#include "engine/core/text/http_status.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace podium::cli {

const Json* find_path(const Json& value, std::string_view dotted) {
  const Json* cur = &value;
  while (!dotted.empty()) {
    const auto dot = dotted.find('.');
    const std::string key(dotted.substr(0, dot));
    if (!cur->is_object()) return nullptr;
    const auto it = cur->find(key);
    if (it == cur->end()) return nullptr;
    cur = &*it;
    dotted = dot == std::string_view::npos ? std::string_view{} : dotted.substr(dot + 1);
  }
  return cur;
}

const Json* find_any(const Json& value, std::initializer_list<std::string_view> paths) {
  for (auto p : paths) {
    const Json* v = find_path(value, p);
    if (v != nullptr && !v->is_null()) return v;
  }
  return nullptr;
}

namespace {

std::string trim_zeros(std::string s) {
  if (s.find('.') == std::string::npos || s.find('e') != std::string::npos) return s;
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

std::string printf_double(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

bool is_scalar(const Json& v) {
  return !v.is_object() && !v.is_array();
}

size_t display_width(std::string_view s) {
  size_t n = 0;
  for (char c : s) {
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++n;  // count UTF-8 lead bytes only
  }
  return n;
}

std::string one_line(std::string s) {
  for (char& c : s) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  return s;
}

}  // namespace

std::string format_number(double v) {
  if (!std::isfinite(v)) return "-";
  if (std::fabs(v) < 1e15 && v == std::floor(v)) return printf_double("%.0f", v);
  const double a = std::fabs(v);
  // One decimal from 100 up: tpu7x's per-device peak is 1153.5, and "1154" would misstate it.
  if (a >= 100) return trim_zeros(printf_double("%.1f", v));
  if (a >= 1) return trim_zeros(printf_double("%.3f", v));
  return printf_double("%.4g", v);
}

std::string format_count(double v) {
  if (!std::isfinite(v)) return "-";
  const double a = std::fabs(v);
  struct Unit {
    double scale;
    const char* suffix;
  };
  for (const Unit u : {Unit{1e12, "T"}, Unit{1e9, "B"}, Unit{1e6, "M"}, Unit{1e3, "K"}}) {
    if (a >= u.scale) return printf_double("%.3g", v / u.scale) + u.suffix;
  }
  return format_number(v);
}

std::string format_bytes(double v) {
  if (!std::isfinite(v) || v < 0) return "-";
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  size_t unit = 0;
  while (v >= 1024 && unit + 1 < std::size(kUnits)) {
    v /= 1024;
    ++unit;
  }
  if (unit == 0) return printf_double("%.0f", v) + " B";
  return trim_zeros(printf_double("%.1f", v)) + " " + kUnits[unit];
}

std::string format_percent(double fraction) {
  if (!std::isfinite(fraction)) return "-";
  return trim_zeros(printf_double("%.1f", fraction * 100)) + "%";
}

std::string format_time(const Json* value) {
  if (value == nullptr || !value->is_string()) return format_value(value);
  std::string s = value->get<std::string>();
  // Only shorten what looks like RFC 3339 (YYYY-MM-DDTHH:MM:SS...); anything else is shown as is.
  if (s.size() >= 19 && s[4] == '-' && s[7] == '-' &&
      (s[10] == 'T' || s[10] == 't' || s[10] == ' ') && s[13] == ':' && s[16] == ':') {
    s = s.substr(0, 19);
    s[10] = ' ';
  }
  return s;
}

std::string format_value(const Json* value) {
  return value == nullptr ? "-" : format_value(*value);
}

std::string format_value(const Json& value) {
  if (value.is_null()) return "-";
  if (value.is_string()) return value.get<std::string>();
  if (value.is_boolean()) return value.get<bool>() ? "true" : "false";
  if (value.is_number_integer()) return value.dump();
  if (value.is_number_float()) return format_number(value.get<double>());
  if (value.is_array() &&
      std::all_of(value.begin(), value.end(), [](const Json& v) { return is_scalar(v); })) {
    std::string out;
    for (const auto& v : value) {
      if (!out.empty()) out += ", ";
      out += format_value(v);
    }
    return out.empty() ? "-" : out;
  }
  return value.dump();
}

Column field_column(std::string header, std::string path, bool right_align) {
  return Column{
      std::move(header),
      [path = std::move(path)](const Json& item) { return format_value(find_path(item, path)); },
      right_align};
}

std::string render_table(const std::vector<Column>& columns, const Json& items) {
  std::vector<std::vector<std::string>> cells;
  cells.emplace_back();
  for (const auto& c : columns) cells.back().push_back(c.header);
  if (items.is_array()) {
    for (const auto& item : items) {
      cells.emplace_back();
      for (const auto& c : columns) {
        std::string text = one_line(c.cell(item));
        cells.back().push_back(text.empty() ? "-" : std::move(text));
      }
    }
  }
  std::vector<size_t> width(columns.size(), 0);
  for (const auto& row : cells) {
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], display_width(row[i]));
  }
  std::string out;
  for (const auto& row : cells) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      const size_t pad = width[i] - display_width(row[i]);
      if (i > 0) line += "   ";
      if (columns[i].right_align) {
        line.append(pad, ' ');
        line += row[i];
      } else {
        line += row[i];
        line.append(pad, ' ');
      }
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line;
    out += '\n';
  }
  return out;
}

namespace {

void details(const Json& value, size_t indent, std::string& out);

void scalar_entry(const std::string& pad, const std::string& key, const Json& v, size_t indent,
                  std::string& out) {
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    if (s.find('\n') != std::string::npos) {
      out += pad + key + ": |\n";
      size_t start = 0;
      while (start <= s.size()) {
        auto nl = s.find('\n', start);
        if (nl == std::string::npos) nl = s.size();
        if (nl == s.size() && start == s.size()) break;  // a trailing newline ends the block
        out += std::string(indent + 2, ' ') + s.substr(start, nl - start) + "\n";
        start = nl + 1;
      }
      return;
    }
  }
  out += pad + key + ": " + format_value(v) + "\n";
}

void array_items(const Json& arr, size_t indent, std::string& out) {
  const std::string pad(indent, ' ');
  for (const auto& item : arr) {
    if (item.is_object() && !item.empty()) {
      std::string inner;
      details(item, indent + 2, inner);
      inner.replace(indent, 2, "- ");  // the first line of the item carries the dash
      out += inner;
    } else if (item.is_array()) {
      out += pad + "- " + item.dump() + "\n";
    } else if (item.is_object()) {
      out += pad + "- {}\n";
    } else {
      out += pad + "- " + format_value(item) + "\n";
    }
  }
}

void details(const Json& value, size_t indent, std::string& out) {
  const std::string pad(indent, ' ');
  if (!value.is_object()) {
    if (value.is_array()) {
      array_items(value, indent, out);
    } else {
      out += pad + format_value(value) + "\n";
    }
    return;
  }
  for (const auto& [key, v] : value.items()) {
    if (v.is_object()) {
      if (v.empty()) {
        out += pad + key + ": {}\n";
      } else {
        out += pad + key + ":\n";
        details(v, indent + 2, out);
      }
    } else if (v.is_array()) {
      if (v.empty()) {
        out += pad + key + ": []\n";
      } else if (std::all_of(v.begin(), v.end(), [](const Json& x) { return is_scalar(x); })) {
        out += pad + key + ": [" + format_value(v) + "]\n";
      } else {
        out += pad + key + ":\n";
        array_items(v, indent + 2, out);
      }
    } else {
      scalar_entry(pad, key, v, indent, out);
    }
  }
}

}  // namespace

std::string render_details(const Json& value) {
  std::string out;
  details(value, 0, out);
  return out;
}

namespace {

std::string string_field(const Json& obj, const char* key) {
  const auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return {};
  return it->is_string() ? it->get<std::string>() : it->dump();
}

std::string http_status_text(int status) {
  std::string s = "HTTP " + std::to_string(status);
  const auto reason = core::reason_phrase(status);
  if (!reason.empty()) s += " " + std::string(reason);
  return s;
}

}  // namespace

std::string render_problem(int status, std::string_view body) {
  Json problem = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!problem.is_object()) {
    // Not problem+json: a proxy's HTML page or plain text. Show the first line, bounded.
    std::string text(body.substr(0, body.find('\n')));
    while (!text.empty() && (text.back() == '\r' || text.back() == ' ')) text.pop_back();
    if (text.size() > 200) text = text.substr(0, 200) + "...";
    std::string out = "error: " + http_status_text(status);
    if (!text.empty()) out += ": " + text;
    return out + "\n";
  }
  std::string title = string_field(problem, "title");
  if (title.empty()) title = http_status_text(status);
  const std::string detail = string_field(problem, "detail");
  std::string out = "error: " + title;
  if (!detail.empty() && detail != title) out += ": " + detail;
  out += "\n";
  if (const auto it = problem.find("errors"); it != problem.end() && it->is_array()) {
    for (const auto& e : *it) {
      if (!e.is_object()) {
        out += "  " + format_value(e) + "\n";
        continue;
      }
      std::string label = string_field(e, "field");
      if (label.empty()) label = string_field(e, "code");
      const std::string message = string_field(e, "message");
      out +=
          "  " + (label.empty() ? message : label + (message.empty() ? "" : ": " + message)) + "\n";
      if (const std::string hint = string_field(e, "hint"); !hint.empty())
        out += "    hint: " + hint + "\n";
    }
  }
  return out;
}

}  // namespace podium::cli
