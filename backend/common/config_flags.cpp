#include "backend/common/config_flags.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <map>
#include <set>

namespace podium {

namespace {

bool is_help(const std::string& a) {
  return a == "--help" || a == "-h";
}

// CLI11 reads "--flag=" as a missing value; here it is an empty one, as "--flag ''" is. CLI11
// also wants the tokens last-first.
std::vector<std::string> cli11_tokens(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  for (const auto& a : args) {
    if (a.size() > 3 && a.rfind("--", 0) == 0 && a.find('=') == a.size() - 1) {
      out.push_back(a.substr(0, a.size() - 1));
      out.emplace_back();
    } else {
      out.push_back(a);
    }
  }
  return {out.rbegin(), out.rend()};
}

// The value-taking flag last on the line with nothing after it (CLI11 takes the next token as a
// value whatever it looks like, so only the last flag can lack one).
ConfigError missing_value(const std::vector<std::string>& args) {
  const auto last = std::find_if(args.rbegin(), args.rend(),
                                 [](const std::string& a) { return a.rfind("--", 0) == 0; });
  const std::string name = last == args.rend() ? "" : last->substr(0, last->find('='));
  if (name == "--config") return {"--config: expects a file name"};
  if (name == "--set") return {"--set: expects key=value"};
  return {name + ": expects a value"};
}

}  // namespace

ConfigFlags parse_config_flags(const std::vector<std::string>& args) {
  ConfigFlags out;
  CLI::App app;
  app.set_help_flag();
  app.allow_extras();  // stray words and unknown flags: reported below, in the server's words
  app.add_flag("-h,--help", out.help);
  const auto all = CLI::MultiOptionPolicy::TakeAll;
  CLI::Option* config = app.add_option("--config")->expected(1)->multi_option_policy(all);
  CLI::Option* set = app.add_option("--set")->expected(1)->multi_option_policy(all);
  std::map<const CLI::Option*, std::string> key_of;
  for (const auto& k : config_keys()) {
    if (!k.flag.empty())
      key_of[app.add_option(k.flag)->expected(1)->multi_option_policy(all)] = k.key;
  }
  try {
    app.parse(cli11_tokens(args));
  } catch (const CLI::ArgumentMismatch&) {
    out.help = std::any_of(args.begin(), args.end(), is_help);
    if (!out.help) out.error = missing_value(args);
    return out;
  } catch (const CLI::ParseError& e) {
    out.error = ConfigError{e.what()};
    return out;
  }
  if (out.help) return out;
  if (!app.remaining().empty()) {
    out.error = ConfigError{"unknown flag '" + app.remaining().front() + "' (see --help)"};
    return out;
  }
  std::set<std::string> known;
  for (const auto& k : config_keys()) known.insert(k.key);
  // parse_order() has one entry per value, in command-line order: replay them.
  std::map<const CLI::Option*, size_t> taken;
  for (const CLI::Option* o : app.parse_order()) {
    const std::string& v = o->results().at(taken[o]++);
    if (o == config) {
      out.config_file = v;
    } else if (o == set) {
      const auto eq = v.find('=');
      if (eq == std::string::npos) {
        out.error = ConfigError{"--set: expects key=value"};
        return out;
      }
      if (!known.count(v.substr(0, eq))) {
        out.error = ConfigError{"--set: unknown key '" + v.substr(0, eq) + "'"};
        return out;
      }
      out.values.emplace_back(v.substr(0, eq), v.substr(eq + 1));
    } else if (auto it = key_of.find(o); it != key_of.end()) {
      out.values.emplace_back(it->second, v);
    }
  }
  return out;
}

}  // namespace podium
