// CRUD and pagination of every resource of the REST API, against a real podium-server on a
// fresh PostgreSQL database per test (/work/shared/api.md is the contract).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>

#include "tests/integration/support/podium.h"

namespace podium::it {
namespace {

using nlohmann::json;
using ::testing::Contains;
using ::testing::UnorderedElementsAreArray;

class Crud : public PodiumTest {};

bool rfc3339_utc(const json& v) {
  static const std::regex re(R"(^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$)");
  return v.is_string() && std::regex_match(v.get<std::string>(), re);
}

// Every id exactly once, and the same set as `expected`.
void expect_walk_covers(const PageWalk& w, const std::vector<std::string>& expected, int limit) {
  auto ids = ids_of(w.items);
  std::set<std::string> unique(ids.begin(), ids.end());
  EXPECT_EQ(unique.size(), ids.size())
      << "duplicates across pages: " << ::testing::PrintToString(ids);
  EXPECT_THAT(ids, UnorderedElementsAreArray(expected));
  const int want_pages =
      std::max<int>(1, static_cast<int>((expected.size() + static_cast<size_t>(limit) - 1) /
                                        static_cast<size_t>(limit)));
  // A last page that is exactly full may be followed by an empty one; never more.
  EXPECT_GE(w.pages, want_pages);
  EXPECT_LE(w.pages, want_pages + 1);
}

// ---------------------------------------------------------------------------------------------
// Clusters

TEST_F(Crud, ClusterCreateReturnsTheAcceleratorOfTheContract) {
  auto admin = podium().admin();
  auto r = admin.post("/api/v1/clusters", {{"name", "v7-train"},
                                           {"accelerator", "tpu7x-64"},
                                           {"num_slices", 1},
                                           {"capacity", "spot"},
                                           {"zone", "us-central1-c"},
                                           {"price_per_chip_hour", nullptr},
                                           {"labels", {{"team", "llm"}}}});
  ASSERT_EQ(r.status, 201) << r;
  EXPECT_THAT(r.content_type(), ::testing::StartsWith("application/json"));
  const json& c = r.json;
  EXPECT_TRUE(c["id"].is_string() && !c["id"].get<std::string>().empty()) << r;
  EXPECT_TRUE(rfc3339_utc(c["created_at"])) << c["created_at"];
  EXPECT_EQ(c["name"], "v7-train");
  EXPECT_EQ(c["num_slices"], 1);
  EXPECT_EQ(c["capacity"], "spot");
  EXPECT_EQ(c["zone"], "us-central1-c");
  EXPECT_TRUE(c["price_per_chip_hour"].is_null());
  EXPECT_EQ(c["labels"], json({{"team", "llm"}}));
  const json& a = c["accelerator"];
  EXPECT_EQ(a["family"], "tpu7x") << a;
  EXPECT_EQ(a["type"], "tpu7x-64") << a;
  EXPECT_EQ(a["topology"], "2x4x4") << a;
  EXPECT_EQ(a["chips_per_slice"], 32) << a;
  EXPECT_EQ(a["devices_per_slice"], 64) << a;
  EXPECT_EQ(a["hosts_per_slice"], 8) << a;
  EXPECT_EQ(a["physical_mesh"], json({2, 4, 4, 2})) << a;
  EXPECT_DOUBLE_EQ(a.value("peak_tflops_per_device", 0.0), 1153.5) << a;
  EXPECT_DOUBLE_EQ(a.value("hbm_gib_per_device", 0.0), 96.0) << a;
  EXPECT_EQ(c["hosts"], json({{"expected", 8}, {"registered", 0}, {"healthy", 0}})) << c;

  // The topology spelling names the same slice.
  auto same =
      admin.post("/api/v1/clusters", {{"name", "v7-topology"}, {"accelerator", "tpu7x-2x4x4"}});
  ASSERT_EQ(same.status, 201) << same;
  EXPECT_EQ(same.json["accelerator"]["type"], "tpu7x-64");
  EXPECT_EQ(same.json["accelerator"]["chips_per_slice"], 32);
}

TEST_F(Crud, ClusterAcceleratorSpellingsAndSizes) {
  auto admin = podium().admin();
  auto small =
      admin.post("/api/v1/clusters", {{"name", "tpu7x-small"}, {"accelerator", "tpu7x-2x2x4"}});
  ASSERT_EQ(small.status, 201) << small;
  const json& s = small.json["accelerator"];
  EXPECT_EQ(s["type"], "tpu7x-32") << s;
  EXPECT_EQ(s["topology"], "2x2x4") << s;
  EXPECT_EQ(s["chips_per_slice"], 16) << s;
  EXPECT_EQ(s["devices_per_slice"], 32) << s;
  EXPECT_EQ(s["hosts_per_slice"], 4) << s;

  auto big = admin.post("/api/v1/clusters",
                        {{"name", "trillium"}, {"accelerator", "v6e-256"}, {"num_slices", 2}});
  ASSERT_EQ(big.status, 201) << big;
  const json& b = big.json["accelerator"];
  EXPECT_EQ(b["family"], "v6e") << b;
  EXPECT_EQ(b["type"], "v6e-256") << b;
  EXPECT_EQ(b["topology"], "16x16") << b;
  EXPECT_EQ(b["chips_per_slice"], 256) << b;
  EXPECT_EQ(b["hosts_per_slice"], 64) << b;
  EXPECT_EQ(big.json["hosts"]["expected"], 128) << big;  // 64 hosts x 2 slices

  auto cpu = admin.post("/api/v1/clusters", {{"name", "cpu-box"}, {"accelerator", "cpu-2"}});
  ASSERT_EQ(cpu.status, 201) << cpu;
  EXPECT_EQ(cpu.json["accelerator"]["hosts_per_slice"], 2) << cpu;
  EXPECT_EQ(cpu.json["accelerator"]["devices_per_slice"], 2) << cpu;
}

TEST_F(Crud, ClusterUnknownAcceleratorOrTopologyIs422NamingTheChoices) {
  auto admin = podium().admin();
  auto before = admin.get("/api/v1/clusters");
  for (const std::string accel : {"tpu9-8", "tpu7x-3x3x3", "v6e-7"}) {
    SCOPED_TRACE(accel);
    auto r = admin.post("/api/v1/clusters", {{"name", "bad-accel"}, {"accelerator", accel}});
    ASSERT_TRUE(is_problem(r, 422)) << r;
    EXPECT_TRUE(has_field_error(r, "accelerator"));
    ASSERT_TRUE(r.json.contains("valid_choices") && r.json["valid_choices"].is_array()) << r;
    EXPECT_FALSE(r.json["valid_choices"].empty()) << r;
    // The detail names the choices for people, not only the machine-readable list.
    const std::string first = r.json["valid_choices"][0].get<std::string>();
    EXPECT_NE(r.json["detail"].get<std::string>().find(first), std::string::npos) << r;
  }
  auto unknown_family =
      admin.post("/api/v1/clusters", {{"name", "bad-accel"}, {"accelerator", "tpu9-8"}});
  EXPECT_THAT(unknown_family.json["valid_choices"].get<std::vector<std::string>>(),
              Contains("tpu7x"))
      << unknown_family;
  EXPECT_EQ(admin.get("/api/v1/clusters").json, before.json)
      << "a rejected create stored something";
}

TEST_F(Crud, ClusterGetByIdAndNamePatchDelete) {
  auto admin = podium().admin();
  auto created = podium().create_cluster("edit-me", "tpu7x-64", {{"zone", "us-central1-c"}});
  const std::string id = created["id"];

  auto by_id = admin.get("/api/v1/clusters/" + id);
  ASSERT_EQ(by_id.status, 200) << by_id;
  auto by_name = admin.get("/api/v1/clusters/edit-me");
  ASSERT_EQ(by_name.status, 200) << by_name;
  EXPECT_EQ(by_id.json, by_name.json);
  EXPECT_EQ(by_id.json["id"], id);
  EXPECT_EQ(by_id.json["accelerator"], created["accelerator"]);

  auto patched = admin.patch("/api/v1/clusters/edit-me", {{"num_slices", 2},
                                                          {"zone", "europe-west4-a"},
                                                          {"capacity", "reservation"},
                                                          {"price_per_chip_hour", 1.25},
                                                          {"labels", {{"owner", "pretraining"}}}});
  ASSERT_EQ(patched.status, 200) << patched;
  EXPECT_EQ(patched.json["num_slices"], 2);
  EXPECT_EQ(patched.json["zone"], "europe-west4-a");
  EXPECT_EQ(patched.json["capacity"], "reservation");
  EXPECT_DOUBLE_EQ(patched.json["price_per_chip_hour"].get<double>(), 1.25);
  EXPECT_EQ(patched.json["labels"], json({{"owner", "pretraining"}}));
  EXPECT_EQ(patched.json["hosts"]["expected"], 16);
  EXPECT_EQ(patched.json["name"], "edit-me");
  EXPECT_EQ(admin.get("/api/v1/clusters/" + id).json, patched.json)
      << "GET does not show the PATCH";

  // Fields a PATCH leaves out keep their value; null clears the price.
  auto cleared = admin.patch("/api/v1/clusters/" + id, {{"price_per_chip_hour", nullptr}});
  ASSERT_EQ(cleared.status, 200) << cleared;
  EXPECT_TRUE(cleared.json["price_per_chip_hour"].is_null()) << cleared;
  EXPECT_EQ(cleared.json["zone"], "europe-west4-a");

  // The name and the accelerator are fixed.
  auto rename = admin.patch("/api/v1/clusters/" + id, {{"name", "other"}});
  EXPECT_TRUE(has_field_error(rename, "name"));
  EXPECT_EQ(rename.status, 400);

  EXPECT_TRUE(is_problem(admin.get("/api/v1/clusters/no-such-cluster"), 404));
  EXPECT_TRUE(is_problem(admin.patch("/api/v1/clusters/no-such-cluster", {{"zone", "x"}}), 404));
  auto dup = admin.post("/api/v1/clusters", {{"name", "edit-me"}, {"accelerator", "cpu-1"}});
  EXPECT_TRUE(is_problem(dup, 409)) << dup;

  auto del = admin.del("/api/v1/clusters/edit-me");
  EXPECT_EQ(del.status, 204) << del;
  EXPECT_TRUE(del.body.empty()) << del;
  EXPECT_TRUE(is_problem(admin.get("/api/v1/clusters/" + id), 404));
  EXPECT_TRUE(is_problem(admin.del("/api/v1/clusters/" + id), 404));
}

TEST_F(Crud, ClusterWithRunsCannotBeDeleted) {
  auto member = podium().create_user("member");
  podium().create_cluster("busy", "cpu-1");
  podium().submit_run(member.api, "busy");
  EXPECT_TRUE(is_problem(podium().admin().del("/api/v1/clusters/busy"), 409));
  EXPECT_EQ(podium().admin().get("/api/v1/clusters/busy").status, 200);
}

TEST_F(Crud, ClusterListWalksEveryPage) {
  auto admin = podium().admin();
  std::vector<std::string> ids;
  for (int i = 0; i < 7; ++i)
    ids.push_back(podium().create_cluster("page-" + std::to_string(i))["id"].get<std::string>());
  auto all = admin.get("/api/v1/clusters");
  ASSERT_EQ(all.status, 200) << all;
  EXPECT_EQ(all.json["items"].size(), 7u);
  EXPECT_TRUE(all.json["next_cursor"].is_null()) << all;
  // Newest first, stable: the default page is the reverse order of creation.
  EXPECT_EQ(all.json["items"][0]["id"], ids.back());

  for (int limit : {1, 2, 3, 7, 500}) {
    SCOPED_TRACE("limit=" + std::to_string(limit));
    auto w = walk_pages(admin, "/api/v1/clusters", limit);
    ASSERT_TRUE(w.ok);
    expect_walk_covers(w, ids, limit);
  }
  // A cursor keeps working after rows are added in front of it: no duplicate, no gap.
  auto first = admin.get("/api/v1/clusters?limit=3");
  ASSERT_EQ(first.status, 200);
  podium().create_cluster("page-late");
  auto rest =
      walk_pages(admin, "/api/v1/clusters", 2, 1000, first.json["next_cursor"].get<std::string>());
  auto seen = ids_of(rest.items);
  for (const auto& item : first.json["items"]) seen.push_back(item["id"].get<std::string>());
  EXPECT_THAT(seen, UnorderedElementsAreArray(ids));

  for (const std::string bad : {"0", "501", "-1", "abc", "2x", ""}) {
    SCOPED_TRACE("limit=" + bad);
    auto r = admin.get("/api/v1/clusters?limit=" + bad);
    if (bad.empty()) {
      EXPECT_TRUE(r.status == 200 || is_problem(r, 400)) << r;
    } else {
      EXPECT_TRUE(is_problem(r, 400)) << r;
    }
  }
}

TEST_F(Crud, ClusterWorkersAndProvisioning) {
  auto admin = podium().admin();
  podium().create_cluster("prov", "tpu7x-64", {{"zone", "us-central1-c"}, {"capacity", "spot"}});
  auto workers = admin.get("/api/v1/clusters/prov/workers");
  ASSERT_EQ(workers.status, 200) << workers;
  EXPECT_EQ(workers.json["items"], json::array());
  auto prov = admin.get("/api/v1/clusters/prov/provisioning");
  ASSERT_EQ(prov.status, 200) << prov;
  EXPECT_NE(prov.body.find("prov"), std::string::npos) << prov;
  EXPECT_TRUE(is_problem(admin.get("/api/v1/clusters/nope/workers"), 404));
  EXPECT_TRUE(is_problem(admin.get("/api/v1/clusters/nope/provisioning"), 404));
  // Without a project the commands name it as a variable and say it is missing.
  ASSERT_TRUE(prov.json["options"].is_array()) << prov;
  EXPECT_NE(prov.json["options"][0]["commands"][0].get<std::string>().find("--project $PROJECT"),
            std::string::npos)
      << prov;
  EXPECT_FALSE(prov.json["options"][0]["missing"].empty()) << prov;

  // Bad GCP fields are refused and change nothing.
  for (const auto& [field, bad] :
       std::vector<std::pair<std::string, std::string>>{{"project", "My Project"},
                                                        {"project", "p;rm -rf /"},
                                                        {"reservation", "res 1"},
                                                        {"network", "-net"},
                                                        {"project", std::string(40, 'a')}}) {
    auto r = admin.patch("/api/v1/clusters/prov", {{field, bad}});
    EXPECT_TRUE(is_problem(r, 400)) << field << "=" << bad << ": " << r;
  }
  auto patched = admin.patch(
      "/api/v1/clusters/prov",
      {{"project", "train-project-7"}, {"reservation", "tpu7x-res"}, {"network", "tpu-net"}});
  ASSERT_EQ(patched.status, 200) << patched;
  EXPECT_EQ(patched.json["project"], "train-project-7");
  EXPECT_EQ(patched.json["reservation"], "tpu7x-res");
  EXPECT_EQ(patched.json["network"], "tpu-net");
  prov = admin.get("/api/v1/clusters/prov/provisioning");
  ASSERT_EQ(prov.status, 200) << prov;
  // The agents' container image and the server's public URL are still missing for the xpk
  // workload that starts the agents.
  EXPECT_NE(prov.body.find("--docker-image $IMAGE"), std::string::npos) << prov;
  patched =
      admin.patch("/api/v1/clusters/prov",
                  {{"executor", {{"kind", "agent"}, {"image", "us-docker.pkg.dev/t/r/mt:1"}}}});
  ASSERT_EQ(patched.status, 200) << patched;
  EXPECT_EQ(patched.json["executor"]["image"], "us-docker.pkg.dev/t/r/mt:1");
  Podium with_url({.settings = {"public_url=https://podium.example.com"}, .name = "public"});
  auto other = with_url.admin();
  with_url.create_cluster(
      "prov", "tpu7x-64",
      {{"zone", "us-central1-c"},
       {"capacity", "spot"},
       {"project", "train-project-7"},
       {"reservation", "tpu7x-res"},
       {"network", "tpu-net"},
       {"executor", {{"kind", "agent"}, {"image", "us-docker.pkg.dev/t/r/mt:1"}}}});
  prov = other.get("/api/v1/clusters/prov/provisioning");
  ASSERT_EQ(prov.status, 200) << prov;
  EXPECT_NE(prov.body.find("--docker-image us-docker.pkg.dev/t/r/mt:1"), std::string::npos) << prov;
  for (const auto& o : prov.json["options"]) {
    EXPECT_TRUE(o["missing"].empty()) << o.dump();
    EXPECT_FALSE(o["teardown"].empty()) << o.dump();
    for (const auto& list : {o["commands"], o["teardown"]})
      for (const auto& c : list)
        EXPECT_EQ(c.get<std::string>().find("$PROJECT"), std::string::npos) << c;
  }
  EXPECT_NE(prov.body.find("--project train-project-7"), std::string::npos) << prov;
  // An empty patch changes nothing: the same cluster, updated_at as it was, no audit entry.
  const auto audits = [&] {
    return podium().db().scalar(
        "SELECT count(*) FROM audit_log WHERE resource_type = 'cluster' AND action = 'update'");
  };
  const std::string audits_before = audits();
  auto unchanged = admin.patch("/api/v1/clusters/prov", json::object());
  ASSERT_EQ(unchanged.status, 200) << unchanged;
  EXPECT_EQ(unchanged.json, admin.get("/api/v1/clusters/prov").json);
  EXPECT_EQ(unchanged.json["updated_at"], patched.json["updated_at"]);
  EXPECT_EQ(audits(), audits_before);
  // "" clears a field.
  patched = admin.patch("/api/v1/clusters/prov", {{"network", ""}});
  ASSERT_EQ(patched.status, 200) << patched;
  EXPECT_EQ(patched.json["network"], "");
  EXPECT_EQ(patched.json["project"], "train-project-7");

  auto tok = admin.post("/api/v1/clusters/prov/worker-tokens");
  ASSERT_EQ(tok.status, 201) << tok;
  EXPECT_TRUE(tok.json["id"].is_string());
  ASSERT_TRUE(tok.json["token"].is_string());
  auto older = admin.post("/api/v1/clusters/prov/worker-tokens");
  ASSERT_EQ(older.status, 201) << older;
  auto newest = admin.post("/api/v1/clusters/prov/worker-tokens");
  ASSERT_EQ(newest.status, 201) << newest;
  // A host used the first one (any authenticated request counts, even a refused one).
  EXPECT_TRUE(
      is_problem(podium().as(tok.json["token"].get<std::string>()).get("/api/v1/clusters"), 403));
  auto listed = admin.get("/api/v1/clusters/prov/worker-tokens");
  ASSERT_EQ(listed.status, 200) << listed;
  ASSERT_EQ(listed.json["items"].size(), 3u) << listed;
  EXPECT_EQ(listed.json["items"][0]["id"], newest.json["id"]);  // newest first
  EXPECT_EQ(listed.json["items"][2]["id"], tok.json["id"]);
  for (const auto& t : listed.json["items"]) {
    EXPECT_FALSE(t.contains("token")) << t;  // only its hash is stored
    EXPECT_EQ(t["created_by"], "admin") << t;
    EXPECT_TRUE(t["revoked_at"].is_null()) << t;
  }
  EXPECT_TRUE(listed.json["items"][2]["last_used_at"].is_string()) << listed;
  EXPECT_TRUE(listed.json["items"][0]["last_used_at"].is_null()) << listed;
  EXPECT_EQ(listed.body.find(tok.json["token"].get<std::string>()), std::string::npos);
  auto first_page = admin.get("/api/v1/clusters/prov/worker-tokens?limit=2");
  ASSERT_EQ(first_page.json["items"].size(), 2u) << first_page;
  ASSERT_TRUE(first_page.json["next_cursor"].is_string()) << first_page;
  auto second_page = admin.get("/api/v1/clusters/prov/worker-tokens?limit=2&cursor=" +
                               first_page.json["next_cursor"].get<std::string>());
  ASSERT_EQ(second_page.json["items"].size(), 1u) << second_page;
  EXPECT_EQ(second_page.json["items"][0]["id"], tok.json["id"]);
  auto revoke =
      admin.del("/api/v1/clusters/prov/worker-tokens/" + tok.json["id"].get<std::string>());
  EXPECT_EQ(revoke.status, 204) << revoke;
  listed = admin.get("/api/v1/clusters/prov/worker-tokens");
  EXPECT_TRUE(listed.json["items"][2]["revoked_at"].is_string()) << listed;
  EXPECT_TRUE(listed.json["items"][1]["revoked_at"].is_null()) << listed;
  EXPECT_TRUE(is_problem(admin.get("/api/v1/clusters/nope/worker-tokens"), 404));
  EXPECT_TRUE(is_problem(admin.del("/api/v1/clusters/prov/worker-tokens/wtk_nope"), 404));
  EXPECT_TRUE(is_problem(admin.post("/api/v1/clusters/nope/worker-tokens"), 404));
}

// The catalog clients offer slice types from: each entry as a cluster's "accelerator" shows it.
TEST_F(Crud, AcceleratorCatalogListsSliceTypesAndFiltersByFamily) {
  auto viewer = podium().create_user("viewer");
  auto all = viewer.api.get("/api/v1/accelerators");
  ASSERT_EQ(all.status, 200) << all;
  json tpu7x_64;
  std::set<std::string> families;
  for (const auto& a : all.json["items"]) {
    families.insert(a["family"].get<std::string>());
    if (a["type"] == "tpu7x-64") tpu7x_64 = a;
  }
  EXPECT_TRUE(families.count("tpu7x") && families.count("v5p") && families.count("v6e") &&
              families.count("cpu"))
      << all;
  ASSERT_TRUE(tpu7x_64.is_object()) << all;
  EXPECT_EQ(tpu7x_64["topology"], "2x4x4");
  EXPECT_EQ(tpu7x_64["chips_per_slice"], 32);
  EXPECT_EQ(tpu7x_64["devices_per_slice"], 64);
  EXPECT_EQ(tpu7x_64["hosts_per_slice"], 8);
  // The same object a cluster of that type shows.
  auto cluster = podium().admin().post(
      "/api/v1/clusters", {{"name", unique_name("cat")}, {"accelerator", "tpu7x-2x4x4"}});
  ASSERT_EQ(cluster.status, 201) << cluster;
  EXPECT_EQ(cluster.json["accelerator"], tpu7x_64);

  auto v5e = viewer.api.get("/api/v1/accelerators?family=V5LitePod");  // alias, any case
  ASSERT_EQ(v5e.status, 200) << v5e;
  ASSERT_FALSE(v5e.json["items"].empty());
  for (const auto& a : v5e.json["items"]) EXPECT_EQ(a["family"], "v5e") << a;
  auto unknown = viewer.api.get("/api/v1/accelerators?family=tpu9");
  ASSERT_TRUE(is_problem(unknown, 400)) << unknown;
  EXPECT_NE(unknown.json["valid_choices"].dump().find("tpu7x"), std::string::npos) << unknown;
}

// ---------------------------------------------------------------------------------------------
// Datasets

TEST_F(Crud, DatasetCreateGetDelete) {
  auto member = podium().create_user("member");
  auto r = member.api.post("/api/v1/datasets", {{"name", "c4-en"},
                                                {"uri", "gs://bucket/c4/en"},
                                                {"format", "arrayrecord"},
                                                {"records", 1000},
                                                {"bytes", 123456},
                                                {"tokens", 500000},
                                                {"tokens_per_record", 500.0}});
  ASSERT_EQ(r.status, 201) << r;
  const std::string id = r.json["id"];
  EXPECT_TRUE(rfc3339_utc(r.json["created_at"])) << r;
  EXPECT_EQ(r.json["name"], "c4-en");
  EXPECT_EQ(r.json["uri"], "gs://bucket/c4/en");
  EXPECT_EQ(r.json["format"], "arrayrecord");
  EXPECT_EQ(r.json["records"], 1000);
  EXPECT_EQ(r.json["bytes"], 123456);
  EXPECT_EQ(r.json["tokens"], 500000);
  EXPECT_DOUBLE_EQ(r.json["tokens_per_record"].get<double>(), 500.0);

  auto by_id = member.api.get("/api/v1/datasets/" + id);
  ASSERT_EQ(by_id.status, 200) << by_id;
  EXPECT_EQ(by_id.json, r.json);
  auto by_name = member.api.get("/api/v1/datasets/c4-en");
  EXPECT_EQ(by_name.json, r.json) << by_name;

  EXPECT_TRUE(
      is_problem(member.api.post("/api/v1/datasets",
                                 {{"name", "c4-en"}, {"uri", "gs://x"}, {"format", "text"}}),
                 409));
  auto bad_format =
      member.api.post("/api/v1/datasets", {{"name", "f"}, {"uri", "gs://x"}, {"format", "csv"}});
  EXPECT_TRUE(has_field_error(bad_format, "format"));

  EXPECT_EQ(member.api.del("/api/v1/datasets/" + id).status, 204);
  EXPECT_TRUE(is_problem(member.api.get("/api/v1/datasets/" + id), 404));
  EXPECT_TRUE(is_problem(member.api.del("/api/v1/datasets/" + id), 404));
}

TEST_F(Crud, DatasetOnALocalFileIsCountedByTheServer) {
  TempDir dir("podium-it-dataset");
  const auto jsonl = dir.path() / "train.jsonl";
  std::string content;
  for (int i = 0; i < 17; ++i)
    content += "{\"text\": \"record number " + std::to_string(i) + "\"}\n";
  content += "\n  \n";                      // blank lines are not records
  content += "{\"text\": \"no newline\"}";  // a last line without '\n' is one
  std::ofstream(jsonl, std::ios::binary) << content;
  const auto text = dir.path() / "notes.txt";
  std::ofstream(text, std::ios::binary) << "one\ntwo\r\nthree\n";

  // Registering a local path makes the server read a file of its host: admins only.
  auto member = podium().create_user("member");
  auto refused = member.api.post(
      "/api/v1/datasets", {{"name", "local-jsonl"}, {"uri", jsonl.string()}, {"format", "jsonl"}});
  EXPECT_TRUE(is_problem(refused, 403)) << refused;
  auto admin = podium().admin();
  // A plain path, and the file:// form; the client's own counts are replaced by the facts.
  auto plain = admin.post("/api/v1/datasets", {{"name", "local-jsonl"},
                                               {"uri", jsonl.string()},
                                               {"format", "jsonl"},
                                               {"records", 999999},
                                               {"bytes", 1}});
  ASSERT_EQ(plain.status, 201) << plain;
  EXPECT_EQ(plain.json["records"], 18) << plain;
  EXPECT_EQ(plain.json["bytes"], static_cast<int64_t>(content.size())) << plain;
  EXPECT_EQ(plain.json["uri"], jsonl.string());

  auto url =
      admin.post("/api/v1/datasets",
                 {{"name", "local-text"}, {"uri", "file://" + text.string()}, {"format", "text"}});
  ASSERT_EQ(url.status, 201) << url;
  EXPECT_EQ(url.json["records"], 3) << url;
  EXPECT_EQ(url.json["bytes"], 15) << url;

  auto missing = admin.post("/api/v1/datasets", {{"name", "local-missing"},
                                                 {"uri", (dir.path() / "nope.jsonl").string()},
                                                 {"format", "jsonl"}});
  EXPECT_TRUE(is_problem(missing, 422)) << missing;
  EXPECT_TRUE(has_field_error(missing, "uri"));
  auto directory =
      admin.post("/api/v1/datasets",
                 {{"name", "local-dir"}, {"uri", dir.path().string()}, {"format", "jsonl"}});
  EXPECT_TRUE(is_problem(directory, 422)) << directory;
}

TEST_F(Crud, DatasetListWalksEveryPage) {
  auto member = podium().create_user("member");
  std::vector<std::string> ids;
  for (int i = 0; i < 5; ++i)
    ids.push_back(
        podium().create_dataset(member.api, "ds-" + std::to_string(i))["id"].get<std::string>());
  for (int limit : {1, 2, 5}) {
    SCOPED_TRACE("limit=" + std::to_string(limit));
    auto w = walk_pages(member.api, "/api/v1/datasets", limit);
    ASSERT_TRUE(w.ok);
    expect_walk_covers(w, ids, limit);
  }
}

// ---------------------------------------------------------------------------------------------
// Users and tokens

TEST_F(Crud, UsersCreateListGetPatch) {
  auto admin = podium().admin();
  auto created = admin.post(
      "/api/v1/users", {{"username", "alice"}, {"role", "member"}, {"password", "s3cret-pass"}});
  ASSERT_EQ(created.status, 201) << created;
  const std::string id = created.json["id"];
  EXPECT_EQ(created.json["username"], "alice");
  EXPECT_EQ(created.json["role"], "member");
  EXPECT_EQ(created.json["disabled"], false);
  EXPECT_TRUE(rfc3339_utc(created.json["created_at"])) << created;
  ASSERT_TRUE(created.json["token"].is_string());
  EXPECT_FALSE(created.json.contains("password")) << created;
  EXPECT_FALSE(created.json.contains("password_hash")) << created;
  const std::string token = created.json["token"];

  auto me = podium().as(token).get("/api/v1/auth/me");
  ASSERT_EQ(me.status, 200) << me;
  EXPECT_EQ(me.json["username"], "alice");
  EXPECT_EQ(me.json["role"], "member");

  auto by_id = admin.get("/api/v1/users/" + id);
  ASSERT_EQ(by_id.status, 200) << by_id;
  EXPECT_EQ(by_id.json["username"], "alice");
  EXPECT_FALSE(by_id.json.contains("token")) << "a token is shown once only: " << by_id;
  EXPECT_EQ(admin.get("/api/v1/users/alice").json, by_id.json);
  EXPECT_TRUE(is_problem(admin.get("/api/v1/users/nobody"), 404));

  EXPECT_TRUE(
      is_problem(admin.post("/api/v1/users", {{"username", "alice"}, {"role", "viewer"}}), 409));
  EXPECT_TRUE(has_field_error(admin.post("/api/v1/users", {{"username", "bob"}, {"role", "owner"}}),
                              "role"));
  EXPECT_TRUE(has_field_error(
      admin.post("/api/v1/users", {{"username", "bad name!"}, {"role", "viewer"}}), "username"));
  EXPECT_TRUE(has_field_error(
      admin.post("/api/v1/users",
                 {{"username", "shorty"}, {"role", "viewer"}, {"password", "short"}}),
      "password"));

  // Login with the password: a session cookie, HttpOnly and SameSite=Strict.
  auto login = podium().anonymous().post("/api/v1/auth/login",
                                         {{"username", "alice"}, {"password", "s3cret-pass"}});
  ASSERT_EQ(login.status, 200) << login;
  auto cookie = login.header("set-cookie").value_or("");
  EXPECT_NE(cookie.find("HttpOnly"), std::string::npos) << cookie;
  EXPECT_NE(cookie.find("SameSite=Strict"), std::string::npos) << cookie;
  auto session = cookie.substr(0, cookie.find(';'));
  auto via_cookie =
      podium().anonymous().call("GET", "/api/v1/auth/me", nullptr, {{"Cookie", session}});
  EXPECT_EQ(via_cookie.status, 200) << via_cookie;
  EXPECT_TRUE(
      is_problem(podium().anonymous().post("/api/v1/auth/login",
                                           {{"username", "alice"}, {"password", "wrong-pass"}}),
                 401));
  EXPECT_TRUE(
      is_problem(podium().anonymous().post("/api/v1/auth/login",
                                           {{"username", "nobody"}, {"password", "s3cret-pass"}}),
                 401));
  // Logging out ends that session (and clears the cookie), not the others.
  auto second_login = podium().anonymous().post(
      "/api/v1/auth/login", {{"username", "alice"}, {"password", "s3cret-pass"}});
  ASSERT_EQ(second_login.status, 200) << second_login;
  auto second = second_login.header("set-cookie").value_or("");
  second = second.substr(0, second.find(';'));
  auto logout =
      podium().anonymous().call("POST", "/api/v1/auth/logout", nullptr, {{"Cookie", second}});
  EXPECT_EQ(logout.status, 204) << logout;
  EXPECT_NE(logout.header("set-cookie").value_or("").find("Max-Age=0"), std::string::npos)
      << logout;
  EXPECT_TRUE(is_problem(
      podium().anonymous().call("GET", "/api/v1/auth/me", nullptr, {{"Cookie", second}}), 401));
  EXPECT_EQ(
      podium().anonymous().call("GET", "/api/v1/auth/me", nullptr, {{"Cookie", session}}).status,
      200)
      << "logging out one session ended another";

  // Role change takes effect at once; disabling locks the account out.
  auto demoted = admin.patch("/api/v1/users/" + id, {{"role", "viewer"}});
  ASSERT_EQ(demoted.status, 200) << demoted;
  EXPECT_EQ(demoted.json["role"], "viewer");
  EXPECT_EQ(podium()
                .as(token)
                .post("/api/v1/datasets", {{"name", "x"}, {"uri", "gs://x"}, {"format", "text"}})
                .status,
            403);
  auto disabled = admin.patch("/api/v1/users/alice", {{"disabled", true}});
  ASSERT_EQ(disabled.status, 200) << disabled;
  EXPECT_EQ(disabled.json["disabled"], true);
  EXPECT_TRUE(is_problem(podium().as(token).get("/api/v1/auth/me"), 401));
  EXPECT_TRUE(is_problem(
      podium().anonymous().call("GET", "/api/v1/auth/me", nullptr, {{"Cookie", session}}), 401));

  // An admin cannot lock themselves out.
  auto self = admin.get("/api/v1/auth/me");
  ASSERT_EQ(self.status, 200);
  EXPECT_TRUE(is_problem(
      admin.patch("/api/v1/users/" + self.json["id"].get<std::string>(), {{"role", "member"}}),
      409));
}

TEST_F(Crud, UserListWalksEveryPage) {
  auto admin = podium().admin();
  auto me = admin.get("/api/v1/auth/me");
  ASSERT_EQ(me.status, 200) << me;
  std::vector<std::string> ids = {me.json["id"].get<std::string>()};  // the bootstrap admin
  for (const char* role : {"viewer", "member", "member", "admin", "viewer"})
    ids.push_back(podium().create_user(role).id);
  for (int limit : {1, 2, 4}) {
    SCOPED_TRACE("limit=" + std::to_string(limit));
    auto w = walk_pages(admin, "/api/v1/users", limit);
    ASSERT_TRUE(w.ok);
    expect_walk_covers(w, ids, limit);
    for (const auto& u : w.items) EXPECT_FALSE(u.contains("token")) << u;
  }
}

TEST_F(Crud, TokensCreateListRevoke) {
  auto member = podium().create_user("member");
  auto other = podium().create_user("member");

  auto created = member.api.post("/api/v1/tokens", {{"name", "ci"}});
  ASSERT_EQ(created.status, 201) << created;
  const std::string id = created.json["id"];
  const std::string token = created.json["token"];
  EXPECT_EQ(created.json["name"], "ci");
  auto as_new = podium().as(token);
  auto me = as_new.get("/api/v1/auth/me");
  ASSERT_EQ(me.status, 200) << me;
  EXPECT_EQ(me.json["username"], member.username);

  auto list = member.api.get("/api/v1/tokens");
  ASSERT_EQ(list.status, 200) << list;
  std::set<std::string> names;
  for (const auto& t : list.json["items"]) {
    names.insert(t["name"].get<std::string>());
    EXPECT_FALSE(t.contains("token")) << "the secret is shown once only: " << t;
    EXPECT_FALSE(t.contains("token_hash")) << t;
    EXPECT_TRUE(rfc3339_utc(t["created_at"])) << t;
  }
  EXPECT_EQ(names, (std::set<std::string>{"initial", "ci"})) << list;
  // Somebody else's tokens are not listed.
  auto others = other.api.get("/api/v1/tokens");
  ASSERT_EQ(others.status, 200);
  for (const auto& t : others.json["items"]) EXPECT_NE(t["id"], id);
  // ... nor revocable by them.
  EXPECT_TRUE(is_problem(other.api.del("/api/v1/tokens/" + id), 404));
  EXPECT_EQ(as_new.get("/api/v1/auth/me").status, 200);

  auto revoked = member.api.del("/api/v1/tokens/" + id);
  EXPECT_EQ(revoked.status, 204) << revoked;
  EXPECT_TRUE(is_problem(as_new.get("/api/v1/auth/me"), 401));
  EXPECT_TRUE(is_problem(as_new.get("/api/v1/clusters"), 401));
  EXPECT_EQ(member.api.get("/api/v1/auth/me").status, 200)
      << "revoking one token must not affect the others";
  auto after = member.api.get("/api/v1/tokens");
  bool found = false;
  for (const auto& t : after.json["items"])
    if (t["id"] == id) {
      found = true;
      EXPECT_TRUE(rfc3339_utc(t["revoked_at"])) << t;
    }
  EXPECT_TRUE(found) << after;
  EXPECT_TRUE(is_problem(member.api.del("/api/v1/tokens/tok_nope"), 404));

  // An admin may revoke anybody's token.
  auto second = member.api.post("/api/v1/tokens", {{"name", "second"}});
  ASSERT_EQ(second.status, 201);
  EXPECT_EQ(podium().admin().del("/api/v1/tokens/" + second.json["id"].get<std::string>()).status,
            204);
  EXPECT_EQ(podium().as(second.json["token"].get<std::string>()).get("/api/v1/auth/me").status,
            401);
}

TEST_F(Crud, TokenListWalksEveryPage) {
  auto viewer = podium().create_user("viewer");
  auto first = viewer.api.get("/api/v1/tokens");
  ASSERT_EQ(first.status, 200) << first;
  std::vector<std::string> ids = ids_of(first.json["items"].get<std::vector<json>>());
  ASSERT_EQ(ids.size(), 1u);
  for (int i = 0; i < 4; ++i) {
    auto r = viewer.api.post("/api/v1/tokens", {{"name", "t" + std::to_string(i)}});
    ASSERT_EQ(r.status, 201) << r;
    ids.push_back(r.json["id"].get<std::string>());
  }
  for (int limit : {1, 2, 5}) {
    SCOPED_TRACE("limit=" + std::to_string(limit));
    auto w = walk_pages(viewer.api, "/api/v1/tokens", limit);
    ASSERT_TRUE(w.ok);
    expect_walk_covers(w, ids, limit);
  }
}

// ---------------------------------------------------------------------------------------------
// Runs, checkpoints, models

TEST_F(Crud, RunSubmitGetListFilters) {
  auto member = podium().create_user("member");
  auto other = podium().create_user("member");
  podium().create_cluster("alpha-cluster", "cpu-1");
  podium().create_cluster("beta-cluster", "cpu-2");

  auto r = member.api.post("/api/v1/runs", {{"name", "Alpha-Baseline"},
                                            {"cluster", "alpha-cluster"},
                                            {"workload", "command"},
                                            {"command", {"true"}},
                                            {"priority", "high"},
                                            {"tags", {"alpha", "baseline"}}});
  ASSERT_EQ(r.status, 201) << r;
  const json run = r.json;
  const std::string a = run["id"];
  EXPECT_TRUE(rfc3339_utc(run["created_at"])) << run;
  EXPECT_EQ(run["name"], "Alpha-Baseline");
  EXPECT_EQ(run["state"], "queued");
  EXPECT_EQ(run["cluster"], "alpha-cluster");
  EXPECT_EQ(run["owner"], member.username);
  EXPECT_EQ(run["workload"], "command");
  EXPECT_EQ(run["priority"], "high");
  EXPECT_EQ(run["tags"], json({"alpha", "baseline"}));
  EXPECT_TRUE(run.contains("plan")) << "the contract: 201 run (includes plan): " << run;
  for (const char* k :
       {"failure_class", "restarts", "recoveries", "last_step", "resumed_from_step"})
    EXPECT_TRUE(run.contains(k)) << "run has no '" << k << "': " << run;
  EXPECT_EQ(run["restarts"], 0);
  EXPECT_TRUE(run["failure_class"].is_null());

  const std::string b =
      podium().submit_run(member.api, "beta-cluster", "beta-one", {{"tags", {"beta"}}})["id"];
  const std::string c =
      podium().submit_run(other.api, "alpha-cluster", "gamma-other", {{"tags", {"beta"}}})["id"];

  auto got = member.api.get("/api/v1/runs/" + a);
  ASSERT_EQ(got.status, 200) << got;
  EXPECT_EQ(got.json["id"], a);
  EXPECT_EQ(got.json["state"], "queued");
  EXPECT_EQ(got.json["spec"]["command"], json({"true"}));
  EXPECT_TRUE(got.json.contains("plan"));
  EXPECT_TRUE(is_problem(member.api.get("/api/v1/runs/run_nope"), 404));

  auto list_ids = [&](const std::string& query) {
    auto res = member.api.get("/api/v1/runs" + query);
    EXPECT_EQ(res.status, 200) << res;
    std::vector<std::string> out;
    for (const auto& i : res.json["items"]) out.push_back(i["id"].get<std::string>());
    return out;
  };
  EXPECT_THAT(list_ids(""), UnorderedElementsAreArray({a, b, c}));
  EXPECT_THAT(list_ids("?state=queued"), UnorderedElementsAreArray({a, b, c}));
  EXPECT_THAT(list_ids("?state=running"), UnorderedElementsAreArray(std::vector<std::string>{}));
  EXPECT_THAT(list_ids("?cluster=alpha-cluster"), UnorderedElementsAreArray({a, c}));
  EXPECT_THAT(list_ids("?cluster=" + run["cluster_id"].get<std::string>()),
              UnorderedElementsAreArray({a, c}));
  EXPECT_THAT(list_ids("?q=alpha"), UnorderedElementsAreArray({a}));  // case-insensitive substring
  EXPECT_THAT(list_ids("?q=ONE"), UnorderedElementsAreArray({b}));
  EXPECT_THAT(list_ids("?tag=beta"), UnorderedElementsAreArray({b, c}));
  EXPECT_THAT(list_ids("?tag=baseline&cluster=alpha-cluster"), UnorderedElementsAreArray({a}));
  EXPECT_THAT(list_ids("?owner=" + other.username), UnorderedElementsAreArray({c}));
  EXPECT_THAT(list_ids("?q=nothing-matches"),
              UnorderedElementsAreArray(std::vector<std::string>{}));
  EXPECT_TRUE(is_problem(member.api.get("/api/v1/runs?state=bogus"), 400));

  // Filters and pages together.
  auto w = walk_pages(member.api, "/api/v1/runs?tag=beta", 1);
  EXPECT_THAT(ids_of(w.items), UnorderedElementsAreArray({b, c}));

  // Submission checks.
  auto no_cluster = member.api.post("/api/v1/runs", Podium::run_spec("no-such-cluster", "x"));
  EXPECT_TRUE(is_problem(no_cluster, 422)) << no_cluster;
  EXPECT_TRUE(has_field_error(no_cluster, "cluster"));
  auto no_command = member.api.post(
      "/api/v1/runs", {{"name", "x"}, {"cluster", "alpha-cluster"}, {"workload", "command"}});
  EXPECT_TRUE(has_field_error(no_command, "command"));
  EXPECT_EQ(no_command.status, 400);
  auto no_name = member.api.post(
      "/api/v1/runs",
      {{"cluster", "alpha-cluster"}, {"workload", "command"}, {"command", {"true"}}});
  EXPECT_TRUE(has_field_error(no_name, "name"));
  auto with_dataset = Podium::run_spec("alpha-cluster", "x");
  with_dataset["dataset"] = "nope";
  auto no_dataset = member.api.post("/api/v1/runs", with_dataset);
  EXPECT_TRUE(has_field_error(no_dataset, "dataset"));
  EXPECT_EQ(member.api.get("/api/v1/runs").json["items"].size(), 3u)
      << "a rejected submission stored a run";
}

TEST_F(Crud, RunPlanErrorsAre422UnlessForced) {
  auto member = podium().create_user("member");
  podium().create_cluster("c", "tpu7x-64");
  const json bad = {{"name", "unknown-model"},
                    {"cluster", "c"},
                    {"workload", "maxtext"},
                    {"model", "gpt-17"},
                    {"steps", 10}};
  auto plan = member.api.post("/api/v1/plan", bad);
  ASSERT_EQ(plan.status, 200) << plan;
  EXPECT_EQ(plan.json["ok"], false) << plan;
  ASSERT_TRUE(plan.json["errors"].is_array() && !plan.json["errors"].empty()) << plan;
  for (const auto& e : plan.json["errors"])
    EXPECT_TRUE(e.contains("code") && e.contains("message")) << e;
  auto good = member.api.post("/api/v1/plan", Podium::run_spec("c", "fine"));
  ASSERT_EQ(good.status, 200) << good;
  EXPECT_EQ(good.json["ok"], true) << good;
  EXPECT_TRUE(member.api.get("/api/v1/runs").json["items"].empty()) << "planning stored a run";

  auto refused = member.api.post("/api/v1/runs", bad);
  EXPECT_TRUE(is_problem(refused, 422)) << refused;
  EXPECT_TRUE(refused.json.contains("plan")) << "a 422 names the plan's errors: " << refused;
  EXPECT_TRUE(member.api.get("/api/v1/runs").json["items"].empty())
      << "a refused submission stored a run";

  json forced_spec = bad;
  forced_spec["force"] = true;
  auto forced = member.api.post("/api/v1/runs", forced_spec);
  ASSERT_EQ(forced.status, 201) << forced;
  EXPECT_EQ(forced.json["forced"], true) << forced;
  EXPECT_EQ(forced.json["state"], "queued");
  EXPECT_EQ(forced.json["plan"]["ok"], false) << forced;
}

TEST_F(Crud, RunCancelAndDelete) {
  auto member = podium().create_user("member");
  podium().create_cluster("c", "cpu-1");
  const std::string id = podium().submit_run(member.api, "c", "to-cancel")["id"];
  const std::string queued = podium().submit_run(member.api, "c", "stays-queued")["id"];

  // Unfinished runs cannot be deleted.
  EXPECT_TRUE(is_problem(member.api.del("/api/v1/runs/" + id), 409));

  auto cancelled = member.api.post("/api/v1/runs/" + id + "/cancel");
  ASSERT_EQ(cancelled.status, 200) << cancelled;
  EXPECT_EQ(cancelled.json["state"], "cancelled")
      << "a queued run has no process: cancelled at once";
  EXPECT_TRUE(rfc3339_utc(cancelled.json["finished_at"])) << cancelled;
  EXPECT_EQ(member.api.get("/api/v1/runs/" + id).json["state"], "cancelled");
  auto again = member.api.post("/api/v1/runs/" + id + "/cancel");
  EXPECT_TRUE(is_problem(again, 409)) << again;

  auto events = member.api.get("/api/v1/runs/" + id + "/events");
  ASSERT_EQ(events.status, 200) << events;
  std::vector<std::string> states;
  for (const auto& e : events.json["items"]) states.push_back(e["to_state"].get<std::string>());
  EXPECT_EQ(states, (std::vector<std::string>{"queued", "cancelled"})) << events;

  auto listed = member.api.get("/api/v1/runs?state=cancelled");
  ASSERT_EQ(listed.json["items"].size(), 1u) << listed;
  EXPECT_EQ(listed.json["items"][0]["id"], id);

  auto del = member.api.del("/api/v1/runs/" + id);
  EXPECT_EQ(del.status, 204) << del;
  EXPECT_TRUE(is_problem(member.api.get("/api/v1/runs/" + id), 404));
  EXPECT_TRUE(is_problem(member.api.del("/api/v1/runs/" + id), 404));
  EXPECT_TRUE(is_problem(member.api.post("/api/v1/runs/" + id + "/cancel"), 404));

  EXPECT_TRUE(is_problem(member.api.del("/api/v1/runs/" + queued), 409));
  EXPECT_EQ(member.api.get("/api/v1/runs/" + queued).json["state"], "queued");
}

TEST_F(Crud, RunListWalksEveryPage) {
  auto member = podium().create_user("member");
  podium().create_cluster("c", "cpu-1");
  std::vector<std::string> ids;
  for (int i = 0; i < 5; ++i)
    ids.push_back(podium().submit_run(member.api, "c")["id"].get<std::string>());
  for (int limit : {1, 2, 3}) {
    SCOPED_TRACE("limit=" + std::to_string(limit));
    auto w = walk_pages(member.api, "/api/v1/runs", limit);
    ASSERT_TRUE(w.ok);
    expect_walk_covers(w, ids, limit);
  }
}

TEST_F(Crud, CheckpointsOfANewRunAreAnEmptyList) {
  auto member = podium().create_user("member");
  podium().create_cluster("c", "cpu-1");
  const std::string id = podium().submit_run(member.api, "c")["id"];
  auto r = member.api.get("/api/v1/runs/" + id + "/checkpoints");
  ASSERT_EQ(r.status, 200) << r;
  EXPECT_EQ(r.json["items"], json::array()) << r;
  EXPECT_TRUE(r.json.contains("next_cursor")) << r;
  EXPECT_TRUE(r.json["next_cursor"].is_null()) << r;
  EXPECT_TRUE(is_problem(member.api.get("/api/v1/runs/run_nope/checkpoints"), 404));
}

TEST_F(Crud, ModelCatalog) {
  auto viewer = podium().create_user("viewer");
  auto r = viewer.api.get("/api/v1/models");
  ASSERT_EQ(r.status, 200) << r;
  ASSERT_TRUE(r.json["items"].is_array()) << r;
  std::vector<std::string> names;
  for (const auto& m : r.json["items"]) names.push_back(m.value("name", ""));
  for (const char* want :
       {"llama2-7b", "llama2-70b", "llama3-8b", "llama3-70b", "mixtral-8x7b", "deepseek2-16b",
        "gemma-7b", "almodel-8b", "reference-tiny", "reference-small"})
    EXPECT_THAT(names, Contains(want));
  EXPECT_TRUE(r.json["next_cursor"].is_null());

  auto one = viewer.api.get("/api/v1/models/llama2-7b");
  ASSERT_EQ(one.status, 200) << one;
  EXPECT_EQ(one.json["name"], "llama2-7b");
  auto missing = viewer.api.get("/api/v1/models/gpt-17");
  EXPECT_TRUE(is_problem(missing, 404)) << missing;
  EXPECT_TRUE(missing.json.contains("valid_choices")) << missing;
}

}  // namespace
}  // namespace podium::it
