#include "engine/cli/args.h"

#include <charconv>
#include <cmath>
#include <cstdlib>

namespace podium::cli {

std::optional<std::string> ParsedArgs::value(const std::string& name) const {
  const auto it = options.find(name);
  if (it == options.end() || it->second.empty()) return std::nullopt;
  return it->second.back();
}

std::vector<std::string> ParsedArgs::values(const std::string& name) const {
  const auto it = options.find(name);
  return it == options.end() ? std::vector<std::string>{} : it->second;
}

namespace {

const OptionSpec* find_long(const std::vector<OptionSpec>& spec, std::string_view name) {
  for (const auto& o : spec) {
    if (o.name == name) return &o;
  }
  return nullptr;
}

const OptionSpec* find_short(const std::vector<OptionSpec>& spec, char c) {
  for (const auto& o : spec) {
    if (o.short_name != 0 && o.short_name == c) return &o;
  }
  return nullptr;
}

}  // namespace

std::variant<ParsedArgs, UsageError> parse_args(const std::vector<std::string>& tokens,
                                                const std::vector<OptionSpec>& spec) {
  ParsedArgs out;
  const auto record = [&](const OptionSpec& o, std::string v) -> std::optional<UsageError> {
    auto& slot = out.options[o.name];
    if (!slot.empty() && !o.repeatable)
      return UsageError{"option --" + o.name + " given more than once"};
    slot.push_back(std::move(v));
    return std::nullopt;
  };

  bool options_done = false;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const std::string& t = tokens[i];
    if (options_done || t.size() < 2 || t[0] != '-') {
      out.positionals.push_back(t);  // "-" alone is a positional: stdin for -f
      continue;
    }
    if (t == "--") {
      options_done = true;
      continue;
    }
    const OptionSpec* o = nullptr;
    std::optional<std::string> inline_value;
    std::string shown;
    if (t[1] == '-') {
      const std::string body = t.substr(2);
      const auto eq = body.find('=');
      const std::string name = body.substr(0, eq);
      if (eq != std::string::npos) inline_value = body.substr(eq + 1);
      shown = "--" + name;
      o = find_long(spec, name);
    } else {
      shown = t.substr(0, 2);
      o = find_short(spec, t[1]);
      if (t.size() > 2) inline_value = t.substr(2);
    }
    if (o == nullptr) {
      // A negative number is a value, but no option takes a positional that looks like one.
      return UsageError{"unknown option " + shown};
    }
    std::string v;
    if (o->takes_value) {
      if (inline_value) {
        v = *inline_value;
      } else if (i + 1 < tokens.size()) {
        v = tokens[++i];
      } else {
        return UsageError{"option " + shown + " needs a value" +
                          (o->value_name.empty() ? std::string() : " (" + o->value_name + ")")};
      }
    } else if (inline_value) {
      return UsageError{"option " + shown + " takes no value"};
    }
    if (auto err = record(*o, std::move(v))) return *err;
  }
  return out;
}

std::optional<long long> parse_int(std::string_view text) {
  if (text.empty()) return std::nullopt;
  if (text.front() == '+') text.remove_prefix(1);
  long long v = 0;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return v;
}

std::optional<double> parse_double(std::string_view text) {
  if (text.empty()) return std::nullopt;
  if (text.front() == '+') text.remove_prefix(1);
  double v = 0;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || ptr != end || !std::isfinite(v)) return std::nullopt;
  return v;
}

}  // namespace podium::cli
