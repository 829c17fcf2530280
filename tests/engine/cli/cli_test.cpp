// run_cli() end to end against a fake Transport: argument handling, the requests each command
// makes, what it prints, and the exit codes.

#include "engine/cli/cli.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "engine/cli/commands.h"
#include "engine/cli/exit_codes.h"
#include "engine/cli/json.h"

namespace podium::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

struct Request {
  std::string method;
  std::string path;
  std::string body;
};

client::HttpClient::Result answer(int status, std::string body) {
  client::HttpClient::Result r;
  r.response = client::HttpResponse{};
  r.response->status = status;
  r.response->body = std::move(body);
  return r;
}

client::HttpClient::Result transport_failure(std::string message) {
  client::HttpClient::Result r;
  r.error = client::HttpError{std::move(message)};
  return r;
}

// One scripted stream connection: the events it delivers, then how it ends.
struct StreamScript {
  std::vector<std::pair<std::string, std::string>> events;
  std::optional<client::HttpError> end;
};

// What the fake "server" does; shared between the test and the Transport the CLI creates.
struct FakeServer {
  std::vector<Request> requests;
  std::vector<std::string> streams;
  std::function<client::HttpClient::Result(const Request&)> handler;
  std::deque<StreamScript> stream_scripts;
  std::optional<ClientConfig> config;
};

class FakeTransport : public Transport {
 public:
  explicit FakeTransport(FakeServer& s) : s_(s) {}
  client::HttpClient::Result request(const std::string& method, const std::string& path,
                                     const std::string& body) override {
    s_.requests.push_back({method, path, body});
    if (!s_.handler) return transport_failure("no handler");
    return s_.handler(s_.requests.back());
  }
  std::optional<client::HttpError> stream(const std::string& path,
                                          const client::SseParser::Handler& on_event) override {
    s_.streams.push_back(path);
    if (s_.stream_scripts.empty()) return client::HttpError{"no more streams"};
    StreamScript script = std::move(s_.stream_scripts.front());
    s_.stream_scripts.pop_front();
    for (const auto& [e, d] : script.events) {
      if (!on_event(e, d)) return std::nullopt;
    }
    return script.end;
  }

 private:
  FakeServer& s_;
};

class Cli : public ::testing::Test {
 protected:
  int run(std::vector<std::string> args) {
    out_.str("");
    err_.str("");
    server_.requests.clear();
    CliEnv env;
    env.getenv = [this](const std::string& name) -> std::optional<std::string> {
      const auto it = env_.find(name);
      if (it == env_.end()) return std::nullopt;
      return it->second;
    };
    env.connect = [this](const ClientConfig& c) -> std::unique_ptr<Transport> {
      server_.config = c;
      return std::make_unique<FakeTransport>(server_);
    };
    env.sleep = [this](std::chrono::milliseconds) { ++sleeps_; };
    env.in = &in_;
    return run_cli(args, env, out_, err_);
  }

  // Answers every request with this status and body.
  void always(int status, const std::string& body) {
    server_.handler = [status, body](const Request&) { return answer(status, body); };
  }

  std::string write_file(const std::string& name, const std::string& text) {
    const auto dir =
        std::filesystem::temp_directory_path() /
        ("podium_cli_test_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
         "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir);
    const auto path = dir / name;
    std::ofstream(path) << text;
    files_.push_back(dir);
    return path.string();
  }

  void TearDown() override {
    for (const auto& d : files_) std::filesystem::remove_all(d);
  }

  std::string out() const { return out_.str(); }
  std::string err() const { return err_.str(); }
  const std::vector<Request>& requests() const { return server_.requests; }

  FakeServer server_;
  std::map<std::string, std::string> env_;
  std::ostringstream out_;
  std::ostringstream err_;
  std::istringstream in_;
  int sleeps_ = 0;
  std::vector<std::filesystem::path> files_;
};

constexpr const char* kRunYaml = R"(name: t1
cluster: cpu
dataset: synth
model: reference-tiny
workload: reference
steps: 50
per_device_batch_size: 2
max_target_length: 128
parallelism: {ici_fsdp: 2, dcn_data: 1}
config: {remat_policy: full, learning_rate: 0.001}
min_slices: null
tags: ["7"]
)";

// ----- usage -----

TEST_F(Cli, NoArgumentsPrintsHelpToStderrAndExits2) {
  EXPECT_EQ(run({}), kExitUsage);
  EXPECT_THAT(err(), HasSubstr("usage: podium"));
  EXPECT_EQ(out(), "");
}

TEST_F(Cli, HelpListsCommandsAndExitCodes) {
  EXPECT_EQ(run({"--help"}), kExitOk);
  EXPECT_THAT(out(), HasSubstr("runs submit"));
  EXPECT_THAT(out(), HasSubstr("import-log FILE"));
  EXPECT_THAT(out(), HasSubstr("Exit codes:"));
  EXPECT_THAT(out(), HasSubstr("4  authentication"));
  EXPECT_THAT(out(), HasSubstr("PODIUM_SERVER"));
  EXPECT_EQ(run({"help"}), kExitOk);
  EXPECT_EQ(run({"help", "runs", "list"}), kExitOk);
  EXPECT_THAT(out(), HasSubstr("usage: podium runs list [options]"));
}

TEST_F(Cli, EveryCommandHasHelp) {
  for (const auto& c : all_commands()) {
    std::vector<std::string> args{c.group};
    if (!c.name.empty()) args.push_back(c.name);
    args.push_back("--help");
    EXPECT_EQ(run(args), kExitOk) << c.path();
    EXPECT_THAT(out(), StartsWith("usage: podium " + c.path())) << c.path();
    EXPECT_THAT(out(), HasSubstr("Exit codes:"));
    EXPECT_TRUE(requests().empty());
  }
}

TEST_F(Cli, GroupWithoutSubcommand) {
  EXPECT_EQ(run({"runs"}), kExitUsage);
  EXPECT_THAT(err(), HasSubstr("needs a subcommand (list, get, submit"));
  EXPECT_EQ(run({"runs", "--help"}), kExitOk);
  EXPECT_THAT(out(), HasSubstr("Subcommands:"));
}

TEST_F(Cli, UnknownCommandAndSubcommand) {
  EXPECT_EQ(run({"jobs", "list"}), kExitUsage);
  EXPECT_THAT(err(), HasSubstr("unknown command 'jobs'"));
  EXPECT_EQ(run({"runs", "frobnicate"}), kExitUsage);
  EXPECT_THAT(err(), HasSubstr("unknown subcommand 'frobnicate'"));
  EXPECT_TRUE(requests().empty());
}

TEST_F(Cli, BadOptionsAndArgumentCounts) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases{
      {{"runs", "list", "--bogus"}, "unknown option --bogus"},
      {{"runs", "list", "--limit"}, "option --limit needs a value"},
      {{"runs", "list", "--limit", "abc"}, "--limit must be an integer >= 1"},
      {{"runs", "list", "--limit", "0"}, "--limit must be an integer >= 1"},
      {{"runs", "get"}, "missing ID"},
      {{"runs", "get", "a", "b"}, "unexpected argument 'b'"},
      {{"runs", "list", "extra"}, "unexpected argument 'extra'"},
      {{"runs", "submit"}, "missing -f run.yaml"},
      {{"plan", "-f", "/nonexistent/run.yaml"}, "cannot read /nonexistent/run.yaml"},
      {{"compare"}, "missing RUN..."},
      {{"clusters", "create", "--accelerator", "cpu-1"}, "missing --name"},
      {{"clusters", "create", "--name", "c"}, "missing --accelerator"},
      {{"clusters", "create", "--name", "c", "--accelerator", "cpu-1", "--num-slices", "0"},
       "--num-slices must be"},
      {{"clusters", "create", "--name", "c", "--accelerator", "cpu-1", "--price-per-chip-hour",
        "x"},
       "--price-per-chip-hour must be"},
      {{"clusters", "create", "--name", "c", "--accelerator", "cpu-1", "--label", "novalue"},
       "--label must be KEY=VALUE"},
      {{"datasets", "create", "--name", "d", "--uri", "u", "--records", "-1"},
       "--records must be an integer >= 0"},
      {{"import-log", "x.log", "--model", "m"}, "missing --accelerator"},
      {{"logs", "r1", "--rank", "x"}, "--rank must be an integer >= 0"},
      {{"runs", "metrics", "r1", "--max-points", "0"}, "--max-points must be an integer >= 1"},
      {{"runs", "list", "--timeout", "0"}, "--timeout must be a number of seconds > 0"},
      {{"runs", "list", "--server", "ftp://x"}, "invalid server URL 'ftp://x'"},
      {{"runs", "list", "--json=1"}, "option --json takes no value"},
  };
  always(200, R"({"items":[],"next_cursor":null})");
  for (const auto& c : cases) {
    EXPECT_EQ(run(c.args), kExitUsage) << c.args[0] << " " << c.message;
    EXPECT_THAT(err(), HasSubstr(c.message)) << c.message;
    EXPECT_TRUE(requests().empty()) << c.message;
  }
}

// ----- configuration -----

TEST_F(Cli, ConfigPrecedenceFlagsOverEnvironmentOverDefault) {
  always(200, R"({"items":[]})");
  ASSERT_EQ(run({"runs", "list"}), kExitOk);
  EXPECT_EQ(server_.config->server, "http://127.0.0.1:8080");
  EXPECT_EQ(server_.config->token, "");

  env_ = {{"PODIUM_SERVER", "http://env:9000"}, {"PODIUM_TOKEN", "env-token"}};
  ASSERT_EQ(run({"runs", "list"}), kExitOk);
  EXPECT_EQ(server_.config->server, "http://env:9000");
  EXPECT_EQ(server_.config->token, "env-token");

  ASSERT_EQ(
      run({"--server", "http://flag:1", "runs", "list", "--token=flag-token", "--timeout", "2.5"}),
      kExitOk);
  EXPECT_EQ(server_.config->server, "http://flag:1");
  EXPECT_EQ(server_.config->token, "flag-token");
  EXPECT_EQ(server_.config->timeout, std::chrono::milliseconds(2500));

  env_ = {{"PODIUM_SERVER", ""}};  // exported but empty: the default applies
  ASSERT_EQ(run({"runs", "list"}), kExitOk);
  EXPECT_EQ(server_.config->server, "http://127.0.0.1:8080");
}

TEST_F(Cli, GlobalOptionsAnywhere) {
  always(200, R"({"items":[]})");
  EXPECT_EQ(run({"--json", "runs", "--server", "http://h:1", "list"}), kExitOk);
  EXPECT_EQ(server_.config->server, "http://h:1");
  EXPECT_EQ(out(), "{\"items\":[]}\n");
}

// ----- lists -----

TEST_F(Cli, RunsListTableWithFilters) {
  always(
      200,
      R"({"items":[{"id":"r1","name":"a","state":"running","cluster":"cpu","model":"reference-tiny",
    "last_step":10,"restarts":0,"created_at":"2025-01-01T00:00:00Z"}],"next_cursor":null})");
  ASSERT_EQ(run({"runs", "list", "--state", "running", "--cluster", "my cpu", "--limit", "5"}),
            kExitOk);
  ASSERT_EQ(requests().size(), 1u);
  EXPECT_EQ(requests()[0].method, "GET");
  EXPECT_EQ(requests()[0].path, "/api/v1/runs?state=running&cluster=my%20cpu&limit=5");
  EXPECT_EQ(
      out(),
      "ID   NAME   STATE     CLUSTER   MODEL            STEP   RESTARTS   CREATED\n"
      "r1   a      running   cpu       reference-tiny     10          0   2025-01-01 00:00:00\n");
  EXPECT_EQ(err(), "");
}

TEST_F(Cli, AcceleratorsListShowsChipsDevicesAndHostsSideBySide) {
  always(200, R"({"items":[{"family":"tpu7x","type":"tpu7x-64","topology":"2x4x4",
    "chips_per_slice":32,"devices_per_slice":64,"hosts_per_slice":8,
    "peak_tflops_per_device":1153.5,"hbm_gib_per_device":96},
    {"family":"tpu7x","type":"tpu7x-128","topology":"4x4x4","chips_per_slice":64,
    "devices_per_slice":128,"hosts_per_slice":16,"peak_tflops_per_device":1153.5,
    "hbm_gib_per_device":96}],"next_cursor":null})");
  ASSERT_EQ(run({"accelerators", "list", "--family", "tpu7x"}), kExitOk);
  ASSERT_EQ(requests().size(), 1u);
  EXPECT_EQ(requests()[0].path, "/api/v1/accelerators?family=tpu7x");
  EXPECT_THAT(out(), HasSubstr("TYPE"));
  EXPECT_THAT(out(), HasSubstr("CHIPS"));
  EXPECT_THAT(out(), HasSubstr("DEVICES"));
  EXPECT_THAT(out(), HasSubstr("HOSTS"));
  const std::string text = out();
  const size_t row = text.find("tpu7x-64");
  ASSERT_NE(row, std::string::npos) << text;
  const std::string line = text.substr(row, text.find('\n', row) - row);
  EXPECT_THAT(line, ::testing::MatchesRegex(".*2x4x4 +32 +64 +8 +1153\\.5 +96"));
  EXPECT_EQ(err(), "");
}

TEST_F(Cli, ListWithoutAllMentionsMorePages) {
  always(200, R"({"items":[{"id":"r1"}],"next_cursor":"abc"})");
  ASSERT_EQ(run({"runs", "list"}), kExitOk);
  EXPECT_EQ(requests()[0].path, "/api/v1/runs");
  EXPECT_THAT(err(), HasSubstr("use --all"));
}

TEST_F(Cli, ListAllFollowsCursors) {
  server_.handler = [](const Request& r) {
    if (r.path == "/api/v1/clusters?limit=500")
      return answer(200, R"({"items":[{"name":"a"}],"next_cursor":"c/1"})");
    if (r.path == "/api/v1/clusters?limit=500&cursor=c%2F1") {
      return answer(200, R"({"items":[{"name":"b"}],"next_cursor":null})");
    }
    return answer(404, "{}");
  };
  ASSERT_EQ(run({"clusters", "list", "--all", "--json"}), kExitOk);
  ASSERT_EQ(requests().size(), 2u);
  const Json j = Json::parse(out());
  EXPECT_EQ(j["items"].size(), 2u);
  EXPECT_EQ(j["items"][1]["name"], "b");
  EXPECT_TRUE(j["next_cursor"].is_null());

  ASSERT_EQ(run({"clusters", "list", "--all"}), kExitOk);
  EXPECT_THAT(out(), HasSubstr("\na "));
  EXPECT_THAT(out(), HasSubstr("\nb "));
}

TEST_F(Cli, ListAllWithLimitCapsTheTotal) {
  server_.handler = [](const Request& r) {
    if (r.path == "/api/v1/datasets?limit=3") {
      return answer(200, R"({"items":[{"name":"a"},{"name":"b"}],"next_cursor":"n"})");
    }
    if (r.path == "/api/v1/datasets?limit=1&cursor=n")
      return answer(200, R"({"items":[{"name":"c"}],"next_cursor":"m"})");
    return answer(500, "{}");
  };
  ASSERT_EQ(run({"datasets", "list", "--all", "--limit", "3", "--json"}), kExitOk);
  const Json j = Json::parse(out());
  EXPECT_EQ(j["items"].size(), 3u);
  EXPECT_EQ(j["next_cursor"], "m");
}

TEST_F(Cli, ListAllStopsOnARepeatedCursor) {
  always(200, R"({"items":[{"name":"a"}],"next_cursor":"same"})");
  EXPECT_EQ(run({"clusters", "list", "--all"}), kExitTransport);
  EXPECT_THAT(err(), HasSubstr("same cursor twice"));
}

TEST_F(Cli, EmptyListSaysSoOnStderr) {
  always(200, R"({"items":[],"next_cursor":null})");
  ASSERT_EQ(run({"models", "list"}), kExitOk);
  EXPECT_EQ(out(), "");
  EXPECT_EQ(err(), "no models found\n");
}

TEST_F(Cli, ListThatIsNotAListIsUnreadable) {
  always(200, "<html></html>");
  EXPECT_EQ(run({"runs", "list"}), kExitTransport);
  EXPECT_THAT(err(), HasSubstr("expected a list of runs"));
}

// ----- errors and exit codes -----

TEST_F(Cli, NotFoundIsExit5WithProblemOnStderr) {
  always(404,
         R"({"type":"about:blank","title":"Not Found","status":404,"detail":"no run named r9"})");
  EXPECT_EQ(run({"runs", "get", "r9"}), kExitNotFound);
  EXPECT_EQ(err(), "error: Not Found: no run named r9\n");
  EXPECT_EQ(out(), "");
  EXPECT_EQ(requests()[0].path, "/api/v1/runs/r9");
}

TEST_F(Cli, AuthErrorsAreExit4WithAHint) {
  always(401, R"({"title":"Unauthorized","status":401,"detail":"missing bearer token"})");
  EXPECT_EQ(run({"clusters", "list"}), kExitAuth);
  EXPECT_THAT(err(), HasSubstr("error: Unauthorized: missing bearer token"));
  EXPECT_THAT(err(), HasSubstr("PODIUM_TOKEN"));
  always(403, R"({"title":"Forbidden","status":403})");
  EXPECT_EQ(run({"clusters", "worker-token", "c", "--token", "t"}), kExitAuth);
  EXPECT_EQ(err(), "error: Forbidden\n");
}

TEST_F(Cli, ConflictAndValidationErrorsAreExit1) {
  always(409, R"({"title":"Conflict","status":409,"detail":"run r1 already finished"})");
  EXPECT_EQ(run({"runs", "cancel", "r1"}), kExitFailed);
  EXPECT_EQ(err(), "error: Conflict: run r1 already finished\n");
  always(422, R"({"title":"Unprocessable Entity","status":422,"detail":"invalid cluster",
    "errors":[{"field":"accelerator","message":"unknown accelerator tpu9; valid: tpu7x-64, v5p-128"}]})");
  EXPECT_EQ(run({"clusters", "create", "--name", "c", "--accelerator", "tpu9"}), kExitFailed);
  EXPECT_EQ(err(),
            "error: Unprocessable Entity: invalid cluster\n"
            "  accelerator: unknown accelerator tpu9; valid: tpu7x-64, v5p-128\n");
  always(503, R"({"title":"Service Unavailable","status":503,"detail":"database unavailable"})");
  EXPECT_EQ(run({"models", "list"}), kExitFailed);
}

TEST_F(Cli, TransportFailureIsExit3) {
  server_.handler = [](const Request&) {
    return transport_failure("cannot connect to 127.0.0.1:8080: Connection refused");
  };
  EXPECT_EQ(run({"runs", "list"}), kExitTransport);
  EXPECT_EQ(err(),
            "error: cannot talk to the server at http://127.0.0.1:8080: cannot connect to "
            "127.0.0.1:8080: Connection "
            "refused\n");
}

// ----- resources -----

TEST_F(Cli, ClustersCreateSendsTypedBody) {
  always(201,
         R"({"id":"c1","name":"v7","accelerator":{"type":"tpu7x-64"},"hosts":{"expected":8}})");
  ASSERT_EQ(run({"clusters", "create", "--name", "v7", "--accelerator", "tpu7x-64", "--num-slices",
                 "2", "--capacity", "spot", "--zone", "us-central1-c", "--price-per-chip-hour",
                 "1.25", "--label", "team=llm"}),
            kExitOk);
  ASSERT_EQ(requests().size(), 1u);
  EXPECT_EQ(requests()[0].method, "POST");
  EXPECT_EQ(requests()[0].path, "/api/v1/clusters");
  const Json body = Json::parse(requests()[0].body);
  EXPECT_EQ(body["name"], "v7");
  EXPECT_EQ(body["accelerator"], "tpu7x-64");
  EXPECT_EQ(body["num_slices"], 2);
  EXPECT_TRUE(body["num_slices"].is_number_integer());
  EXPECT_EQ(body["capacity"], "spot");
  EXPECT_EQ(body["price_per_chip_hour"], 1.25);
  EXPECT_EQ(body["labels"]["team"], "llm");
  EXPECT_THAT(out(), StartsWith("created cluster v7\nid: c1\n"));
}

TEST_F(Cli, ClustersCreateSendsOnlyGivenFields) {
  always(201, R"({"id":"c1"})");
  ASSERT_EQ(run({"clusters", "create", "--name", "c", "--accelerator", "cpu-2"}), kExitOk);
  EXPECT_EQ(Json::parse(requests()[0].body), Json::parse(R"({"name":"c","accelerator":"cpu-2"})"));
}

TEST_F(Cli, ClusterPathsEncodeNames) {
  always(200, R"({"name":"a b"})");
  ASSERT_EQ(run({"clusters", "get", "a b"}), kExitOk);
  EXPECT_EQ(requests()[0].path, "/api/v1/clusters/a%20b");
  EXPECT_EQ(out(), "name: a b\n");
  always(204, "");
  ASSERT_EQ(run({"clusters", "delete", "v7"}), kExitOk);
  EXPECT_EQ(requests()[0].method, "DELETE");
  EXPECT_EQ(out(), "deleted cluster v7\n");
}

TEST_F(Cli, WorkerTokenPrintsOnlyTheTokenOnStdout) {
  always(201, R"({"id":"wt1","token":"pdw_secret"})");
  ASSERT_EQ(run({"clusters", "worker-token", "v7"}), kExitOk);
  EXPECT_EQ(requests()[0].method, "POST");
  EXPECT_EQ(requests()[0].path, "/api/v1/clusters/v7/worker-tokens");
  EXPECT_EQ(out(), "pdw_secret\n");
  EXPECT_THAT(err(), HasSubstr("shown only this once"));
}

TEST_F(Cli, ProvisioningPrintsCommands) {
  always(
      200,
      R"({"commands":[{"description":"create the slice","command":"xpk cluster create --tpu-type=tpu7x-64"},
    "gcloud compute tpus list"]})");
  ASSERT_EQ(run({"clusters", "provisioning", "v7"}), kExitOk);
  EXPECT_EQ(
      out(),
      "# create the slice\nxpk cluster create --tpu-type=tpu7x-64\ngcloud compute tpus list\n");
  always(200, "#!/bin/sh\nxpk cluster create\n");
  ASSERT_EQ(run({"clusters", "provisioning", "v7"}), kExitOk);
  EXPECT_EQ(out(), "#!/bin/sh\nxpk cluster create\n");
}

TEST_F(Cli, ProvisioningOptionsAsShellBlocks) {
  always(200, R"({"options":[
    {"method":"xpk","description":"GKE through xpk","commands":["xpk cluster create --cluster v7"],"notes":["needs quota"]},
    {"method":"tpu-vm","description":"bare TPU VMs","commands":["gcloud a","gcloud b"],"notes":[]}]})");
  ASSERT_EQ(run({"clusters", "provisioning", "v7"}), kExitOk);
  EXPECT_EQ(requests()[0].path, "/api/v1/clusters/v7/provisioning");
  EXPECT_EQ(out(),
            "# xpk: GKE through xpk\n"
            "xpk cluster create --cluster v7\n"
            "# note: needs quota\n"
            "\n"
            "# tpu-vm: bare TPU VMs\n"
            "gcloud a\n"
            "gcloud b\n");
  ASSERT_EQ(run({"clusters", "provisioning", "v7", "--method", "tpu-vm"}), kExitOk);
  EXPECT_EQ(out(), "# tpu-vm: bare TPU VMs\ngcloud a\ngcloud b\n");
  EXPECT_EQ(run({"clusters", "provisioning", "v7", "--method", "slurm"}), kExitUsage);
  EXPECT_THAT(err(), HasSubstr("(xpk, tpu-vm)"));
}

TEST_F(Cli, Whoami) {
  always(200, R"({"kind":"user","id":"u1","username":"admin","role":"admin"})");
  ASSERT_EQ(run({"whoami"}), kExitOk);
  EXPECT_EQ(requests()[0].path, "/api/v1/auth/me");
  EXPECT_EQ(out(), "admin (admin) at http://127.0.0.1:8080\n");
  always(200, R"({"kind":"worker","token_id":"wtk_1","cluster_id":"c1"})");
  ASSERT_EQ(run({"whoami"}), kExitOk);
  EXPECT_EQ(out(), "worker token wtk_1 of cluster c1\n");
}

TEST_F(Cli, RunEvents) {
  always(
      200,
      R"({"items":[{"at":"2025-01-01T00:00:00.000000Z","from_state":null,"to_state":"queued","cause":"submitted"},
    {"at":"2025-01-01T00:00:01.000000Z","from_state":"queued","to_state":"starting","cause":"placed"}],"next_cursor":null})");
  ASSERT_EQ(run({"runs", "events", "r1"}), kExitOk);
  EXPECT_EQ(requests()[0].path, "/api/v1/runs/r1/events");
  EXPECT_EQ(out(),
            "AT                    FROM     TO         CAUSE\n"
            "2025-01-01 00:00:00   -        queued     submitted\n"
            "2025-01-01 00:00:01   queued   starting   placed\n");
}

TEST_F(Cli, WorkersTable) {
  always(
      200,
      R"({"items":[{"id":"w1","slice":0,"host":1,"hostname":"h1","address":"10.0.0.2","devices":4,
    "state":"healthy","last_heartbeat_at":"2025-01-01T00:00:05Z","version":"0.1.0"}],"next_cursor":null})");
  ASSERT_EQ(run({"clusters", "workers", "v7"}), kExitOk);
  EXPECT_EQ(requests()[0].path, "/api/v1/clusters/v7/workers");
  EXPECT_THAT(out(), HasSubstr("w1   "));
  EXPECT_THAT(out(), HasSubstr("healthy"));
}

TEST_F(Cli, DatasetsCreate) {
  always(201, R"({"id":"d1","name":"c4"})");
  ASSERT_EQ(
      run({"datasets", "create", "--name", "c4", "--uri", "gs://b/c4", "--format", "arrayrecord",
           "--records", "1000", "--tokens", "5000000000", "--tokens-per-record", "512.5"}),
      kExitOk);
  const Json body = Json::parse(requests()[0].body);
  EXPECT_EQ(body["records"], 1000);
  EXPECT_EQ(body["tokens"], 5000000000LL);
  EXPECT_EQ(body["tokens_per_record"], 512.5);
  EXPECT_FALSE(body.contains("bytes"));
  EXPECT_EQ(body["format"], "arrayrecord");
}

TEST_F(Cli, ModelsGet) {
  always(200, R"({"name":"llama2-7b","parameters":{"total":6738415616}})");
  ASSERT_EQ(run({"models", "get", "llama2-7b"}), kExitOk);
  EXPECT_EQ(requests()[0].path, "/api/v1/models/llama2-7b");
  EXPECT_EQ(out(), "name: llama2-7b\nparameters:\n  total: 6738415616\n");
}

TEST_F(Cli, ModelsAddSendsTheYamlAsWrittenNamedAfterTheFile) {
  const std::string text = "base_emb_dim: 2560\nrope_max_timescale: 50_000\n";
  const std::string file = write_file("team-model.yml", text);
  always(
      201,
      R"({"name":"team-model","parameters":{"total":18921556872,"active_per_token":3110000000}})");
  ASSERT_EQ(run({"models", "add", "-f", file}), kExitOk);
  ASSERT_EQ(requests().size(), 1u);
  EXPECT_EQ(requests()[0].method, "POST");
  EXPECT_EQ(requests()[0].path, "/api/v1/models");
  const Json body = Json::parse(requests()[0].body);
  EXPECT_EQ(body["name"], "team-model");
  EXPECT_EQ(body["yaml"], text);
  EXPECT_FALSE(body.contains("config"));
  EXPECT_THAT(out(), StartsWith("added model team-model: "));
}

TEST_F(Cli, ModelsAddJsonFileWithNameAndDelete) {
  const std::string file = write_file("m.json", R"({"base_emb_dim": 512})");
  always(201, R"({"name":"other"})");
  ASSERT_EQ(run({"models", "add", "-f", file, "--name", "other", "--description", "d"}), kExitOk);
  const Json body = Json::parse(requests()[0].body);
  EXPECT_EQ(body["name"], "other");
  EXPECT_EQ(body["description"], "d");
  EXPECT_EQ(body["config"]["base_emb_dim"], 512);
  const std::string bad = write_file("bad.json", "[1]");
  EXPECT_EQ(run({"models", "add", "-f", bad}), kExitUsage);
  EXPECT_TRUE(requests().empty());  // refused before any request
  in_.str("base_emb_dim: 1\n");
  EXPECT_EQ(run({"models", "add", "-f", "-"}), kExitUsage);  // stdin needs --name
  always(204, "");
  ASSERT_EQ(run({"models", "delete", "other"}), kExitOk);
  EXPECT_EQ(requests().back().method, "DELETE");
  EXPECT_EQ(requests().back().path, "/api/v1/models/other");
}

TEST_F(Cli, SubmitSkipChecks) {
  in_.str(kRunYaml);
  always(201, R"({"id":"r1","name":"t1","state":"queued"})");
  ASSERT_EQ(run({"runs", "submit", "-f", "-", "--skip-check", "hbm", "--skip-check", "mesh"}),
            kExitOk);
  EXPECT_EQ(Json::parse(requests()[0].body)["skip_checks"], Json::array({"hbm", "mesh"}));
}

// ----- runs -----

TEST_F(Cli, SubmitConvertsYamlToJson) {
  const std::string file = write_file("run.yaml", kRunYaml);
  always(201, R"({"id":"r1","name":"t1","state":"queued","plan":{"ok":true,"errors":[],
    "warnings":[{"code":"slow","message":"low MFU expected"}]}})");
  ASSERT_EQ(run({"runs", "submit", "-f", file}), kExitOk);
  ASSERT_EQ(requests().size(), 1u);
  EXPECT_EQ(requests()[0].path, "/api/v1/runs");
  const Json body = Json::parse(requests()[0].body);
  EXPECT_EQ(body["steps"], 50);
  EXPECT_TRUE(body["steps"].is_number_integer());
  EXPECT_EQ(body["parallelism"]["ici_fsdp"], 2);
  EXPECT_EQ(body["config"]["remat_policy"], "full");
  EXPECT_TRUE(body["min_slices"].is_null());
  EXPECT_EQ(body["tags"][0], "7");
  EXPECT_FALSE(body.contains("force"));
  EXPECT_EQ(out(), "submitted run r1 (t1): queued\nplan: ok, 1 warning\n");
  EXPECT_EQ(err(), "warning: slow: low MFU expected\n");
}

TEST_F(Cli, SubmitForceAndStdin) {
  in_.str(kRunYaml);
  always(201, R"({"id":"r1","name":"t1","state":"queued"})");
  ASSERT_EQ(run({"runs", "submit", "-f", "-", "--force"}), kExitOk);
  EXPECT_EQ(Json::parse(requests()[0].body)["force"], true);
}

TEST_F(Cli, SubmitRefusedPlanShowsWhy) {
  const std::string file = write_file("run.yaml", kRunYaml);
  always(422, R"({"title":"Unprocessable Entity","status":422,"detail":"the plan has errors",
    "errors":[{"code":"mesh_product_mismatch","message":"ici product 2 != 4 devices","hint":"set ici_fsdp: 4"}],
    "plan":{"ok":false,"errors":[{"code":"mesh_product_mismatch","message":"ici product 2 != 4 devices"}],"warnings":[]}})");
  EXPECT_EQ(run({"runs", "submit", "-f", file}), kExitFailed);
  EXPECT_THAT(err(), StartsWith("error: Unprocessable Entity: the plan has errors\n"
                                "  mesh_product_mismatch: ici product 2 != 4 devices\n"
                                "    hint: set ici_fsdp: 4\n"));
  EXPECT_THAT(err(), HasSubstr("Plan: ERRORS (1)"));
  EXPECT_THAT(err(), HasSubstr("--force"));
}

TEST_F(Cli, SubmitInvalidYamlIsAUsageError) {
  const std::string file = write_file("bad.yaml", "name: [unterminated\n");
  EXPECT_EQ(run({"runs", "submit", "-f", file}), kExitUsage);
  EXPECT_THAT(err(), HasSubstr(file + ": line"));
  const std::string list = write_file("list.yaml", "- a\n");
  EXPECT_EQ(run({"plan", "-f", list}), kExitUsage);
  EXPECT_THAT(err(), HasSubstr("mapping"));
  EXPECT_TRUE(requests().empty());
}

TEST_F(Cli, RunsGetHidesThePlanBehindAVerdict) {
  always(
      200,
      R"({"id":"r1","name":"t1","state":"failed","failure_class":"oom","plan":{"ok":true,"errors":[],"warnings":[]}})");
  ASSERT_EQ(run({"runs", "get", "r1"}), kExitOk);
  EXPECT_EQ(out(), "id: r1\nname: t1\nstate: failed\nfailure_class: oom\nplan: ok, 0 warnings\n");
}

TEST_F(Cli, RunsCancelAndDelete) {
  always(200, R"({"id":"r1","state":"cancelling"})");
  ASSERT_EQ(run({"runs", "cancel", "r1"}), kExitOk);
  EXPECT_EQ(requests()[0].method, "POST");
  EXPECT_EQ(requests()[0].path, "/api/v1/runs/r1/cancel");
  EXPECT_EQ(out(), "cancel requested for run r1: cancelling\n");
  always(204, "");
  ASSERT_EQ(run({"runs", "delete", "r1"}), kExitOk);
  EXPECT_EQ(requests()[0].method, "DELETE");
  EXPECT_EQ(out(), "deleted run r1\n");
}

TEST_F(Cli, RunsMetricsQueryAndTable) {
  always(200, R"({"steps":[10,20],"series":{"loss":[2.0,1.5],"step_seconds":[1.25,1.25]}})");
  ASSERT_EQ(run({"runs", "metrics", "r1", "--fields", "step_seconds,loss", "--from-step", "10",
                 "--max-points", "100"}),
            kExitOk);
  EXPECT_EQ(requests()[0].path,
            "/api/v1/runs/r1/metrics?fields=step_seconds%2Closs&from_step=10&max_points=100");
  EXPECT_EQ(out(),
            "STEP   STEP_SECONDS   LOSS\n"
            "  10           1.25      2\n"
            "  20           1.25    1.5\n");
}

TEST_F(Cli, RunsAttemptsCheckpointsSummary) {
  always(
      200,
      R"({"items":[{"number":1,"started_at":"2025-01-01T00:00:00Z","exit_codes":[137],"failure_class":"oom",
    "first_step":0,"last_step":99,"hosts":[{"rank":0},{"rank":1}]}],"next_cursor":null})");
  ASSERT_EQ(run({"runs", "attempts", "r1"}), kExitOk);
  EXPECT_EQ(requests()[0].path, "/api/v1/runs/r1/attempts");
  EXPECT_THAT(out(), HasSubstr("0..99"));
  EXPECT_THAT(out(), HasSubstr("oom"));
  always(200, R"({"items":[{"step":200,"uri":"file:///ckpt/200","bytes":2048}]})");
  ASSERT_EQ(run({"runs", "checkpoints", "r1"}), kExitOk);
  EXPECT_THAT(out(), HasSubstr("2 KiB"));
  always(200, R"({"step_seconds":{"value":1.2,"steps":40},"mfu":0.41})");
  ASSERT_EQ(run({"runs", "summary", "r1"}), kExitOk);
  EXPECT_EQ(requests()[0].path, "/api/v1/runs/r1/summary");
  EXPECT_EQ(out(), "step_seconds:\n  value: 1.2\n  steps: 40\nmfu: 0.41\n");
}

// ----- plan -----

TEST_F(Cli, PlanOkExits0) {
  const std::string file = write_file("run.yaml", kRunYaml);
  always(200, R"({"ok":true,"errors":[],"warnings":[]})");
  ASSERT_EQ(run({"plan", "-f", file}), kExitOk);
  EXPECT_EQ(requests()[0].method, "POST");
  EXPECT_EQ(requests()[0].path, "/api/v1/plan");
  EXPECT_EQ(Json::parse(requests()[0].body)["model"], "reference-tiny");
  EXPECT_THAT(out(), StartsWith("Plan: OK\n"));
}

TEST_F(Cli, PlanWithErrorsExits1) {
  const std::string file = write_file("run.yaml", kRunYaml);
  const std::string plan =
      R"({"ok":false,"errors":[{"code":"hbm_exceeded","message":"too big","hint":"remat"}],"warnings":[]})";
  always(200, plan);
  EXPECT_EQ(run({"plan", "-f", file}), kExitFailed);
  EXPECT_THAT(out(), HasSubstr("Plan: ERRORS (1)"));
  EXPECT_THAT(out(), HasSubstr("hbm_exceeded: too big\n    hint: remat"));
  // The same verdict when the server answers 422 with the plan, and with --json.
  always(422, plan);
  EXPECT_EQ(run({"plan", "-f", file}), kExitFailed);
  EXPECT_THAT(out(), HasSubstr("Plan: ERRORS (1)"));
  EXPECT_EQ(run({"plan", "-f", file, "--json"}), kExitFailed);
  EXPECT_EQ(out(), plan + "\n");
}

TEST_F(Cli, PlanMalformedSpecIsAProblem) {
  const std::string file = write_file("run.yaml", kRunYaml);
  always(400, R"({"title":"Bad Request","status":400,"detail":"steps must be an integer"})");
  EXPECT_EQ(run({"plan", "-f", file}), kExitFailed);
  EXPECT_EQ(err(), "error: Bad Request: steps must be an integer\n");
}

// ----- logs -----

TEST_F(Cli, LogsPagesThroughAllLines) {
  server_.handler = [](const Request& r) {
    if (r.path == "/api/v1/runs/r1/logs?limit=500") {
      return answer(200, R"({"items":[{"attempt":1,"rank":0,"seq":1,"ts":"t","line":"a"},
        {"attempt":1,"rank":1,"seq":1,"ts":"t","line":"b"}],"next_cursor":"k"})");
    }
    if (r.path == "/api/v1/runs/r1/logs?limit=500&cursor=k") {
      return answer(
          200,
          R"({"items":[{"attempt":2,"rank":0,"seq":1,"ts":"t","line":"c\n"}],"next_cursor":null})");
    }
    return answer(404, "{}");
  };
  ASSERT_EQ(run({"logs", "r1"}), kExitOk);
  EXPECT_EQ(out(), "--- attempt 1 ---\n[0] a\n[1] b\n--- attempt 2 ---\n[0] c\n");
}

TEST_F(Cli, LogsFilteredByRankAndAttemptPrintBareLines) {
  always(200, R"({"items":[{"attempt":3,"rank":2,"seq":5,"line":"x"}],"next_cursor":null})");
  ASSERT_EQ(run({"logs", "r1", "--rank", "2", "--attempt", "3"}), kExitOk);
  EXPECT_EQ(requests()[0].path, "/api/v1/runs/r1/logs?attempt=3&rank=2&limit=500");
  EXPECT_EQ(out(), "x\n");
}

TEST_F(Cli, LogsFollowStreamsDedupesAndStopsAtTheEnd) {
  always(200, R"({"items":[{"attempt":1,"rank":0,"seq":1,"line":"one"}],"next_cursor":null})");
  server_.stream_scripts.push_back(StreamScript{
      {{"log", R"({"attempt":1,"rank":0,"seq":1,"line":"one"})"},  // replayed: not printed twice
       {"log", R"({"attempt":1,"rank":0,"seq":2,"line":"two"})"},
       {"message", R"({"attempt":1,"rank":0,"seq":3,"lines":["three","four"]})"},
       {"end", "{}"}},
      std::nullopt});
  ASSERT_EQ(run({"logs", "r1", "-f", "--rank", "0"}), kExitOk);
  ASSERT_EQ(server_.streams.size(), 1u);
  EXPECT_EQ(server_.streams[0], "/api/v1/runs/r1/logs/stream?rank=0");
  EXPECT_EQ(out(), "--- attempt 1 ---\none\ntwo\nthree\nfour\n");
}

TEST_F(Cli, LogsFollowReconnectsWhileTheRunIsActive) {
  int run_gets = 0;
  server_.handler = [&run_gets](const Request& r) {
    if (r.path == "/api/v1/runs/r1") {
      ++run_gets;
      return answer(200, run_gets == 1 ? R"({"state":"running"})" : R"({"state":"succeeded"})");
    }
    return answer(200, R"({"items":[],"next_cursor":null})");
  };
  server_.stream_scripts.push_back(
      StreamScript{{{"log", R"({"rank":0,"seq":1,"line":"a"})"}}, std::nullopt});
  server_.stream_scripts.push_back(StreamScript{
      {{"log", R"({"rank":0,"seq":1,"line":"a"})"}, {"log", R"({"rank":0,"seq":2,"line":"b"})"}},
      client::HttpError{"no data for 30s on the event stream", 0, "", true}});
  ASSERT_EQ(run({"logs", "r1", "--follow", "--attempt", "1"}), kExitOk);
  EXPECT_EQ(server_.streams.size(), 2u);
  EXPECT_EQ(run_gets, 2);
  EXPECT_EQ(sleeps_, 1);
  EXPECT_EQ(out(), "[0] a\n[0] b\n");
}

TEST_F(Cli, LogsFollowErrors) {
  always(200, R"({"items":[],"next_cursor":null})");
  server_.stream_scripts.push_back(
      StreamScript{{}, client::HttpError{"refused", 404, R"({"title":"Not Found"})"}});
  EXPECT_EQ(run({"logs", "r1", "-f"}), kExitNotFound);
  EXPECT_EQ(err(), "error: Not Found\n");
  server_.stream_scripts.push_back(StreamScript{{}, client::HttpError{"event stream broke"}});
  EXPECT_EQ(run({"logs", "r1", "-f"}), kExitTransport);
  EXPECT_THAT(err(), HasSubstr("event stream broke"));
}

TEST_F(Cli, LogsFollowStopsOnATerminalStateEvent) {
  always(200, R"({"items":[],"next_cursor":null})");
  server_.stream_scripts.push_back(
      StreamScript{{{"state", R"({"state":"failed"})"}}, std::nullopt});
  EXPECT_EQ(run({"logs", "r1", "-f"}), kExitOk);
  EXPECT_EQ(requests().size(), 1u);  // no run lookup needed
}

// ----- compare, import-log, version -----

TEST_F(Cli, CompareBuildsTheQuery) {
  always(200, R"({"baseline":"r1","rows":[{"run_id":"r1","name":"a","step_seconds":1.0},
    {"run_id":"r2","name":"b","step_seconds":2.0,"ratios":{"step_seconds":2.0}}]})");
  ASSERT_EQ(run({"compare", "r1", "r2", "--baseline", "r1"}), kExitOk);
  EXPECT_EQ(requests()[0].path, "/api/v1/compare?runs=r1,r2&baseline=r1");
  EXPECT_THAT(out(), HasSubstr("a *"));
  EXPECT_THAT(out(), HasSubstr("2 (2.0× slower)"));
}

TEST_F(Cli, ImportLogSendsTheFileText) {
  const std::string file =
      write_file("llama2-7b-v5p.log", "I0101 completed step: 1, seconds: 5.6\n");
  always(201, R"({"id":"r7","name":"llama2-7b-v5p","state":"succeeded","last_step":1})");
  ASSERT_EQ(run({"import-log", file, "--accelerator", "v5p-128", "--model", "llama2-7b"}), kExitOk);
  EXPECT_EQ(requests()[0].path, "/api/v1/runs/import");
  const Json body = Json::parse(requests()[0].body);
  EXPECT_EQ(body["name"], "llama2-7b-v5p");
  EXPECT_EQ(body["accelerator"], "v5p-128");
  EXPECT_EQ(body["model"], "llama2-7b");
  EXPECT_EQ(body["num_slices"], 1);
  EXPECT_EQ(body["log"], "I0101 completed step: 1, seconds: 5.6\n");
  EXPECT_EQ(out(), "imported run r7 (llama2-7b-v5p): succeeded, last step 1\n");

  ASSERT_EQ(run({"import-log", file, "--accelerator", "a", "--model", "m", "--name", "x",
                 "--num-slices", "2"}),
            kExitOk);
  EXPECT_EQ(Json::parse(requests()[0].body)["name"], "x");
  EXPECT_EQ(Json::parse(requests()[0].body)["num_slices"], 2);
}

TEST_F(Cli, ImportLogMissingFile) {
  EXPECT_EQ(run({"import-log", "/nonexistent.log", "--accelerator", "a", "--model", "m"}),
            kExitUsage);
  EXPECT_THAT(err(), HasSubstr("cannot read /nonexistent.log"));
}

TEST_F(Cli, VersionNeedsNoServer) {
  EXPECT_EQ(run({"version"}), kExitOk);
  EXPECT_EQ(out(), "podium " + std::string(client::client_version()) + "\n");
  EXPECT_EQ(run({"--version"}), kExitOk);
  EXPECT_EQ(run({"version", "--json"}), kExitOk);
  EXPECT_EQ(Json::parse(out())["client"], std::string(client::client_version()));
  EXPECT_TRUE(requests().empty());
}

// ----- curation: runs edit, projects, list filters -----

TEST_F(Cli, RunsEditSendsOnlyWhatTheOptionsName) {
  always(
      200,
      R"({"id":"r1","name":"a","tags":["sweep","lr"],"project":"p","notes":"n","state":"queued"})");
  ASSERT_EQ(run({"runs", "edit", "r1", "--tag", "sweep", "--tag", "lr", "--notes", "n", "--project",
                 "p"}),
            kExitOk);
  ASSERT_EQ(requests().size(), 1u);
  EXPECT_EQ(requests()[0].method, "PATCH");
  EXPECT_EQ(requests()[0].path, "/api/v1/runs/r1");
  EXPECT_EQ(Json::parse(requests()[0].body),
            Json::parse(R"({"tags":["sweep","lr"],"notes":"n","project":"p"})"));
  EXPECT_THAT(out(), HasSubstr("project: p"));
  EXPECT_THAT(out(), Not(HasSubstr("state")));

  ASSERT_EQ(run({"runs", "edit", "r1", "--clear-tags", "--no-project", "--name", "b"}), kExitOk);
  EXPECT_EQ(Json::parse(requests()[0].body),
            Json::parse(R"({"name":"b","tags":[],"project":null})"));

  in_.str("line one\nline two\n");
  ASSERT_EQ(run({"runs", "edit", "r1", "--notes-file", "-"}), kExitOk);
  EXPECT_EQ(Json::parse(requests()[0].body)["notes"], "line one\nline two\n");
}

TEST_F(Cli, RunsEditRefusesNothingAndContradictions) {
  always(200, "{}");
  EXPECT_EQ(run({"runs", "edit", "r1"}), kExitUsage);
  EXPECT_THAT(err(), HasSubstr("nothing to change"));
  EXPECT_EQ(run({"runs", "edit", "r1", "--tag", "a", "--clear-tags"}), kExitUsage);
  EXPECT_EQ(run({"runs", "edit", "r1", "--project", "a", "--no-project"}), kExitUsage);
  EXPECT_TRUE(requests().empty());
  always(
      403,
      R"({"type":"about:blank","title":"Forbidden","status":403,"detail":"only the run's owner or an admin may change it"})");
  EXPECT_NE(run({"runs", "edit", "r1", "--notes", "x"}), kExitOk);
  EXPECT_THAT(err(), HasSubstr("only the run's owner"));
}

TEST_F(Cli, RunsListCurationFilters) {
  always(200, R"({"items":[],"next_cursor":null})");
  ASSERT_EQ(run({"runs", "list", "--project", "llama sweep", "--dataset", "web", "--accelerator",
                 "v5p", "--since", "2026-11-27T00:00:00+01:00", "--until", "2026-11-28T00:00:00Z"}),
            kExitOk);
  EXPECT_EQ(requests()[0].path,
            "/api/v1/runs?project=llama%20sweep&dataset=web&accelerator=v5p&since=2026-11-27T00%"
            "3A00%3A00%2B01%3A00&until=2026-11-28T00%3A00%3A00Z");
}

TEST_F(Cli, ProjectsCreateListEditDelete) {
  always(201, R"({"id":"prj_1","name":"sweep","description":"d","runs":0})");
  ASSERT_EQ(run({"projects", "create", "sweep", "--description", "d"}), kExitOk);
  EXPECT_EQ(requests()[0].method, "POST");
  EXPECT_EQ(requests()[0].path, "/api/v1/projects");
  EXPECT_EQ(Json::parse(requests()[0].body), Json::parse(R"({"name":"sweep","description":"d"})"));

  always(200, R"({"items":[{"name":"sweep","runs":3,"created_by_name":"ana","description":"d"}],
    "next_cursor":null})");
  ASSERT_EQ(run({"projects", "list"}), kExitOk);
  EXPECT_EQ(out(),
            "NAME    RUNS   CREATED BY   DESCRIPTION\n"
            "sweep      3   ana          d\n");

  always(200, R"({"name":"sweep-2"})");
  ASSERT_EQ(run({"projects", "edit", "sweep", "--name", "sweep-2"}), kExitOk);
  EXPECT_EQ(requests()[0].method, "PATCH");
  EXPECT_EQ(requests()[0].path, "/api/v1/projects/sweep");
  EXPECT_EQ(run({"projects", "edit", "sweep"}), kExitUsage);

  always(204, "");
  ASSERT_EQ(run({"projects", "delete", "a/b"}), kExitOk);
  EXPECT_EQ(requests()[0].method, "DELETE");
  EXPECT_EQ(requests()[0].path, "/api/v1/projects/a%2Fb");
  EXPECT_EQ(out(), "deleted project a/b\n");
}

}  // namespace
}  // namespace podium::cli
