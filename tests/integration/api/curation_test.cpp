// Curation (issue 30.3) against a real podium-server and PostgreSQL: PATCH /runs/{id} (name,
// tags, notes, project) by owner and admin, refused for other members, on imported runs too;
// projects; the runs list's project, dataset, accelerator and date filters with keyset paging;
// saved compare views.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>

#include "tests/integration/support/podium.h"

namespace podium::it {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::UnorderedElementsAre;
using ::testing::UnorderedElementsAreArray;

std::string run_path(const json& run) {
  return "/api/v1/runs/" + run["id"].get<std::string>();
}

json import_run(const Api& who, const std::string& name) {
  return require_status(
             who.post("/api/v1/runs/import", {{"name", name},
                                              {"accelerator", "v5p-8"},
                                              {"model", "llama2-7b"},
                                              {"log",
                                               "completed step: 0, seconds: 1.5, loss: 2.0\n"
                                               "completed step: 1, seconds: 1.4, loss: 1.9\n"}}),
             201)
      .json;
}

// Names of the runs every page of `path` lists (following next_cursor with pages of `limit`).
std::vector<std::string> names_listed(const Api& api, const std::string& path, int limit = 2) {
  auto walk = walk_pages(api, path, limit);
  EXPECT_TRUE(walk.ok) << path;
  std::vector<std::string> names;
  for (const auto& r : walk.items) names.push_back(r["name"]);
  return names;
}

class Curation : public PodiumTest {};

TEST_F(Curation, OwnerAndAdminEditTagsAndNotesOtherMembersAndViewersMayNot) {
  auto owner = podium().create_user("member");
  auto other = podium().create_user("member");
  auto viewer = podium().create_user("viewer");
  podium().create_cluster("cur", "cpu-1");
  auto run = podium().submit_run(owner.api, "cur", "tagged", {{"tags", {"first"}}});
  const std::string before = run["updated_at"];

  auto edited = owner.api.patch(
      run_path(run), {{"tags", {"sweep", "lr-3e-4", "sweep"}}, {"notes", "diverged at 2k\n*why*"}});
  ASSERT_EQ(edited.status, 200) << edited;
  EXPECT_EQ(edited.json["tags"], json({"sweep", "lr-3e-4"}));  // duplicates dropped
  EXPECT_EQ(edited.json["notes"], "diverged at 2k\n*why*");
  EXPECT_EQ(edited.json["name"], "tagged");  // untouched members stay
  EXPECT_EQ(edited.json["state"], "queued");
  EXPECT_EQ(edited.json["updated_at"], before);  // not a state change
  auto read = owner.api.get(run_path(run));
  EXPECT_EQ(read.json["tags"], json({"sweep", "lr-3e-4"}));
  EXPECT_EQ(read.json["notes"], "diverged at 2k\n*why*");
  EXPECT_EQ(names_listed(owner.api, "/api/v1/runs?tag=lr-3e-4"),
            std::vector<std::string>{"tagged"});
  EXPECT_TRUE(names_listed(owner.api, "/api/v1/runs?tag=first").empty());

  EXPECT_TRUE(is_problem(other.api.patch(run_path(run), {{"notes", "mine now"}}), 403));
  EXPECT_TRUE(is_problem(viewer.api.patch(run_path(run), {{"notes", "mine now"}}), 403));
  EXPECT_EQ(owner.api.get(run_path(run)).json["notes"], "diverged at 2k\n*why*");

  auto by_admin =
      podium().admin().patch(run_path(run), {{"name", "renamed"}, {"tags", json::array()}});
  ASSERT_EQ(by_admin.status, 200) << by_admin;
  EXPECT_EQ(by_admin.json["name"], "renamed");
  EXPECT_EQ(by_admin.json["tags"], json::array());
  EXPECT_EQ(by_admin.json["notes"], "diverged at 2k\n*why*");
  // Cleared with null.
  EXPECT_EQ(owner.api.patch(run_path(run), {{"notes", nullptr}}).json["notes"], "");

  // Audited, one row per change with what changed.
  EXPECT_EQ(podium().db().scalar("SELECT count(*) FROM audit_log WHERE action = 'update' AND "
                                 "resource_type = 'run' AND resource_id = '" +
                                 run["id"].get<std::string>() + "'"),
            "3");
  EXPECT_TRUE(is_problem(owner.api.patch("/api/v1/runs/run_nope", {{"notes", "x"}}), 404));
}

TEST_F(Curation, ImportedAndFinishedRunsAreCuratedToo) {
  auto owner = podium().create_user("member");
  auto other = podium().create_user("member");
  auto imported = import_run(owner.api, "from-log");
  ASSERT_TRUE(imported["imported"].get<bool>());
  auto r = owner.api.patch(run_path(imported), {{"tags", {"seed"}}, {"notes", "the seed's log"}});
  ASSERT_EQ(r.status, 200) << r;
  EXPECT_EQ(r.json["tags"], json({"seed"}));
  EXPECT_EQ(r.json["state"], imported["state"]);
  EXPECT_TRUE(is_problem(other.api.patch(run_path(imported), {{"tags", {"x"}}}), 403));

  podium().create_cluster("fin", "cpu-1");
  auto run = podium().submit_run(owner.api, "fin");
  require_status(owner.api.post(run_path(run) + "/cancel"), 200);
  auto finished = owner.api.patch(run_path(run), {{"notes", "cancelled: wrong lr"}});
  ASSERT_EQ(finished.status, 200) << finished;
  EXPECT_EQ(finished.json["state"], "cancelled");
}

TEST_F(Curation, InvalidChangesAre422NamingTheField) {
  auto owner = podium().create_user("member");
  podium().create_cluster("bad", "cpu-1");
  auto run = podium().submit_run(owner.api, "bad", "keep");
  const auto path = run_path(run);
  EXPECT_TRUE(has_field_error(owner.api.patch(path, {{"name", "has space"}}), "name"));
  EXPECT_TRUE(has_field_error(owner.api.patch(path, {{"name", ""}}), "name"));
  EXPECT_TRUE(has_field_error(owner.api.patch(path, {{"name", nullptr}}), "name"));
  EXPECT_TRUE(has_field_error(owner.api.patch(path, {{"tags", {"ok", ""}}}), "tags"));
  EXPECT_TRUE(has_field_error(owner.api.patch(path, {{"tags", "one"}}), "tags"));
  EXPECT_TRUE(has_field_error(owner.api.patch(path, {{"tags", {std::string(65, 't')}}}), "tags"));
  EXPECT_TRUE(has_field_error(owner.api.patch(path, {{"notes", 42}}), "notes"));
  EXPECT_TRUE(has_field_error(owner.api.patch(path, {{"notes", std::string("a\0b", 3)}}), "notes"));
  EXPECT_TRUE(has_field_error(owner.api.patch(path, {{"notes", std::string(64 * 1024 + 1, 'n')}}),
                              "notes"));
  EXPECT_TRUE(has_field_error(owner.api.patch(path, {{"project", "nope"}}), "project"));
  EXPECT_TRUE(has_field_error(owner.api.patch(path, {{"project", "../x"}}), "project"));
  EXPECT_TRUE(has_field_error(owner.api.patch(path, {{"state", "succeeded"}}), "state"));
  auto empty = owner.api.patch(path, json::object());
  EXPECT_TRUE(is_problem(empty, 422)) << empty;
  EXPECT_TRUE(is_problem(owner.api.raw("PATCH", path, "{\"notes\":"), 400));
  // Nothing of it was stored.
  auto read = owner.api.get(path);
  EXPECT_EQ(read.json["name"], "keep");
  EXPECT_EQ(read.json["notes"], "");
  EXPECT_EQ(read.json["project"], nullptr);
}

TEST_F(Curation, ProjectsGroupRunsAndTheListFiltersByThem) {
  auto owner = podium().create_user("member");
  auto other = podium().create_user("member");
  auto created = owner.api.post("/api/v1/projects",
                                {{"name", "llama-sweep"}, {"description", "lr sweep on v5p"}});
  ASSERT_EQ(created.status, 201) << created;
  EXPECT_EQ(created.json["runs"], 0);
  EXPECT_EQ(created.json["created_by_name"], owner.username);
  EXPECT_TRUE(is_problem(other.api.post("/api/v1/projects", {{"name", "llama-sweep"}}), 409));
  EXPECT_TRUE(has_field_error(owner.api.post("/api/v1/projects", {{"name", "a b"}}), "name"));
  require_status(other.api.post("/api/v1/projects", {{"name", "other"}}), 201);

  podium().create_cluster("prj", "cpu-1");
  auto a = podium().submit_run(owner.api, "prj", "a");
  auto b = podium().submit_run(owner.api, "prj", "b");
  podium().submit_run(owner.api, "prj", "c");
  auto imported = import_run(owner.api, "d-imported");
  for (const auto* r : {&a, &b, &imported})
    require_status(owner.api.patch(run_path(*r), {{"project", "llama-sweep"}}), 200);
  // A member may put own runs into another member's project.
  require_status(owner.api.patch(run_path(b), {{"project", "other"}}), 200);
  require_status(owner.api.patch(run_path(b), {{"project", "llama-sweep"}}), 200);

  EXPECT_THAT(names_listed(owner.api, "/api/v1/runs?project=llama-sweep", 1),
              ElementsAre("d-imported", "b", "a"));
  EXPECT_TRUE(names_listed(owner.api, "/api/v1/runs?project=other").empty());
  EXPECT_EQ(owner.api.get("/api/v1/projects/llama-sweep").json["runs"], 3);
  auto list = walk_pages(owner.api, "/api/v1/projects", 1);
  EXPECT_EQ(list.items.size(), 2u);

  // Only the creator (or an admin) changes it; a rename carries the runs along.
  EXPECT_TRUE(
      is_problem(other.api.patch("/api/v1/projects/llama-sweep", {{"description", "x"}}), 403));
  auto renamed = owner.api.patch("/api/v1/projects/llama-sweep",
                                 {{"name", "llama-lr"}, {"description", "lr sweep, round 2"}});
  ASSERT_EQ(renamed.status, 200) << renamed;
  EXPECT_EQ(renamed.json["runs"], 3);
  EXPECT_EQ(owner.api.get(run_path(a)).json["project"], "llama-lr");
  EXPECT_TRUE(is_problem(owner.api.get("/api/v1/projects/llama-sweep"), 404));
  EXPECT_TRUE(is_problem(owner.api.patch("/api/v1/projects/llama-lr", {{"name", "other"}}), 409));

  // A project holding runs is not deleted; once empty it is.
  auto refused = owner.api.del("/api/v1/projects/llama-lr");
  EXPECT_TRUE(is_problem(refused, 409)) << refused;
  EXPECT_TRUE(is_problem(other.api.del("/api/v1/projects/llama-lr"), 403));
  for (const auto* r : {&a, &b, &imported})
    require_status(owner.api.patch(run_path(*r), {{"project", nullptr}}), 200);
  EXPECT_EQ(owner.api.del("/api/v1/projects/llama-lr").status, 204);
  EXPECT_EQ(podium().admin().del("/api/v1/projects/other").status, 204);
  EXPECT_TRUE(is_problem(owner.api.get("/api/v1/projects/llama-lr"), 404));
}

TEST_F(Curation, TheSpecsProjectAndNotesAreTheRunsFromSubmission) {
  auto owner = podium().create_user("member");
  require_status(owner.api.post("/api/v1/projects", {{"name", "submitted"}}), 201);
  podium().create_cluster("sub", "cpu-1");
  auto run = podium().submit_run(owner.api, "sub", "with-project",
                                 {{"project", "submitted"}, {"notes", "baseline for the sweep"}});
  EXPECT_EQ(run["project"], "submitted");
  EXPECT_EQ(run["notes"], "baseline for the sweep");
  EXPECT_THAT(names_listed(owner.api, "/api/v1/runs?project=submitted"),
              ElementsAre("with-project"));
  EXPECT_EQ(podium().submit_run(owner.api, "sub", "plain")["project"], nullptr);

  // A project that does not exist is refused with the field named; nothing is stored.
  auto spec = Podium::run_spec("sub", "orphan");
  spec["project"] = "no-such-project";
  EXPECT_TRUE(has_field_error(owner.api.post("/api/v1/runs", spec), "project"));
  EXPECT_EQ(podium().db().scalar("SELECT count(*) FROM runs WHERE name = 'orphan'"), "0");
}

TEST_F(Curation, RunsListFiltersByDatasetAcceleratorAndDateRangeWithPaging) {
  auto owner = podium().create_user("member");
  podium().create_cluster("one", "cpu-1");
  podium().create_cluster("two", "cpu-2");
  podium().create_dataset(owner.api, "web");
  podium().create_dataset(owner.api, "code");
  auto early = podium().submit_run(owner.api, "one", "early", {{"dataset", "web"}});
  // created_at has microseconds: a pause keeps the boundary between the two groups clear.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  auto mid = podium().submit_run(owner.api, "two", "mid", {{"dataset", "web"}});
  podium().submit_run(owner.api, "two", "late", {{"dataset", "code"}});
  import_run(owner.api, "imported-v5p");

  EXPECT_THAT(names_listed(owner.api, "/api/v1/runs?dataset=web"), ElementsAre("mid", "early"));
  EXPECT_THAT(
      names_listed(owner.api, "/api/v1/runs?dataset=" + mid["dataset_id"].get<std::string>()),
      ElementsAre("mid", "early"));
  EXPECT_THAT(names_listed(owner.api, "/api/v1/runs?accelerator=cpu-2", 1),
              ElementsAre("late", "mid"));
  EXPECT_THAT(names_listed(owner.api, "/api/v1/runs?accelerator=cpu"),
              ElementsAre("late", "mid", "early"));
  EXPECT_THAT(names_listed(owner.api, "/api/v1/runs?accelerator=v5p"), ElementsAre("imported-v5p"));
  EXPECT_THAT(names_listed(owner.api, "/api/v1/runs?accelerator=v5p-8"),
              ElementsAre("imported-v5p"));
  // Combined with each other and with the older filters.
  EXPECT_THAT(names_listed(owner.api, "/api/v1/runs?accelerator=cpu-2&dataset=web&cluster=two"),
              ElementsAre("mid"));

  const std::string since = mid["created_at"];
  EXPECT_THAT(names_listed(owner.api, "/api/v1/runs?since=" + enc(since), 1),
              ElementsAre("imported-v5p", "late", "mid"));
  EXPECT_THAT(names_listed(owner.api, "/api/v1/runs?until=" + enc(since)), ElementsAre("early"));
  EXPECT_THAT(names_listed(owner.api, "/api/v1/runs?dataset=web&since=" + enc(early["created_at"]) +
                                          "&until=" + enc(since)),
              ElementsAre("early"));
  // Offsets and a leap second PostgreSQL reads.
  EXPECT_EQ(owner.api.get("/api/v1/runs?since=" + enc("2026-12-31T23:59:60-15:59")).status, 200);
  // An offset form of the same instant.
  EXPECT_THAT(names_listed(owner.api, "/api/v1/runs?until=2000-01-01T01:00:00%2B01:00"),
              ElementsAre());

  for (const char* bad : {"yesterday", "2026-02-30T00:00:00Z", "2026-11-27", "2026-11-27T25:00:00Z",
                          "2026-11-27T12:00:00", "0000-01-01T00:00:00Z",
                          "2026-11-27T12:00:00+24:00", "9999-12-31T23:59:59-16:00"}) {
    EXPECT_TRUE(has_field_error(owner.api.get("/api/v1/runs?since=" + enc(bad)), "since")) << bad;
    EXPECT_TRUE(has_field_error(owner.api.get("/api/v1/runs?until=" + enc(bad)), "until")) << bad;
  }
}

TEST_F(Curation, ASavedCompareReloadsTheSameRunsAndBaseline) {
  auto owner = podium().create_user("member");
  auto other = podium().create_user("member");
  auto viewer = podium().create_user("viewer");
  auto a = import_run(owner.api, "base");
  auto b = import_run(owner.api, "candidate");
  auto c = import_run(other.api, "third");
  const std::string ia = a["id"], ib = b["id"], ic = c["id"];

  auto saved = owner.api.post("/api/v1/compares",
                              {{"name", "v5p sweep"}, {"runs", {ia, ib, ic}}, {"baseline", ib}});
  ASSERT_EQ(saved.status, 201) << saved;
  const std::string id = saved.json["id"];
  auto read = viewer.api.get("/api/v1/compares/" + id);
  ASSERT_EQ(read.status, 200) << read;
  EXPECT_EQ(read.json["name"], "v5p sweep");
  EXPECT_EQ(read.json["runs"], json({ia, ib, ic}));
  EXPECT_EQ(read.json["baseline"], ib);
  // What the dashboard's /compare/{id} then asks for: the same table as the view it saved.
  auto table = viewer.api.get("/api/v1/compare?runs=" + ia + "," + ib + "," + ic +
                              "&baseline=" + read.json["baseline"].get<std::string>());
  ASSERT_EQ(table.status, 200) << table;
  EXPECT_EQ(table.json["baseline"], ib);
  ASSERT_EQ(table.json["rows"].size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(table.json["rows"][i]["run_id"], read.json["runs"][i]);

  // The baseline defaults to the first run.
  auto plain = owner.api.post("/api/v1/compares", {{"name", "pair"}, {"runs", {ic, ia}}});
  ASSERT_EQ(plain.status, 201) << plain;
  EXPECT_EQ(plain.json["baseline"], ic);
  auto list = walk_pages(viewer.api, "/api/v1/compares", 1);
  EXPECT_THAT(ids_of(list.items), ElementsAre(plain.json["id"].get<std::string>(), id));

  EXPECT_TRUE(has_field_error(
      owner.api.post("/api/v1/compares", {{"name", "x"}, {"runs", {ia, "run_missing"}}}), "runs"));
  EXPECT_TRUE(
      has_field_error(owner.api.post("/api/v1/compares", {{"name", "x"}, {"runs", {ia}}}), "runs"));
  EXPECT_TRUE(has_field_error(
      owner.api.post("/api/v1/compares", {{"name", "x"}, {"runs", {ia, ia}}}), "runs"));
  EXPECT_TRUE(has_field_error(
      owner.api.post("/api/v1/compares", {{"name", "x"}, {"runs", {ia, ib}}, {"baseline", ic}}),
      "baseline"));
  EXPECT_TRUE(has_field_error(owner.api.post("/api/v1/compares", {{"runs", {ia, ib}}}), "name"));
  EXPECT_TRUE(
      is_problem(viewer.api.post("/api/v1/compares", {{"name", "x"}, {"runs", {ia, ib}}}), 403));
  EXPECT_TRUE(is_problem(owner.api.get("/api/v1/compares/cmp_nope"), 404));

  EXPECT_TRUE(is_problem(other.api.del("/api/v1/compares/" + id), 403));
  EXPECT_EQ(owner.api.del("/api/v1/compares/" + id).status, 204);
  EXPECT_TRUE(is_problem(owner.api.get("/api/v1/compares/" + id), 404));
}

}  // namespace
}  // namespace podium::it
