#include "backend/api/resolve.h"

namespace podium::api {

std::optional<std::string> find_cluster_id(db::Transaction& tx, const std::string& key) {
  auto r = tx.exec(
      "SELECT id FROM clusters WHERE id = $1 UNION ALL SELECT id FROM clusters WHERE name = $1 "
      "LIMIT 1",
      {key});
  if (r.empty()) return std::nullopt;
  return r.at(0, "id");
}

std::optional<std::string> find_dataset_id(db::Transaction& tx, const std::string& key) {
  auto r = tx.exec(
      "SELECT id FROM datasets WHERE id = $1 UNION ALL SELECT id FROM datasets WHERE name = $1 "
      "LIMIT 1",
      {key});
  if (r.empty()) return std::nullopt;
  return r.at(0, "id");
}

}  // namespace podium::api
