#pragma once
// Command-line option parsing for `podium`, on CLI11: long options (--name VALUE, --name=VALUE),
// short options (-f VALUE, -fVALUE), flags, "--" to end options. Errors are values, not
// exceptions, worded as the CLI words them.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace podium::cli {

struct OptionSpec {
  std::string name;     // long name without dashes: "state" for --state
  char short_name = 0;  // 'f' for -f, 0 for none
  bool takes_value = false;
  bool repeatable = false;  // may be given more than once (values are kept in order)
  std::string value_name;   // for help: "URL", "N"
  std::string help;
};

class ParsedArgs {
 public:
  std::vector<std::string> positionals;
  std::map<std::string, std::vector<std::string>> options;  // flags hold one "" per occurrence

  bool has(const std::string& name) const { return options.count(name) > 0; }
  // The (last) value of an option, nullopt when absent.
  std::optional<std::string> value(const std::string& name) const;
  std::vector<std::string> values(const std::string& name) const;
};

struct UsageError {
  std::string message;
};

// Parses tokens (argv without the program and command words) against spec. Unknown options,
// a missing value, a value given to a flag and a non-repeatable option given twice are errors.
std::variant<ParsedArgs, UsageError> parse_args(const std::vector<std::string>& tokens,
                                                const std::vector<OptionSpec>& spec);

// Strict numeric parsing for option values: the whole text must be the number.
std::optional<long long> parse_int(std::string_view text);
std::optional<double> parse_double(std::string_view text);

}  // namespace podium::cli
