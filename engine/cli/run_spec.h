#pragma once
// run.yaml → the JSON run spec of the API. YAML scalars are typed with the YAML 1.2 core schema
// (so `steps: 100` stays an integer, `name: "100"` stays a string, `min_slices: null` and
// `min_slices: ~` are null); maps and sequences nest as they are.

#include <optional>
#include <string>
#include "engine/cli/json.h"

namespace podium::cli {

struct YamlToJson {
  std::optional<Json> value;
  std::string error;  // "line 3, column 5: ..." when value is empty
};

// Converts one YAML document. Rejects what JSON cannot hold (.inf, .nan, non-scalar keys)
// and duplicate keys, which would otherwise silently drop a setting.
YamlToJson yaml_to_json(const std::string& text);

// As yaml_to_json, and the document must be a mapping (a run spec is an object).
YamlToJson load_run_spec(const std::string& text);

}  // namespace podium::cli
