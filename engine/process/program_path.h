#pragma once
// Finding a program on a PATH, done before fork: the child may not allocate, so execvpe's own
// search (which also reads the parent's PATH, not the child's) is not used.

#include <string>
#include <vector>

namespace podium::process {

// The PATH a child with environment `env` (KEY=VALUE entries) sees: its PATH= entry, else
// `fallback`.
std::string path_of(const std::vector<std::string>& env, const std::string& fallback);

// `name` when it contains a '/', else the first regular, executable `dir/name` of `path`
// (colon-separated; an empty element is the current directory), else `name` unchanged (exec
// then fails with ENOENT and says so).
std::string find_program(const std::string& name, const std::string& path);

}  // namespace podium::process
