#pragma once
// Exit codes of the `podium` command-line client. Scripts rely on them; `podium --help` prints
// the same table. Keep the numbers stable: add new codes, never renumber.

namespace podium::cli {

enum ExitCode : int {
  kExitOk = 0,      // the command did what was asked
  kExitFailed = 1,  // the server answered with an error (400, 409, 422, 5xx...) or a plan is not ok
  kExitUsage = 2,   // bad arguments, unreadable or invalid input file, invalid server URL
  kExitTransport = 3,  // the server could not be reached, timed out, or sent something unreadable
  kExitAuth = 4,       // 401 or 403: missing, invalid or insufficient credentials
  kExitNotFound = 5,   // 404: the cluster, dataset, run or model does not exist
};

// The exit code for a completed HTTP exchange with this status.
constexpr int exit_code_for_status(int status) {
  if (status >= 200 && status < 300) return kExitOk;
  if (status == 401 || status == 403) return kExitAuth;
  if (status == 404) return kExitNotFound;
  return kExitFailed;
}

inline constexpr const char* kExitCodeHelp =
    "Exit codes:\n"
    "  0  success\n"
    "  1  the server answered with an error, or the plan is not ok\n"
    "  2  usage error: bad arguments, unreadable or invalid input file\n"
    "  3  cannot reach the server (connection, timeout, unreadable response)\n"
    "  4  authentication or permission error (HTTP 401/403)\n"
    "  5  not found (HTTP 404)\n";

}  // namespace podium::cli
