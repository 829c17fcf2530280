#pragma once
// podium-server's command line, parsed with CLI11: --help, --config FILE, --set key=value and one
// flag per configuration key that has one (config_keys()). Values are kept in command-line
// order, since a later one overrides an earlier one for the same key.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "backend/common/config.h"

namespace podium {

struct ConfigFlags {
  bool help = false;
  std::optional<std::string> config_file;
  std::vector<std::pair<std::string, std::string>> values;  // (key, value), in order
  std::optional<ConfigError> error;                         // what is wrong, said as a flag
};

ConfigFlags parse_config_flags(const std::vector<std::string>& args);

}  // namespace podium
