#pragma once
// Look-ups by id or name shared by several resources.

#include <optional>
#include <string>

#include "backend/db/database.h"

namespace podium::api {

// The id of the cluster named or identified by key, locked FOR SHARE when lock is set.
std::optional<std::string> find_cluster_id(db::Transaction& tx, const std::string& key);
std::optional<std::string> find_dataset_id(db::Transaction& tx, const std::string& key);

}  // namespace podium::api
