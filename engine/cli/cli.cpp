// Dispatch, configuration, help and the version command of `podium`.

#include "engine/cli/cli.h"

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <map>
#include <thread>

#include "engine/cli/commands.h"
#include "engine/cli/exit_codes.h"

namespace podium::cli {

HttpTransport::HttpTransport(const ClientConfig& config)
    : client_(config.server, config.token), config_(config) {}

client::HttpClient::Result HttpTransport::request(const std::string& method,
                                                  const std::string& path,
                                                  const std::string& body) {
  client::RequestOptions options;
  options.timeout = config_.timeout;
  // A PUT carries a code bundle (up to the server's limit, 128 MiB by default): give the
  // upload ten minutes however short the per-request timeout is.
  if (method == "PUT")
    options.timeout = std::max(options.timeout, std::chrono::milliseconds(600000));
  return client_.request(method, path, body, options);
}

std::optional<client::HttpError> HttpTransport::stream(const std::string& path,
                                                       const client::SseParser::Handler& on_event) {
  return client_.stream_events(path, on_event, config_.idle_timeout);
}

CliEnv CliEnv::system() {
  CliEnv env;
  env.getenv = [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  };
  env.connect = [](const ClientConfig& c) -> std::unique_ptr<Transport> {
    return std::make_unique<HttpTransport>(c);
  };
  env.sleep = [](std::chrono::milliseconds d) { std::this_thread::sleep_for(d); };
  env.in = &std::cin;
  return env;
}

const std::vector<OptionSpec>& global_options() {
  static const std::vector<OptionSpec> options{
      {"server", 0, true, false, "URL",
       "server URL (env PODIUM_SERVER, default http://127.0.0.1:8080)"},
      {"token", 0, true, false, "TOKEN", "API token (env PODIUM_TOKEN)"},
      {"timeout", 0, true, false, "SECONDS", "per-request timeout (default 30)"},
      {"json", 0, false, false, "", "print the server's JSON instead of tables"},
      {"help", 'h', false, false, "", "show help"},
  };
  return options;
}

std::variant<ClientConfig, UsageError> resolve_config(const ParsedArgs& args, const CliEnv& env) {
  ClientConfig config;
  const auto from_env = [&](const char* name) -> std::optional<std::string> {
    if (!env.getenv) return std::nullopt;
    auto v = env.getenv(name);
    if (v && v->empty()) return std::nullopt;  // an exported but empty variable means unset
    return v;
  };
  if (auto v = args.value("server")) {
    config.server = *v;
  } else if (auto e = from_env("PODIUM_SERVER")) {
    config.server = *e;
  }
  if (auto v = args.value("token")) {
    config.token = *v;
  } else if (auto e = from_env("PODIUM_TOKEN")) {
    config.token = *e;
  }
  if (auto v = args.value("timeout")) {
    const auto seconds = parse_double(*v);
    if (!seconds || *seconds <= 0 || *seconds > 86400) {
      return UsageError{"--timeout must be a number of seconds > 0, not '" + *v + "'"};
    }
    config.timeout = std::chrono::milliseconds(static_cast<long long>(*seconds * 1000));
    if (config.timeout.count() == 0) config.timeout = std::chrono::milliseconds(1);
  }
  std::string error;
  if (!client::parse_base_url(config.server, &error)) {
    return UsageError{"invalid server URL '" + config.server + "': " + error};
  }
  return config;
}

namespace {

std::string option_lines(const std::vector<OptionSpec>& options) {
  std::vector<std::pair<std::string, std::string>> rows;
  size_t width = 0;
  for (const auto& o : options) {
    std::string left =
        o.short_name != 0 ? std::string("-") + o.short_name + ", " : std::string("    ");
    left += "--" + o.name;
    if (o.takes_value) left += " " + (o.value_name.empty() ? std::string("VALUE") : o.value_name);
    width = std::max(width, left.size());
    rows.emplace_back(std::move(left), o.help + (o.repeatable ? " (repeatable)" : ""));
  }
  std::string out;
  for (const auto& [left, help] : rows) {
    out += "  " + left + std::string(width - left.size() + 2, ' ') + help + "\n";
  }
  return out;
}

const std::map<std::string, std::string>& group_summaries() {
  static const std::map<std::string, std::string> summaries{
      {"clusters", "manage clusters (accelerator slices and their workers)"},
      {"datasets", "manage datasets"},
      {"runs", "submit, inspect and control training runs"},
      {"models", "browse the model catalog, add and delete your own models"},
      {"accelerators", "browse the accelerator catalog (slice types: chips, devices, hosts)"},
      {"projects", "named groups of runs (podium runs list --project NAME)"},
  };
  return summaries;
}

std::string main_help() {
  std::string out =
      "podium: command-line client of the Podium REST API\n\n"
      "usage: podium [global options] COMMAND [SUBCOMMAND] [ARGS] [options]\n\n"
      "Commands:\n";
  std::vector<std::pair<std::string, std::string>> rows;
  size_t width = 0;
  for (const auto& c : all_commands()) {
    std::string left = c.path() + (c.args.empty() ? "" : " " + c.args) +
                       (c.required.empty() ? "" : " " + c.required);
    width = std::max(width, left.size());
    rows.emplace_back(std::move(left), c.summary);
  }
  for (const auto& [left, summary] : rows)
    out += "  " + left + std::string(width - left.size() + 2, ' ') + summary + "\n";
  out += "\nGlobal options (accepted anywhere):\n" + option_lines(global_options());
  out +=
      "\nConfiguration: flags override the environment (PODIUM_SERVER, PODIUM_TOKEN), which "
      "overrides\n"
      "the default server http://127.0.0.1:8080.\n\n";
  out += kExitCodeHelp;
  out += "\nRun 'podium COMMAND --help' for a command's options.\n";
  return out;
}

std::string subcommand_left(const Command& c) {
  return c.name + (c.args.empty() ? "" : " " + c.args) +
         (c.required.empty() ? "" : " " + c.required);
}

std::string group_help(const std::string& group) {
  std::string out = "usage: podium " + group + " SUBCOMMAND [ARGS] [options]\n\n";
  if (const auto it = group_summaries().find(group); it != group_summaries().end()) {
    std::string s = it->second;
    s[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(s[0])));
    out += s + ".\n\n";
  }
  out += "Subcommands:\n";
  size_t width = 0;
  for (const auto& c : all_commands()) {
    if (c.group == group) width = std::max(width, subcommand_left(c).size());
  }
  for (const auto& c : all_commands()) {
    if (c.group != group) continue;
    const std::string left = subcommand_left(c);
    out += "  " + left + std::string(width - left.size() + 2, ' ') + c.summary + "\n";
  }
  out += "\nRun 'podium " + group + " SUBCOMMAND --help' for its options.\n";
  return out;
}

bool has_subcommands(const std::string& group) {
  for (const auto& c : all_commands()) {
    if (c.group == group && !c.name.empty()) return true;
  }
  return false;
}

bool known_group(const std::string& group) {
  for (const auto& c : all_commands()) {
    if (c.group == group) return true;
  }
  return false;
}

const Command* find_command(const std::string& group, const std::string& name) {
  for (const auto& c : all_commands()) {
    if (c.group == group && c.name == name) return &c;
  }
  return nullptr;
}

std::string subcommand_names(const std::string& group) {
  std::string out;
  for (const auto& c : all_commands()) {
    if (c.group != group) continue;
    if (!out.empty()) out += ", ";
    out += c.name;
  }
  return out;
}

bool global_takes_value(const std::string& token) {
  if (token.rfind("--", 0) != 0 || token.find('=') != std::string::npos) return false;
  for (const auto& o : global_options()) {
    if (token == "--" + o.name) return o.takes_value;
  }
  return false;
}

int version_command(Context& ctx) {
  if (ctx.json) {
    Json v = Json::object();
    v["client"] = std::string(client::client_version());
    ctx.out << v.dump() << "\n";
  } else {
    ctx.out << "podium " << client::client_version() << "\n";
  }
  return kExitOk;
}

std::vector<Command> build_commands() {
  std::vector<Command> out;
  add_resource_commands(out);
  add_run_commands(out);
  add_curation_commands(out);
  Command version;
  version.group = "version";
  version.summary = "print the client version";
  version.needs_server = false;
  version.run = version_command;
  out.push_back(std::move(version));
  return out;
}

}  // namespace

const std::vector<Command>& all_commands() {
  static const std::vector<Command> commands = build_commands();
  return commands;
}

std::string command_usage(const Command& c) {
  std::string usage = "usage: podium " + c.path();
  if (!c.args.empty()) usage += " " + c.args;
  if (!c.required.empty()) usage += " " + c.required;
  if (!c.options.empty()) usage += " [options]";
  return usage;
}

std::string command_help(const Command& c) {
  std::string out = command_usage(c) + "\n\n";
  std::string summary = c.summary;
  if (!summary.empty())
    summary[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(summary[0])));
  out += summary + ".\n";
  if (!c.details.empty()) out += "\n" + c.details + (c.details.back() == '\n' ? "" : "\n");
  if (!c.options.empty()) out += "\nOptions:\n" + option_lines(c.options);
  out += "\nGlobal options:\n" + option_lines(global_options());
  out += "\n";
  out += kExitCodeHelp;
  return out;
}

int run_cli(const std::vector<std::string>& args, CliEnv& env, std::ostream& out,
            std::ostream& err) {
  // Find the command words (group, then subcommand when the group has them), skipping global
  // options and their values so that `podium --server URL runs list` works.
  std::string group;
  std::string name;
  std::vector<std::string> rest;
  bool command_complete = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& t = args[i];
    if (command_complete) {
      rest.push_back(t);
      continue;
    }
    if (t == "--") {
      rest.insert(rest.end(), args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
      break;
    }
    if (t.size() > 1 && t[0] == '-') {
      rest.push_back(t);
      if (global_takes_value(t) && i + 1 < args.size()) rest.push_back(args[++i]);
      continue;
    }
    if (group.empty()) {
      group = t;
      if (!known_group(group) && group != "help") break;
      command_complete = group != "help" && !has_subcommands(group);
    } else {
      name = t;
      command_complete = true;
    }
  }
  // Words after an unknown group or after "help" are left in `rest` only when complete; take
  // the remaining args for "help" here.
  const auto wants_help = [&] {
    for (const auto& t : rest) {
      if (t == "--help" || t == "-h") return true;
    }
    return false;
  };

  if (group.empty()) {
    for (const auto& t : rest) {
      if (t == "--version") return run_cli({"version"}, env, out, err);
    }
    if (wants_help()) {
      out << main_help();
      return kExitOk;
    }
    err << main_help();
    return kExitUsage;
  }
  if (group == "help") {
    // `podium help [COMMAND [SUBCOMMAND]]`
    if (name.empty()) {
      out << main_help();
      return kExitOk;
    }
    std::vector<std::string> again{name};
    for (const auto& t : rest) {
      if (t.empty() || t[0] != '-') again.push_back(t);
    }
    again.push_back("--help");
    return run_cli(again, env, out, err);
  }
  if (!known_group(group)) {
    err << "error: unknown command '" << group
        << "'\nRun 'podium --help' for the list of commands.\n";
    return kExitUsage;
  }
  if (has_subcommands(group) && name.empty()) {
    if (wants_help()) {
      out << group_help(group);
      return kExitOk;
    }
    err << "error: 'podium " << group << "' needs a subcommand (" << subcommand_names(group)
        << ")\n\n"
        << group_help(group);
    return kExitUsage;
  }
  const Command* command = find_command(group, name);
  if (command == nullptr) {
    err << "error: unknown subcommand '" << name << "' for 'podium " << group << "' ("
        << subcommand_names(group) << ")\nRun 'podium " << group << " --help' for details.\n";
    return kExitUsage;
  }

  std::vector<OptionSpec> spec = command->options;
  spec.insert(spec.end(), global_options().begin(), global_options().end());
  auto parsed = parse_args(rest, spec);
  if (auto* e = std::get_if<UsageError>(&parsed)) {
    err << "error: " << e->message << "\n"
        << command_usage(*command) << "\nRun 'podium " << command->path()
        << " --help' for details.\n";
    return kExitUsage;
  }
  const ParsedArgs& parsed_args = std::get<ParsedArgs>(parsed);
  if (parsed_args.has("help")) {
    out << command_help(*command);
    return kExitOk;
  }

  const size_t n = parsed_args.positionals.size();
  std::string count_error;
  if (n < command->min_args) {
    count_error = "missing " + command->args;
  } else if (n > command->max_args) {
    count_error = command->max_args == 0
                      ? "unexpected argument '" + parsed_args.positionals.front() + "'"
                      : "unexpected argument '" + parsed_args.positionals[command->max_args] + "'";
  }
  if (!count_error.empty()) {
    err << "error: " << count_error << "\n"
        << command_usage(*command) << "\nRun 'podium " << command->path()
        << " --help' for details.\n";
    return kExitUsage;
  }

  auto config = resolve_config(parsed_args, env);
  if (auto* e = std::get_if<UsageError>(&config)) {
    // A command that never talks to the server (version) should not fail on a bad PODIUM_SERVER.
    if (command->needs_server) {
      err << "error: " << e->message << "\n";
      return kExitUsage;
    }
    config = ClientConfig{};
  }
  const ClientConfig& cfg = std::get<ClientConfig>(config);
  std::unique_ptr<Transport> transport = env.connect ? env.connect(cfg) : nullptr;
  if (!transport) {
    err << "error: no transport available\n";
    return kExitTransport;
  }
  Context ctx{*command, parsed_args, cfg, parsed_args.has("json"), *transport, env, out, err};
  return command->run(ctx);
}

}  // namespace podium::cli
