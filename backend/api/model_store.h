#pragma once
// Models as data (migration 0016): the `models` table, its built-in rows seeded from the catalog
// compiled into the server, and the ModelSpec a row stands for. Whatever plans or summarizes a
// run reads its model through here, so a model a user added counts like a built-in one.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backend/db/database.h"
#include "engine/core/model/model_catalog.h"

namespace podium::api {

// Inserts or refreshes every built-in model (engine/core/models/*.yaml) and removes built-ins
// the catalog no longer has; a user's model of the same name is left alone. Run at start-up in
// the bootstrap transaction.
void seed_builtin_models(db::Transaction& tx);

struct StoredModel {
  std::string id;
  core::ModelSpec spec;
  bool builtin = false;
  nlohmann::json config;  // MaxText keys as stored
  std::optional<std::string> source_yaml;
  std::optional<std::string> created_by;
  std::string created_at;
  std::string updated_at;
};

// The model named `name`, or nullopt.
std::optional<StoredModel> load_model(db::Transaction& tx, const std::string& name);
// Every model's name, sorted (hints for an unknown model).
std::vector<std::string> stored_model_names(db::Transaction& tx);

// The SELECT list load_model reads; `where` is appended ("WHERE name = $1", ...).
std::string model_select(const std::string& where);
StoredModel stored_model(const db::Result& r, size_t row);

// core::to_json(spec) plus id, builtin, created_by, created_at, updated_at, the active parameter
// count at top level, and with_config: the MaxText keys (config) and the posted YAML.
nlohmann::json model_json(const StoredModel& m, bool with_config);

}  // namespace podium::api
