// podium-worker's flags (engine/worker/options.h): values, defaults from the environment and
// the messages of every kind of mistake.

#include "engine/worker/options.h"

#include <filesystem>
#include <map>

#include <gtest/gtest.h>

namespace podium::worker {
namespace {

const std::vector<std::string> kRequired{
    "--server", "http://cp:8080", "--token", "t", "--cluster", "c1", "--slice", "0", "--host", "2"};

ParsedFlags parse(std::vector<std::string> args, std::map<std::string, std::string> env = {}) {
  return parse_flags(args, [env](const std::string& name) -> std::optional<std::string> {
    const auto it = env.find(name);
    return it == env.end() ? std::nullopt : std::optional<std::string>(it->second);
  });
}

std::vector<std::string> with(std::vector<std::string> extra) {
  std::vector<std::string> args = kRequired;
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

std::string error_of(std::vector<std::string> args) {
  const auto r = parse(std::move(args));
  EXPECT_FALSE(r.flags);
  return r.error;
}

TEST(WorkerOptions, ValuesAndDefaults) {
  const auto r = parse(with({"--devices=4", "--log-format", "json", "--workdir", "/tmp/w",
                             "--address", "10.0.0.7", "--hostname", "h7"}));
  ASSERT_TRUE(r.flags) << r.error;
  const WorkerFlags& f = *r.flags;
  EXPECT_EQ(f.server, "http://cp:8080");
  EXPECT_EQ(f.token, "t");
  EXPECT_EQ(f.cluster, "c1");
  EXPECT_EQ(f.slice, 0);
  EXPECT_EQ(f.host, 2);
  EXPECT_EQ(f.devices, 4);
  EXPECT_EQ(f.log_format, "json");
  EXPECT_EQ(f.workdir, "/tmp/w");
  EXPECT_EQ(f.address, "10.0.0.7");
  EXPECT_EQ(f.hostname, "h7");
  EXPECT_EQ(f.spool_max_bytes, 268435456U);
  EXPECT_EQ(f.python, "python3");
  EXPECT_EQ(f.metadata_url, "http://metadata.google.internal/computeMetadata/v1/instance");
  EXPECT_FALSE(f.help);
  // The default work directory is named after the host's place, made absolute.
  const auto d = parse(kRequired);
  ASSERT_TRUE(d.flags) << d.error;
  EXPECT_EQ(std::filesystem::path(d.flags->workdir).filename(), "podium-worker-c1-0-2");
  EXPECT_TRUE(std::filesystem::path(d.flags->workdir).is_absolute());
}

TEST(WorkerOptions, TheEnvironmentFillsWhatTheFlagsLeaveOut) {
  const std::map<std::string, std::string> env{{"PODIUM_SERVER", "http://env:1"},
                                               {"PODIUM_TOKEN", "envtok"},
                                               {"PODIUM_RUN_AS", "nobody"},
                                               {"PODIUM_WORKER_PYTHON", "/opt/py"},
                                               {"PODIUM_METADATA_URL", "none"}};
  const auto r = parse({"--cluster", "c", "--slice", "1", "--host", "0"}, env);
  ASSERT_TRUE(r.flags) << r.error;
  EXPECT_EQ(r.flags->server, "http://env:1");
  EXPECT_EQ(r.flags->token, "envtok");
  EXPECT_EQ(r.flags->run_as, "nobody");
  EXPECT_EQ(r.flags->python, "/opt/py");
  EXPECT_EQ(r.flags->metadata_url, "none");
  // A flag wins over the environment.
  const auto f = parse({"--server", "http://flag:2", "--token=ft", "--cluster", "c", "--slice", "1",
                        "--host", "0", "--python", "none", "--run-as", "root"},
                       env);
  ASSERT_TRUE(f.flags) << f.error;
  EXPECT_EQ(f.flags->server, "http://flag:2");
  EXPECT_EQ(f.flags->token, "ft");
  EXPECT_EQ(f.flags->python, "none");
  EXPECT_EQ(f.flags->run_as, "root");
}

TEST(WorkerOptions, ValuesMayLookLikeFlagsOrBeEmpty) {
  const auto r = parse(with({"--hostname", "--weird", "--address="}));
  ASSERT_TRUE(r.flags) << r.error;
  EXPECT_EQ(r.flags->hostname, "--weird");
  // Empty: the default applies.
  EXPECT_FALSE(r.flags->address.empty());
}

TEST(WorkerOptions, Help) {
  for (const std::string h : {"--help", "-h"}) {
    const auto r = parse({h});
    ASSERT_TRUE(r.flags) << r.error;
    EXPECT_TRUE(r.flags->help);
  }
  EXPECT_NE(usage().find("--spool-max-bytes N"), std::string::npos);
}

TEST(WorkerOptions, VersionNeedsNoOtherFlag) {
  const auto r = parse({"--version"});
  ASSERT_TRUE(r.flags) << r.error;
  EXPECT_TRUE(r.flags->version);
  EXPECT_FALSE(r.flags->help);
  EXPECT_FALSE(parse(with({})).flags->version);
  EXPECT_NE(usage().find("podium-worker --version"), std::string::npos);
}

TEST(WorkerOptions, Mistakes) {
  EXPECT_EQ(error_of(with({"--bogus", "1"})), "unknown flag: --bogus");
  EXPECT_EQ(error_of(with({"--bogus=1"})), "unknown flag: --bogus");
  EXPECT_EQ(error_of(with({"stray"})), "unexpected argument: stray");
  EXPECT_EQ(error_of(with({"-x"})), "unexpected argument: -x");
  EXPECT_EQ(error_of(with({"--devices"})), "--devices needs a value");
  EXPECT_EQ(error_of(with({"--slice", "x"})), "--slice must be a number >= 0");
  EXPECT_EQ(error_of(with({"--host", "-1"})), "--host must be a number >= 0");
  EXPECT_EQ(error_of(with({"--devices", "0"})), "--devices must be a number >= 1");
  EXPECT_EQ(error_of(with({"--spool-max-bytes", "100"})),
            "--spool-max-bytes must be a number >= 65536");
  EXPECT_EQ(error_of(with({"--log-format", "xml"})), "--log-format must be text or json");
  EXPECT_EQ(error_of(with({"--metadata-url="})), "--metadata-url must be a URL or none");
  EXPECT_EQ(error_of(with({"--run-as", ""})), "--run-as needs an account name");
  EXPECT_EQ(error_of(with({"--python="})), "--python needs an interpreter (or none)");
  EXPECT_EQ(error_of({"--token", "t", "--cluster", "c", "--slice", "0", "--host", "0"}),
            "--server (or PODIUM_SERVER) is required");
  EXPECT_EQ(error_of({"--server", "s", "--cluster", "c", "--slice", "0", "--host", "0"}),
            "--token (or PODIUM_TOKEN) is required");
  EXPECT_EQ(error_of({"--server", "s", "--token", "t", "--slice", "0", "--host", "0"}),
            "--cluster is required");
  EXPECT_EQ(error_of({"--server", "s", "--token", "t", "--cluster", "c", "--host", "0"}),
            "--slice is required");
  EXPECT_EQ(error_of({"--server", "s", "--token", "t", "--cluster", "c", "--slice", "0"}),
            "--host is required");
}

ParsedAttach attach(std::vector<std::string> args) {
  return parse_attach_flags(args, [](const std::string& name) -> std::optional<std::string> {
    if (name == "PODIUM_SERVER") return "http://env:1";
    return std::nullopt;
  });
}

TEST(WorkerAttachOptions, FlagsThenTheCommand) {
  const auto r = attach({"--workdir", "/w", "--log-format=json", "--", "python3", "--server", "x"});
  ASSERT_TRUE(r.flags) << r.error;
  EXPECT_EQ(r.flags->server, "http://env:1");
  EXPECT_EQ(r.flags->workdir, "/w");
  EXPECT_EQ(r.flags->log_format, "json");
  EXPECT_FALSE(r.flags->address.empty());
  EXPECT_EQ(r.flags->command, (std::vector<std::string>{"python3", "--server", "x"}));
  const auto d = attach({"--server", "http://flag:2", "--address=10.1.1.1"});
  ASSERT_TRUE(d.flags) << d.error;
  EXPECT_EQ(d.flags->server, "http://flag:2");
  EXPECT_EQ(d.flags->address, "10.1.1.1");
  EXPECT_EQ(d.flags->log_format, "text");
  EXPECT_TRUE(d.flags->command.empty());
  EXPECT_TRUE(attach({"-h"}).flags->help);
  // After "--", --help is the command's.
  EXPECT_FALSE(attach({"--", "--help"}).flags->help);
}

TEST(WorkerAttachOptions, Mistakes) {
  EXPECT_EQ(attach({"--slice", "1"}).error, "unknown argument '--slice'");
  EXPECT_EQ(attach({"stray"}).error, "unknown argument 'stray'");
  EXPECT_EQ(attach({"--workdir", "/w", "--server"}).error, "unknown argument '--server'");
}

}  // namespace
}  // namespace podium::worker
