#pragma once
// The command table of `podium` and the helpers every command shares (calling the API,
// reporting errors, paging lists). Internal to engine/cli.

#include <cstddef>
#include <functional>
#include <limits>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "engine/cli/args.h"
#include "engine/cli/cli.h"
#include "engine/cli/json.h"
#include "engine/cli/output.h"

namespace podium::cli {

struct Command;

struct Context {
  const Command& command;
  const ParsedArgs& args;
  const ClientConfig& config;
  bool json = false;  // --json: print the server's JSON instead of tables
  Transport& api;
  CliEnv& env;
  std::ostream& out;
  std::ostream& err;
};

inline constexpr size_t kUnbounded = std::numeric_limits<size_t>::max();

struct Command {
  std::string group;     // "runs"; a top-level command ("plan") has its name here
  std::string name;      // "list"; "" for a top-level command
  std::string args;      // positionals for the usage line: "ID", "RUN...", "FILE"
  std::string required;  // required options for the usage line: "-f FILE", "--name N --uri U"
  std::string summary;
  std::string details;  // more help text, may be empty
  std::vector<OptionSpec> options;
  size_t min_args = 0;
  size_t max_args = 0;
  bool needs_server = true;
  std::function<int(Context&)> run;

  std::string path() const { return name.empty() ? group : group + " " + name; }
};

Command make_command(std::string group, std::string name, std::string args, std::string summary,
                     std::vector<OptionSpec> options, size_t min_args, size_t max_args,
                     std::function<int(Context&)> run, std::string details = {});

inline Command with_required(Command c, std::string required) {
  c.required = std::move(required);
  return c;
}

// Every command, in help order.
const std::vector<Command>& all_commands();
void add_resource_commands(std::vector<Command>& out);  // clusters, datasets, models
void add_run_commands(std::vector<Command>& out);       // runs, plan, logs, compare, import-log
void add_curation_commands(std::vector<Command>& out);  // runs edit, projects

inline const OptionSpec kLimitOption{"limit", 0,   true,
                                     false,   "N", "at most N items (one page unless --all)"};
inline const OptionSpec kAllOption{"all", 0,  false,
                                   false, "", "follow next_cursor through every page"};

// The global options accepted by every command.
const std::vector<OptionSpec>& global_options();
std::string command_usage(const Command& c);  // "usage: podium runs get ID [options]"
std::string command_help(const Command& c);   // usage, description, options, global options

// Prints "error: message" and the usage line; returns kExitUsage.
int usage_error(Context& ctx, const std::string& message);

// One API exchange. On a transport failure or a non-2xx answer the error is printed to
// ctx.err and `exit` is the exit code; otherwise exit is 0 and json holds the parsed body
// (null when the body is empty or not JSON).
struct Call {
  int exit = 0;
  int status = 0;
  std::string body;
  Json json;
  bool ok() const { return exit == 0; }
};
// With report_errors=false a non-2xx answer is returned (exit set) without printing anything, for
// commands that render some error answers themselves; transport failures are always printed.
Call call(Context& ctx, const std::string& method, const std::string& path,
          const std::string& body = {}, bool report_errors = true);
// Prints the problem of a failed answer (status + problem+json body) with an auth hint on 401.
int report_status(Context& ctx, int status, const std::string& body);
int report_transport(Context& ctx, const std::string& message);
// The body of a 2xx answer was not the JSON the command needs.
int report_unreadable(Context& ctx, const std::string& what);

// Adds ?key=value or &key=value (percent-encoded) to a path.
std::string with_query(std::string path, const std::string& key, const std::string& value);
std::string segment(const std::string& id);  // a percent-encoded path segment

// GET a list endpoint and print it: one page (--limit N) or, with --all, every page by
// following next_cursor. --json prints the page (or all items as one list) as JSON.
int print_list(Context& ctx, const std::string& path, const std::vector<Column>& columns,
               const std::string& noun);
// Prints an object as details (or raw JSON with --json).
int print_object(Context& ctx, const Call& c);
void print_raw(Context& ctx, const Call& c);

// A positive (or non-negative) integer option; prints the usage error itself.
std::optional<long long> int_option(Context& ctx, const std::string& name, long long min,
                                    int& exit);

// Reads FILE, or stdin for "-"; nullopt (message printed, usage exit) when it cannot.
std::optional<std::string> read_input(Context& ctx, const std::string& file, int& exit);

}  // namespace podium::cli
