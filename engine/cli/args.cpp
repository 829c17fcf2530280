#include "engine/cli/args.h"

#include <CLI/CLI.hpp>

#include <algorithm>
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

// How a token names an option in messages: "--name" (without "=value") or "-x".
std::string shown_name(const std::string& token) {
  if (token.rfind("--", 0) == 0) return token.substr(0, token.find('='));
  return token.substr(0, 2);
}

bool looks_like_option(const std::string& token) {
  return token.size() >= 2 && token[0] == '-' && token != "--";
}

using Declared = std::vector<std::pair<const OptionSpec*, CLI::Option*>>;

const OptionSpec* declared(const Declared& options, const std::string& shown) {
  for (const auto& [o, added] : options) {
    if (added->check_name(shown)) return o;
  }
  return nullptr;
}

// A flag given "=value" (CLI11 would take "--force=true" as --force).
std::optional<std::string> flag_with_value(const std::vector<std::string>& tokens,
                                           const Declared& options) {
  for (const auto& token : tokens) {
    if (token == "--") break;
    if (!looks_like_option(token) || token.find('=') == std::string::npos) continue;
    const OptionSpec* o = declared(options, shown_name(token));
    if (o != nullptr && !o->takes_value) return "option " + shown_name(token) + " takes no value";
  }
  return std::nullopt;
}

// CLI11's ArgumentMismatch, in the CLI's words: a value-taking option last with nothing after it
// (CLI11 takes the next token as an option's value whatever it looks like).
std::string missing_value(const std::vector<std::string>& tokens, const Declared& options) {
  const auto last = std::find_if(tokens.rbegin(), tokens.rend(), looks_like_option);
  const std::string shown = last == tokens.rend() ? std::string() : shown_name(*last);
  const OptionSpec* o = declared(options, shown);
  if (o == nullptr) return "option " + shown + " is malformed";
  return "option " + shown + " needs a value" +
         (o->value_name.empty() ? std::string() : " (" + o->value_name + ")");
}

}  // namespace

std::variant<ParsedArgs, UsageError> parse_args(const std::vector<std::string>& tokens,
                                                const std::vector<OptionSpec>& spec) {
  // CLI11 does the parsing; the messages stay the CLI's own (the usage lines and help text are
  // generated from the same OptionSpecs by commands.cpp). Every option collects all its
  // occurrences, so that "given more than once" is decided here, per OptionSpec::repeatable.
  CLI::App app;
  app.set_help_flag();  // --help is an ordinary OptionSpec (global_options())
  app.allow_extras();   // unknown options are reported below, in the CLI's words
  ParsedArgs out;
  app.add_option("args", out.positionals);
  Declared options;
  for (const auto& o : spec) {
    std::string names = "--" + o.name;
    if (o.short_name != 0) names += std::string(",-") + o.short_name;
    CLI::Option* added = o.takes_value ? app.add_option(names)->expected(1)
                                       : app.add_flag(names)->disable_flag_override();
    added->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    options.emplace_back(&o, added);
  }
  if (auto error = flag_with_value(tokens, options)) return UsageError{*error};
  // CLI11 reads "--name=" as a missing value; here it is an empty one, as "--name ''" is.
  std::vector<std::string> reversed;
  bool options_done = false;
  for (const auto& token : tokens) {
    options_done = options_done || token == "--";
    const bool empty_inline = token.rfind("--", 0) == 0 && token == shown_name(token) + "=";
    const OptionSpec* o =
        !options_done && empty_inline ? declared(options, shown_name(token)) : nullptr;
    if (o != nullptr && o->takes_value) {
      reversed.push_back(shown_name(token));
      reversed.emplace_back();
    } else {
      reversed.push_back(token);
    }
  }
  std::reverse(reversed.begin(), reversed.end());
  try {
    app.parse(reversed);
  } catch (const CLI::ArgumentMismatch&) {
    return UsageError{missing_value(tokens, options)};
  } catch (const CLI::ParseError& e) {
    return UsageError{e.what()};
  }
  for (const auto& extra : app.remaining()) {
    // "--" ends the options (what follows it is already among the positionals).
    if (extra != "--") return UsageError{"unknown option " + shown_name(extra)};
  }
  for (const auto& [o, added] : options) {
    if (added->count() == 0) continue;
    if (added->count() > 1 && !o->repeatable) {
      return UsageError{"option --" + o->name + " given more than once"};
    }
    // Flags hold one "" per occurrence.
    out.options[o->name] =
        o->takes_value ? added->results() : std::vector<std::string>(added->count(), "");
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
