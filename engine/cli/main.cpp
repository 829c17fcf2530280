// podium: command-line client of the Podium REST API. Everything but the wiring of the real
// process environment lives in podium_cli_lib (engine/cli/cli.h).

#include <iostream>
#include <string>
#include <vector>

#include "engine/cli/cli.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  podium::cli::CliEnv env = podium::cli::CliEnv::system();
  const int code = podium::cli::run_cli(args, env, std::cout, std::cerr);
  std::cout.flush();
  return code;
}
