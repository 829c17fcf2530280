#include "backend/sched/launch_spec.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace podium::sched {
namespace {

using nlohmann::json;

LaunchInput two_slices_of_two(json spec) {
  LaunchInput in;
  in.run_id = "run_1";
  in.run_name = "run_1";
  in.attempt_id = "att_1";
  in.attempt_number = 2;
  in.spec = std::move(spec);
  in.dataset_uri = "file:///data/text.txt";
  in.gang_slices = 2;
  in.requested_slices = 2;
  in.port = 9000;
  in.settings.python = "/usr/bin/python3";
  in.settings.reference_dir = "/opt/ref";
  in.settings.output_dir = "/var/out";
  in.members = {{0, 0, 0, "10.0.0.1", 4},
                {1, 0, 1, "10.0.0.2", 4},
                {2, 1, 0, "10.0.1.1", 4},
                {3, 1, 1, "10.0.1.2", 4}};
  return in;
}

bool has_arg(const std::vector<std::string>& cmd, const std::string& arg) {
  return std::find(cmd.begin(), cmd.end(), arg) != cmd.end();
}

TEST(LaunchSpec, EnvironmentIsTheUnionOfJaxTpuMegascaleGpuAndTorchConventions) {
  auto ranks = build_launch(
      two_slices_of_two({{"workload", "command"}, {"command", json::array({"/bin/true"})}}));
  ASSERT_EQ(ranks.size(), 4u);
  const auto& r2 = ranks[2].env;
  EXPECT_EQ(r2.at("JAX_COORDINATOR_ADDRESS"), "10.0.0.1:9000");
  EXPECT_EQ(r2.at("JAX_PROCESS_COUNT"), "4");
  EXPECT_EQ(r2.at("JAX_PROCESS_ID"), "2");
  EXPECT_EQ(r2.at("TPU_WORKER_ID"), "0");
  EXPECT_EQ(r2.at("TPU_WORKER_HOSTNAMES"), "10.0.1.1,10.0.1.2");  // its own slice's hosts
  EXPECT_EQ(r2.at("MEGASCALE_COORDINATOR_ADDRESS"), "10.0.0.1:9001");
  EXPECT_EQ(r2.at("MEGASCALE_NUM_SLICES"), "2");
  EXPECT_EQ(r2.at("MEGASCALE_SLICE_ID"), "1");
  EXPECT_EQ(r2.at("MEGASCALE_PORT"), "9001");
  EXPECT_EQ(r2.at("MASTER_ADDR"), "10.0.0.1");
  EXPECT_EQ(r2.at("MASTER_PORT"), "9000");
  EXPECT_EQ(r2.at("RANK"), "2");
  EXPECT_EQ(r2.at("WORLD_SIZE"), "4");
  EXPECT_EQ(r2.at("LOCAL_RANK"), "0");
  EXPECT_EQ(r2.at("NODE_RANK"), "2");
  EXPECT_EQ(r2.at("NNODES"), "4");
  EXPECT_EQ(r2.at("GPUS_PER_NODE"), "4");
  EXPECT_EQ(r2.at("PODIUM_ATTEMPT_NUMBER"), "2");
  // A command workload has no checkpoint layout to watch.
  EXPECT_FALSE(ranks[0].checkpoint_dir.has_value());
}

TEST(LaunchSpec, ReferenceWorkloadUsesMaxTextCommandFormAndTheSameRunNameEveryAttempt) {
  auto ranks = build_launch(two_slices_of_two({{"workload", "reference"},
                                               {"model", "reference-tiny"},
                                               {"steps", 40},
                                               {"per_device_batch_size", 2.0},
                                               {"max_target_length", 64},
                                               {"checkpoint_period", 10},
                                               {"config", {{"learning_rate", 0.001}}}}));
  const auto& cmd = ranks[1].command;
  ASSERT_GE(cmd.size(), 4u);
  EXPECT_EQ(cmd[0], "/usr/bin/python3");
  EXPECT_EQ(cmd[2], "/opt/ref/train.py");
  EXPECT_EQ(cmd[3], "/opt/ref/base.yml");
  EXPECT_TRUE(has_arg(cmd, "run_name=run_1"));
  EXPECT_TRUE(has_arg(cmd, "base_output_directory=/var/out"));
  EXPECT_TRUE(has_arg(cmd, "dataset_path=/data/text.txt"));  // file:// stripped
  EXPECT_TRUE(has_arg(cmd, "per_device_batch_size=2"));      // an integer, as the trainer needs
  EXPECT_TRUE(has_arg(cmd, "checkpoint_period=10"));
  EXPECT_TRUE(has_arg(cmd, "learning_rate=0.001"));
  // The JAX reference workload builds MaxText's mesh: it takes the slices and parallelism too.
  EXPECT_TRUE(has_arg(cmd, "num_slices=2"));
  ASSERT_TRUE(ranks[0].checkpoint_dir.has_value());
  EXPECT_EQ(*ranks[0].checkpoint_dir, "/var/out/run_1/checkpoints");
  EXPECT_FALSE(ranks[1].checkpoint_dir.has_value());  // rank 0 only
}

TEST(LaunchSpec, MaxTextOnFewerSlicesLetsDcnDataParallelismAbsorbTheDifference) {
  auto in = two_slices_of_two({{"workload", "maxtext"},
                               {"model", "llama2-7b"},
                               {"steps", 100},
                               {"parallelism", {{"ici_fsdp", 4}, {"dcn_data", 2}}},
                               {"config", {{"base_output_directory", "gs://bucket/out"}}}});
  in.members.resize(2);
  in.gang_slices = 1;
  auto ranks = build_launch(in);
  const auto& cmd = ranks[0].command;
  EXPECT_TRUE(has_arg(cmd, "ici_fsdp_parallelism=4"));
  EXPECT_TRUE(has_arg(cmd, "num_slices=1"));
  // The later key wins in MaxText: -1 fills in from num_slices.
  auto last_dcn = std::find(cmd.rbegin(), cmd.rend(), "dcn_data_parallelism=-1");
  EXPECT_NE(last_dcn, cmd.rend());
  EXPECT_TRUE(has_arg(cmd, "base_output_directory=gs://bucket/out"));
  EXPECT_FALSE(ranks[0].checkpoint_dir.has_value());  // not a local path: nothing to watch
  EXPECT_EQ(ranks[1].env.at("MEGASCALE_NUM_SLICES"), "1");
}

TEST(LaunchSpec, ShellCommandsAndUnlaunchableSpecs) {
  auto ranks = build_launch(two_slices_of_two({{"workload", "command"}, {"command", "echo hi"}}));
  EXPECT_EQ(ranks[0].command, (std::vector<std::string>{"/bin/sh", "-c", "echo hi"}));
  EXPECT_THROW(build_launch(two_slices_of_two({{"workload", "command"}, {"command", nullptr}})),
               std::invalid_argument);
  auto no_ref = two_slices_of_two({{"workload", "reference"}});
  no_ref.settings.reference_dir.clear();
  EXPECT_THROW(build_launch(no_ref), std::invalid_argument);
  auto empty = two_slices_of_two({{"workload", "reference"}});
  empty.members.clear();
  EXPECT_THROW(build_launch(empty), std::invalid_argument);
}

TEST(LaunchSpec, NumbersAreFormattedAsTheTrainersParseThem) {
  EXPECT_EQ(format_number(12.0), "12");
  EXPECT_EQ(format_number(0.5), "0.5");
  EXPECT_EQ(format_number(-1.0), "-1");
  EXPECT_EQ(format_number(3e-4), "0.00029999999999999997");  // exact round trip
}

TEST(LaunchSpec, GpuNodesGetWhatMaxTextsGpuInitialisationReads) {
  // Two A3 Mega nodes (8 GPUs each): the agent's own device count (4 here) does not decide.
  LaunchInput in = two_slices_of_two({{"workload", "maxtext"},
                                      {"model", "llama3-8b"},
                                      {"steps", 10},
                                      {"parallelism", {{"ici_fsdp", 8}}}});
  in.members.resize(2);
  in.gang_slices = in.requested_slices = 1;
  in.accelerator_kind = "gpu";
  in.devices_per_host = 8;
  auto ranks = build_launch(in);
  ASSERT_EQ(ranks.size(), 2u);
  const auto& env = ranks[1].env;
  EXPECT_EQ(env.at("JAX_COORDINATOR_IP"), "10.0.0.1");
  EXPECT_EQ(env.at("JAX_COORDINATOR_PORT"), "9000");
  EXPECT_EQ(env.at("NNODES"), "2");
  EXPECT_EQ(env.at("NODE_RANK"), "1");
  EXPECT_EQ(env.at("GPUS_PER_NODE"), "8");
  const auto& cmd = ranks[1].command;
  EXPECT_TRUE(has_arg(cmd, "hardware=gpu"));
  EXPECT_TRUE(has_arg(cmd, "dcn_data_parallelism=2"));  // one replica group per node
  EXPECT_FALSE(has_arg(cmd, "num_slices=1"));           // slices are a TPU notion
  // The user's own DCN data parallelism wins over the default.
  in.spec["parallelism"]["dcn_data"] = 1;
  auto mine = build_launch(in)[0].command;
  EXPECT_TRUE(has_arg(mine, "dcn_data_parallelism=1"));
  EXPECT_FALSE(has_arg(mine, "dcn_data_parallelism=2"));
}

TEST(LaunchSpec, TpuMultisliceKeepsSlicesAndNoGpuArguments) {
  LaunchInput in =
      two_slices_of_two({{"workload", "maxtext"}, {"model", "llama3-8b"}, {"steps", 10}});
  in.accelerator_kind = "tpu";
  in.devices_per_host = 4;
  auto ranks = build_launch(in);
  EXPECT_TRUE(has_arg(ranks[0].command, "num_slices=2"));
  EXPECT_FALSE(has_arg(ranks[0].command, "hardware=gpu"));
  EXPECT_EQ(ranks[3].env.at("MEGASCALE_SLICE_ID"), "1");
  EXPECT_EQ(ranks[3].env.at("TPU_WORKER_ID"), "1");
}

TEST(LaunchSpec, EntrypointConfigFileWorkdirAndEnvAreTheRunsOwn) {
  LaunchInput in =
      two_slices_of_two({{"workload", "maxtext"},
                         {"model", "almodel-8b"},
                         {"steps", 10},
                         {"entrypoint", "maxtext.train"},
                         {"config_file", "configs/almodel.yml"},
                         {"workdir", "/home/team/maxtext"},
                         {"env",
                          {{"LIBTPU_INIT_ARGS", "--xla_tpu_enable_latency_hiding_scheduler=true"},
                           {"PYTHONUNBUFFERED", "0"},
                           {"JAX_PROCESS_ID", "7"}}}});
  auto ranks = build_launch(in);
  const auto& cmd = ranks[2].command;
  ASSERT_GE(cmd.size(), 5u);
  EXPECT_EQ(
      std::vector<std::string>(cmd.begin(), cmd.begin() + 5),
      (std::vector<std::string>{"python3", "-u", "-m", "maxtext.train", "configs/almodel.yml"}));
  EXPECT_EQ(ranks[2].workdir, "/home/team/maxtext");
  const auto& env = ranks[2].env;
  EXPECT_EQ(env.at("LIBTPU_INIT_ARGS"), "--xla_tpu_enable_latency_hiding_scheduler=true");
  EXPECT_EQ(env.at("PYTHONUNBUFFERED"), "0");  // Podium's default, overridden
  EXPECT_EQ(env.at("JAX_PROCESS_ID"), "2");    // gang-forming: Podium's, whatever env says
  // An argv entrypoint is used as given.
  in.spec["entrypoint"] = json::array({"/opt/venv/bin/python", "-m", "MaxText.train"});
  auto argv = build_launch(in)[0].command;
  EXPECT_EQ(argv[0], "/opt/venv/bin/python");
  EXPECT_EQ(argv[3], "configs/almodel.yml");
}

TEST(LaunchSpec, MaxTextModuleFollowsTheHostsMaxText) {
  // Today's package: maxtext.trainers.pre_train.train, its packaged base.yml by default.
  auto in = two_slices_of_two({{"workload", "maxtext"}, {"model", "llama2-7b"}, {"steps", 10}});
  auto package = build_launch(in)[0].command;
  ASSERT_GE(package.size(), 5u);
  EXPECT_EQ((std::vector<std::string>(package.begin(), package.begin() + 4)),
            (std::vector<std::string>{"python3", "-u", "-m", "maxtext.trainers.pre_train.train"}));
  EXPECT_EQ(package[4], "run_name=run_1");  // no config file: the package's own base.yml
  // A run's own config file comes first, in either form.
  in.spec["config_file"] = "/cfg/my.yml";
  EXPECT_EQ(build_launch(in)[0].command[4], "/cfg/my.yml");
  in.spec.erase("config_file");
  // A legacy checkout: MaxText.train with its base.yml.
  in.maxtext_layout = core::MaxTextLayout::legacy;
  auto legacy = build_launch(in)[0].command;
  EXPECT_EQ((std::vector<std::string>(legacy.begin(), legacy.begin() + 5)),
            (std::vector<std::string>{"python3", "-u", "-m", "MaxText.train",
                                      "MaxText/configs/base.yml"}));
}

TEST(LaunchSpec, CompileCheckRewritesEitherMaxTextFormAndTargetsTheTpuSlice) {
  const std::vector<std::string> package = {"python3", "-u", "-m",
                                            "maxtext.trainers.pre_train.train", "steps=5"};
  EXPECT_EQ(compile_check_command(package, false, "tpu7x-64", 2),
            (std::vector<std::string>{
                "python3", "-u", "-m", "maxtext.trainers.pre_train.train_compile", "steps=5",
                "compile_topology=tpu7x-64", "compile_topology_num_slices=2"}));
  const std::vector<std::string> legacy = {"python3", "-u", "-m", "MaxText.train",
                                           "MaxText/configs/base.yml"};
  EXPECT_EQ(compile_check_command(legacy, false, "v5p-8", 1)[3], "MaxText.train_compile");
  // The reference workload: --compile-only, for a TPU slice when one is named.
  const std::vector<std::string> reference = {"/venv/bin/python", "-u", "/ref/train.py",
                                              "/ref/base.yml"};
  auto ref_tpu = compile_check_command(reference, true, "v5p-8", 1);
  EXPECT_TRUE(has_arg(ref_tpu, "--compile-only"));
  EXPECT_TRUE(has_arg(ref_tpu, "compile_topology=v5p-8"));
  auto ref_cpu = compile_check_command(reference, true, "", 1);
  EXPECT_EQ(ref_cpu.size(), reference.size() + 1);
  EXPECT_EQ(ref_cpu.back(), "--compile-only");
}

TEST(LaunchSpec, CpuHostsGiveEachProcessItsDevices) {
  auto in = two_slices_of_two({{"workload", "reference"}, {"model", "reference-tiny"}});
  in.accelerator_kind = "cpu";
  in.devices_per_host = 4;
  auto ranks = build_launch(in);
  EXPECT_EQ(ranks[0].env.at("XLA_FLAGS"), "--xla_force_host_platform_device_count=4");
  EXPECT_EQ(ranks[3].env.at("JAX_PLATFORMS"), "cpu");
  // The run's own XLA_FLAGS win, as every variable of its env does.
  in.spec["env"] = {{"XLA_FLAGS", "--xla_dump_to=/tmp/x"}};
  EXPECT_EQ(build_launch(in)[1].env.at("XLA_FLAGS"), "--xla_dump_to=/tmp/x");
  // Not on TPU hosts.
  in.accelerator_kind = "tpu";
  EXPECT_EQ(build_launch(in)[0].env.count("XLA_FLAGS"), 1u);  // the run's own only
  in.spec.erase("env");
  EXPECT_EQ(build_launch(in)[0].env.count("XLA_FLAGS"), 0u);
}

TEST(LaunchSpec, MaxTextOnCpuHostsGetsItsCpuInitialisationAndNoCompilationCache) {
  auto in = two_slices_of_two({{"workload", "maxtext"},
                               {"model", "llama2-7b"},
                               {"config_file", "/cfg/tiny.yml"},
                               {"config", {{"steps", 5}}}});
  in.accelerator_kind = "cpu";
  in.gang_slices = in.requested_slices = 1;
  auto ranks = build_launch(in);
  ASSERT_EQ(ranks.size(), 4u);
  const auto& cmd = ranks[0].command;
  EXPECT_TRUE(has_arg(cmd, "hardware=cpu"));
  EXPECT_TRUE(has_arg(cmd, "jax_cache_dir="));
  // Before the run's own config, so that the run can override them.
  const auto hardware = std::find(cmd.begin(), cmd.end(), "hardware=cpu");
  const auto steps = std::find(cmd.begin(), cmd.end(), "steps=5");
  ASSERT_NE(steps, cmd.end());
  EXPECT_LT(hardware, steps);
  // MaxText resolves JAX_COORDINATOR_ADDRESS as a bare host and adds port 1234 itself; its
  // process id is JOB_INDEX * PROCESSES_IN_JOB + JOB_COMPLETION_INDEX.
  for (const auto& r : ranks) {
    EXPECT_EQ(r.env.at("JAX_COORDINATOR_ADDRESS"), "10.0.0.1") << r.rank;
    EXPECT_EQ(r.env.at("JOB_INDEX"), "0");
    EXPECT_EQ(r.env.at("JOB_COMPLETION_INDEX"), std::to_string(r.rank));
    EXPECT_EQ(r.env.at("PROCESSES_IN_JOB"), "4");
    EXPECT_EQ(r.env.at("JAX_PROCESS_COUNT"), "4");
    EXPECT_EQ(r.env.at("JAX_PROCESS_ID"), std::to_string(r.rank));
  }
  // The run's env cannot move a rank: the Job variables are gang-forming.
  in.spec["env"] = {{"JOB_COMPLETION_INDEX", "3"}, {"PROCESSES_IN_JOB", "9"}};
  EXPECT_EQ(build_launch(in)[1].env.at("JOB_COMPLETION_INDEX"), "1");
  EXPECT_EQ(build_launch(in)[1].env.at("PROCESSES_IN_JOB"), "4");
  // The reference workload reads Podium's host:port; MaxText on TPU hosts gets neither.
  auto reference = in;
  reference.spec = {{"workload", "reference"}, {"model", "reference-tiny"}};
  auto ref = build_launch(reference);
  EXPECT_EQ(ref[0].env.at("JAX_COORDINATOR_ADDRESS"), "10.0.0.1:9000");
  EXPECT_EQ(ref[0].env.count("JOB_INDEX"), 0u);
  EXPECT_FALSE(has_arg(ref[0].command, "hardware=cpu"));
  in.accelerator_kind = "tpu";
  auto tpu = build_launch(in);
  EXPECT_EQ(tpu[0].env.at("JAX_COORDINATOR_ADDRESS"), "10.0.0.1:9000");
  EXPECT_EQ(tpu[0].env.count("PROCESSES_IN_JOB"), 0u);
  EXPECT_FALSE(has_arg(tpu[0].command, "hardware=cpu"));
  EXPECT_FALSE(has_arg(tpu[0].command, "jax_cache_dir="));
}

TEST(LaunchSpec, ModelNameOnlyForModelsMaxTextKnows) {
  // almodel-8b is defined by the run's config file: model_name=almodel-8b would make MaxText
  // look for configs/models/almodel-8b.yml and stop.
  auto own = build_launch(two_slices_of_two({{"workload", "maxtext"},
                                             {"model", "almodel-8b"},
                                             {"steps", 10},
                                             {"config_file", "configs/almodel.yml"}}))[0]
                 .command;
  for (const auto& a : own) EXPECT_NE(a.rfind("model_name=", 0), 0u) << a;
  auto llama = build_launch(two_slices_of_two(
      {{"workload", "maxtext"}, {"model", "llama2-7b"}, {"steps", 10}}))[0]
                   .command;
  EXPECT_TRUE(has_arg(llama, "model_name=llama2-7b"));
  // A model a user added (POST /models; not in the compiled catalog) is defined by its config
  // file too; without one the planner refuses it (model_needs_config) unless skipped.
  auto added = build_launch(two_slices_of_two({{"workload", "maxtext"},
                                               {"model", "team-moe"},
                                               {"steps", 10},
                                               {"config_file", "configs/team.yml"}}))[0]
                   .command;
  for (const auto& a : added) EXPECT_NE(a.rfind("model_name=", 0), 0u) << a;
}

}  // namespace
}  // namespace podium::sched
