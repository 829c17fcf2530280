#pragma once
// The environment variables that form a gang: Podium sets them for every rank (JAX multi-host,
// TPU multi-host, multislice, GPU multi-node, torch.distributed, Podium's own), and a run's own
// `env` may not set them: they must agree across ranks and with the placement.
#include <set>
#include <string>
#include <string_view>

namespace podium::core {

const std::set<std::string, std::less<>>& gang_environment_keys();

bool is_gang_environment_key(std::string_view name);

// POSIX environment variable name: [A-Za-z_][A-Za-z0-9_]*.
bool is_environment_name(std::string_view name);

}  // namespace podium::core
