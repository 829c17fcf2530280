#include "engine/core/logs/maxtext_log.h"

#include <cmath>
#include <random>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace podium::core {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

const StepMetrics& step_of(const ParsedLine& p) {
  const StepMetrics* m = p.step();
  EXPECT_NE(m, nullptr);
  static const StepMetrics kEmpty;
  return m != nullptr ? *m : kEmpty;
}

TEST(MaxtextLogTest, ParsesCanonicalStepLine) {
  auto p = parse_maxtext_line(
      "completed step: 99, seconds: 0.693, TFLOP/s/device: 83.171, Tokens/s/device: 11819.175, "
      "total_weights: 262144, loss: 0.334");
  ASSERT_EQ(p.kind, LogLineKind::step);
  const StepMetrics& m = step_of(p);
  EXPECT_EQ(m.step, 99);
  EXPECT_DOUBLE_EQ(*m.seconds, 0.693);
  EXPECT_DOUBLE_EQ(*m.tflops_per_device, 83.171);
  EXPECT_DOUBLE_EQ(*m.tokens_per_second_per_device, 11819.175);
  EXPECT_DOUBLE_EQ(*m.total_weights, 262144);
  EXPECT_DOUBLE_EQ(*m.loss, 0.334);
  EXPECT_FALSE(m.live_slice_count.has_value());
  EXPECT_TRUE(m.extra.empty());
  EXPECT_FALSE(m.rampup);
  EXPECT_FALSE(m.profiler_boundary);
  EXPECT_EQ(p.repeated, 0);
}

TEST(MaxtextLogTest, KeepsNewerFieldsInExtraAndReadsLiveSliceCount) {
  auto p = parse_maxtext_line(
      "completed step: 1200, seconds: 2.101, TFLOP/s/device: 412.5, Tokens/s/device: 3898.1, "
      "live slice count: 3, total_weights: 1048576, loss: 2.871, lm_loss: 2.85, perplexity: 17.3, "
      "moe_lb_loss: 0.0123, lr: 3.000e-04, grad_norm: 0.91, Tokens/s/chip: 7796.2");
  ASSERT_EQ(p.kind, LogLineKind::step);
  const StepMetrics& m = step_of(p);
  EXPECT_EQ(m.step, 1200);
  EXPECT_EQ(m.live_slice_count, 3);
  EXPECT_DOUBLE_EQ(*m.loss, 2.871);
  EXPECT_THAT(m.extra, ElementsAre(Pair("grad_norm", 0.91), Pair("lm_loss", 2.85),
                                   Pair("lr", 3.0e-4), Pair("moe_lb_loss", 0.0123),
                                   Pair("perplexity", 17.3), Pair("tokens_s_chip", 7796.2)));
}

TEST(MaxtextLogTest, MissingFieldsAreAbsentAndOlderKeysMap) {
  // 2024 MaxText: no Tokens/s/device, no total_weights.
  auto old =
      parse_maxtext_line("completed step: 1, seconds: 176.734, TFLOP/s/device: 5.846, loss: 2.008");
  ASSERT_EQ(old.kind, LogLineKind::step);
  EXPECT_FALSE(step_of(old).tokens_per_second_per_device.has_value());
  EXPECT_FALSE(step_of(old).total_weights.has_value());
  // Older still: "TFLOP/s:".
  auto older =
      parse_maxtext_line("completed step: 3, seconds: 3.585, TFLOP/s: 288.187, loss: 1.977");
  EXPECT_DOUBLE_EQ(*step_of(older).tflops_per_device, 288.187);
  // Double spaces as hand-edited logs have them.
  auto spaced = parse_maxtext_line(
      "completed step: 1, seconds:  0.323, TFLOP/s/device: 8671.953, loss: 13.424");
  EXPECT_DOUBLE_EQ(*step_of(spaced).seconds, 0.323);
  // A line cut off mid-way keeps what it has.
  auto cut = parse_maxtext_line("completed step: 7, seconds: 0.51, TFLOP/s/dev");
  ASSERT_EQ(cut.kind, LogLineKind::step);
  EXPECT_DOUBLE_EQ(*step_of(cut).seconds, 0.51);
  EXPECT_FALSE(step_of(cut).tflops_per_device.has_value());
  auto bare = parse_maxtext_line("completed step: 8");
  ASSERT_EQ(bare.kind, LogLineKind::step);
  EXPECT_EQ(step_of(bare).step, 8);
}

TEST(MaxtextLogTest, NanLossIsKeptAndSerialisedAsNull) {
  auto p = parse_maxtext_line(
      "completed step: 42, seconds: 0.7, TFLOP/s/device: 80.0, Tokens/s/device: 11000.0, "
      "total_weights: 262144, loss: nan");
  ASSERT_EQ(p.kind, LogLineKind::step);
  ASSERT_TRUE(step_of(p).loss.has_value());
  EXPECT_TRUE(std::isnan(*step_of(p).loss));
  EXPECT_TRUE(to_json(step_of(p))["loss"].is_null());
}

TEST(MaxtextLogTest, StripsRayPrefixColoursAndRepeatedSuffix) {
  auto p = parse_maxtext_line(
      "\x1b[36m(RayTrainWorker pid=130520, ip=10.60.7.7)\x1b[0m completed step: 99, seconds: "
      "0.693, TFLOP/s/device: 83.171, Tokens/s/device: 11819.175, total_weights: 262144, loss: "
      "0.334 [repeated 6x across cluster]");
  ASSERT_EQ(p.kind, LogLineKind::step);
  EXPECT_EQ(p.repeated, 6);
  EXPECT_DOUBLE_EQ(*step_of(p).loss, 0.334);
}

TEST(MaxtextLogTest, StripsAbslPythonAndKubectlPrefixes) {
  const std::string body = "completed step: 5, seconds: 1.5, TFLOP/s/device: 10.0, loss: 3.0";
  for (const std::string& line : {
           "I1121 16:46:01.123456 140 train.py:123] " + body,
           "I0205 08:54:24.569114 130017276577600 metric_logger.py:190] " + body,
           "2026-11-21 16:46:01,123 - INFO - " + body,
           "2026-11-21 16:46:01,123 - maxtext - INFO - " + body,
           "[2026-11-21 16:46:01,123] [INFO] " + body,
           "INFO:absl:" + body,
           "2026-11-21T16:46:01.123456789Z " + body,
           "[pod/jax-tpu-job-0-0-x7k2p/jax-tpu] 2026-11-21T16:46:01.123456789Z I1121 "
           "16:46:01.123456 140 train.py:123] " +
               body,
           "  \t" + body + "\r\n",
       }) {
    auto p = parse_maxtext_line(line);
    ASSERT_EQ(p.kind, LogLineKind::step) << line;
    EXPECT_EQ(step_of(p).step, 5) << line;
    EXPECT_DOUBLE_EQ(*step_of(p).loss, 3.0) << line;
  }
  EXPECT_EQ(clean_log_line("I1121 16:46:01.123456 140 max_utils.py:697]         Using (GB) 1 / 2 "
                           "(50%) on TPU_0")
                .message,
            "Using (GB) 1 / 2 (50%) on TPU_0");
}

TEST(MaxtextLogTest, RampupAndProfilerVariants) {
  // metric_logger joins its parts with ", ", so the rampup tag is followed by a comma.
  auto rampup = parse_maxtext_line(
      "[Rampup Batch Size Phase], completed step: 5, seconds: 1.234, total_weights: 65536, "
      "loss: 9.876");
  ASSERT_EQ(rampup.kind, LogLineKind::rampup_step);
  EXPECT_TRUE(step_of(rampup).rampup);
  EXPECT_DOUBLE_EQ(*step_of(rampup).seconds, 1.234);
  EXPECT_FALSE(step_of(rampup).tflops_per_device.has_value());
  // The brief's spelling without the comma.
  auto rampup2 =
      parse_maxtext_line("[Rampup Batch Size Phase] completed step: 6, seconds: 1.1, loss: 9.5");
  EXPECT_EQ(rampup2.kind, LogLineKind::rampup_step);

  auto profiler = parse_maxtext_line(
      "completed profiler activation/deactivation step: 10, total_weights: 262144, loss: 4.2");
  ASSERT_EQ(profiler.kind, LogLineKind::profiler);
  EXPECT_EQ(step_of(profiler).step, 10);
  EXPECT_TRUE(step_of(profiler).profiler_boundary);
  EXPECT_FALSE(step_of(profiler).seconds.has_value());

  auto both = parse_maxtext_line(
      "[Rampup Batch Size Phase], completed profiler activation/deactivation step: 3, "
      "total_weights: 1024, loss: 10.1");
  EXPECT_EQ(both.kind, LogLineKind::profiler);
  EXPECT_TRUE(step_of(both).rampup);
}

TEST(MaxtextLogTest, NumberOfParameters) {
  auto p = parse_maxtext_line("number parameters: 15.933 billion");
  ASSERT_EQ(p.kind, LogLineKind::num_params);
  EXPECT_DOUBLE_EQ(p.num_params()->billions, 15.933);
  auto prefixed = parse_maxtext_line(
      "I0317 09:59:40.972985 125344476638336 metric_logger.py:275] number parameters: 4.069 "
      "billion");
  EXPECT_DOUBLE_EQ(prefixed.num_params()->billions, 4.069);
  EXPECT_EQ(parse_maxtext_line("number parameters: many").kind, LogLineKind::other);
}

TEST(MaxtextLogTest, TotalTflopsInAllThreeForms) {
  auto one = parse_maxtext_line(
      "Per train step: Total TFLOPs: 764.67 split as 94.54% learnable weight flops and 5.46% "
      "attention flops");
  ASSERT_EQ(one.kind, LogLineKind::total_tflops);
  EXPECT_DOUBLE_EQ(*one.tflops()->tflops_per_device, 764.67);
  EXPECT_DOUBLE_EQ(*one.tflops()->learnable_weight_percent, 94.54);
  EXPECT_DOUBLE_EQ(*one.tflops()->attention_percent, 5.46);

  // Current MaxText prints three lines: header, total, split.
  EXPECT_EQ(parse_maxtext_line("Per train step:").kind, LogLineKind::other);
  auto total = parse_maxtext_line(" Total TFLOPs: 102.77 ");
  ASSERT_EQ(total.kind, LogLineKind::total_tflops);
  EXPECT_DOUBLE_EQ(*total.tflops()->tflops_per_device, 102.77);
  EXPECT_FALSE(total.tflops()->learnable_weight_percent.has_value());
  auto split =
      parse_maxtext_line(" split as 97.29% learnable weight flops and 2.71% attention flops");
  ASSERT_EQ(split.kind, LogLineKind::total_tflops);
  EXPECT_FALSE(split.tflops()->tflops_per_device.has_value());
  EXPECT_DOUBLE_EQ(*split.tflops()->attention_percent, 2.71);

  auto old = parse_maxtext_line(
      "Per train step, total TFLOPs will be 1033.20, split as 96.17% learnable weight flops and "
      "3.83% attention flops");
  EXPECT_DOUBLE_EQ(*old.tflops()->tflops_per_device, 1033.20);

  EXPECT_EQ(parse_maxtext_line("Per prefill step, total TFLOPs will be 17.73, split as 98.64% "
                               "learnable weight flops and 1.36% attention flops")
                .kind,
            LogLineKind::other);
  EXPECT_EQ(parse_maxtext_line("the work was split as 3 parts").kind, LogLineKind::other);
}

TEST(MaxtextLogTest, CompilerMemoryEstimate) {
  auto p = parse_maxtext_line(
      "I0317 09:59:40.970564 125344476638336 max_utils.py:741] Total memory size: 13.6 GB, Output "
      "size: 5.7 GB, Temp size: 7.9 GB, Argument size: 5.7 GB, Host temp size: 0.0 GB.");
  ASSERT_EQ(p.kind, LogLineKind::memory_estimate);
  EXPECT_DOUBLE_EQ(*p.memory_estimate()->total_gb, 13.6);
  EXPECT_THAT(p.memory_estimate()->components_gb,
              ElementsAre(Pair("argument", 5.7), Pair("host_temp", 0.0), Pair("output", 5.7),
                          Pair("temp", 7.9)));
  auto variant = parse_maxtext_line(
      "Total estimated memory size: 80.2 GB, Output size: 30.1 GB, Temp size: 20.0 GB, Argument "
      "size: 30.1 GB, Host temp size: 0.0 GB, Peak size: 81.0 GB. Alias size: 0.0 GB");
  ASSERT_EQ(variant.kind, LogLineKind::memory_estimate);
  EXPECT_DOUBLE_EQ(*variant.memory_estimate()->total_gb, 80.2);
  EXPECT_DOUBLE_EQ(variant.memory_estimate()->components_gb.at("peak"), 81.0);
  EXPECT_DOUBLE_EQ(variant.memory_estimate()->components_gb.at("alias"), 0.0);
}

TEST(MaxtextLogTest, MemstatsHeaderDeviceLinesAndRamstats) {
  auto header = parse_maxtext_line("Memstats: After params initialized:");
  ASSERT_EQ(header.kind, LogLineKind::memstats);
  EXPECT_EQ(header.memstats()->label, "After params initialized");
  EXPECT_FALSE(header.memstats()->used_gib.has_value());

  auto device =
      parse_maxtext_line("\tUsing (GB) 44.63 / 95.74 (46.615835%) on TPU_0(process=0,(0,0,0,0))");
  ASSERT_EQ(device.kind, LogLineKind::memstats);
  EXPECT_DOUBLE_EQ(*device.memstats()->used_gib, 44.63);
  EXPECT_DOUBLE_EQ(*device.memstats()->limit_gib, 95.74);
  EXPECT_NEAR(*device.memstats()->percent, 46.615835, 1e-9);
  EXPECT_EQ(device.memstats()->device, "TPU_0(process=0,(0,0,0,0))");

  auto gpu = parse_maxtext_line(
      "I0205 08:54:24.569114 130017276577600 max_utils.py:697]         Using (GB) 6.17 / 71.23 "
      "(8.662081%) on cuda:0");
  EXPECT_EQ(gpu.memstats()->device, "cuda:0");

  auto one_line = parse_maxtext_line(
      "Memstats: After params initialized: Using (GB) 44.63 / 95.74 (46.6%) on TPU_0(...)");
  ASSERT_EQ(one_line.kind, LogLineKind::memstats);
  EXPECT_EQ(one_line.memstats()->label, "After params initialized");
  EXPECT_DOUBLE_EQ(*one_line.memstats()->used_gib, 44.63);

  // Host RAM, not HBM.
  EXPECT_EQ(parse_maxtext_line("RAMstats: After params initialized:").kind, LogLineKind::other);
  EXPECT_EQ(parse_maxtext_line("\tUsing (GB) 120.5 / 400.0 (30.125%) -->  Available:279.5").kind,
            LogLineKind::other);
  EXPECT_EQ(parse_maxtext_line("\tMemstats unavailable, error: 'bytes_limit'").kind,
            LogLineKind::other);
}

TEST(MaxtextLogTest, ConfigParams) {
  auto p = parse_maxtext_line(
      "I1121 16:40:00.000000 140 pyconfig.py:900] Config param per_device_batch_size: 1");
  ASSERT_EQ(p.kind, LogLineKind::config_param);
  EXPECT_EQ(p.config_param()->key, "per_device_batch_size");
  EXPECT_EQ(p.config_param()->value, "1");
  auto list = parse_maxtext_line(
      "Config param logical_axis_rules: [['activation_batch', ['data', 'fsdp']], ['mlp', "
      "'tensor']]");
  EXPECT_EQ(list.config_param()->value,
            "[['activation_batch', ['data', 'fsdp']], ['mlp', 'tensor']]");
  auto empty = parse_maxtext_line("Config param dataset_path: ");
  ASSERT_EQ(empty.kind, LogLineKind::config_param);
  EXPECT_EQ(empty.config_param()->value, "");
  // Config values never count as failure signatures.
  auto benign = parse_maxtext_line("Config param note: StopIteration RESOURCE_EXHAUSTED");
  EXPECT_EQ(benign.kind, LogLineKind::config_param);
  EXPECT_EQ(parse_maxtext_line("Config param bad key: 1").kind, LogLineKind::other);
}

TEST(MaxtextLogTest, FailureSignatures) {
  struct Case {
    const char* line;
    FailureSignature expected;
  };
  const Case cases[] = {
      {"jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: XLA:TPU compile permanent "
       "error. Ran out of memory in memory space hbm. Used 20.5G of 15.48G hbm.",
       FailureSignature::hbm_oom},
      {"RESOURCE_EXHAUSTED: Out of memory while trying to allocate 1.21GiB.",
       FailureSignature::hbm_oom},
      {"Out of memory while trying to allocate 8589934592 bytes.", FailureSignature::hbm_oom},
      {"ValueError: Failed to find assignment for logical_axis_index 1 of size 16 with remaining "
       "assignable mesh [2, 4, 4, 0].",
       FailureSignature::mesh_unmappable},
      {"AssertionError: Number of devices per slice 64 does not match the product of the ICI "
       "parallelism 32",
       FailureSignature::mesh_product_mismatch},
      // JAX's own message (mesh_utils.create_device_mesh), as the reference workload fails.
      {"ValueError: Number of devices 4 must equal the product of mesh_shape (2, 4)",
       FailureSignature::mesh_product_mismatch},
      {"ValueError: Key weight_decay not in valid fields", FailureSignature::invalid_config_key},
      {"ValueError: Couldn't parse value from CLI or ENV 'abc' for key 'steps'",
       FailureSignature::invalid_config_value},
      {"    raise StopIteration", FailureSignature::data_exhausted},
      {"StopIteration", FailureSignature::data_exhausted},
      {"E1121 16:46:01.123456 140 metric_logger.py:270] Aborting training due to NaN loss.",
       FailureSignature::nan_loss},
      {"maxtext.exceptions.StopTraining: Job is preempted.", FailureSignature::preempted},
      {"RuntimeError: Unable to initialize backend 'tpu': ABORTED: The TPU is already in use by "
       "process with pid 23472. Not attempting to load libtpu.so in this process.",
       FailureSignature::tpu_busy},
      {"WARNING:jax._src.xla_bridge:An NVIDIA GPU may be present on this machine, but a "
       "CUDA-enabled jaxlib is not installed. Falling back to cpu.",
       FailureSignature::cpu_fallback},
  };
  for (const Case& c : cases) {
    auto p = parse_maxtext_line(c.line);
    ASSERT_EQ(p.kind, LogLineKind::failure_signature) << c.line;
    EXPECT_EQ(p.signature()->signature, c.expected) << c.line;
  }
  EXPECT_TRUE(is_warning_signature(FailureSignature::tpu_busy));
  EXPECT_FALSE(is_warning_signature(FailureSignature::hbm_oom));
  // gRPC quota errors share the status name but are not HBM.
  EXPECT_EQ(
      parse_maxtext_line("google.api_core.exceptions: 429 RESOURCE_EXHAUSTED: Quota exceeded").kind,
      LogLineKind::other);
  for (FailureSignature s : {FailureSignature::hbm_oom, FailureSignature::cpu_fallback}) {
    EXPECT_EQ(parse_failure_signature(to_string(s)), s);
  }
}

// The last line of a traceback that says the code or its environment is wrong; the same names
// inside a frame, in the middle of a sentence or as a prefix of another name are not.
TEST(MaxtextLogTest, PythonCodeErrorExceptionLines) {
  for (const char* line :
       {"ModuleNotFoundError: No module named 'podium_no_such_module'",
        "ImportError: cannot import name 'adamw' from 'optax' (/venv/optax/__init__.py)",
        "SyntaxError: invalid syntax", "IndentationError: unexpected indent",
        "TabError: inconsistent use of tabs and spaces in indentation",
        "TypeError: adamw() got an unexpected keyword argument 'weight_decay_mask'",
        "AttributeError: module 'jax' has no attribute 'tree_map'",
        "NameError: name 'maxtext' is not defined", "TypeError",
        // Behind a Ray worker prefix and with a timestamp: clean_log_line strips both.
        "(RayTrainWorker pid=12, ip=10.0.0.2) TypeError: unsupported operand type(s)",
        "2026-11-21T16:46:01.123456Z NameError: name 'x' is not defined"}) {
    auto p = parse_maxtext_line(line);
    ASSERT_EQ(p.kind, LogLineKind::failure_signature) << line;
    EXPECT_EQ(p.signature()->signature, FailureSignature::python_code_error) << line;
    EXPECT_FALSE(is_warning_signature(FailureSignature::python_code_error));
  }
  EXPECT_EQ(parse_maxtext_line("ModuleNotFoundError: No module named 'x'").signature()->excerpt,
            "ModuleNotFoundError: No module named 'x'");
  for (const char* line : {"    raise TypeError(\"expected an array\")",
                           "  File \"/app/train.py\", line 3, in <module>",
                           "ValueError: Key weight_decay not in valid fields",
                           "RuntimeError: TypeError was raised in a callback", "TypeErrorCount: 3",
                           "KeyError: 'steps'", "ImportErrors are rare"}) {
    auto p = parse_maxtext_line(line);
    EXPECT_FALSE(p.signature() != nullptr &&
                 p.signature()->signature == FailureSignature::python_code_error)
        << line;
  }
  EXPECT_EQ(parse_failure_signature("python_code_error"), FailureSignature::python_code_error);
  EXPECT_EQ(to_string(FailureSignature::python_code_error), "python_code_error");
}

// Issue 28.3: the worker's own line when a rank's code bundle cannot be had; a training
// program printing the same words is not it.
TEST(MaxtextLogTest, TheWorkersUnusableCodeBundleLine) {
  const std::string line =
      "podium-worker: cannot start the process: code bundle unusable: cannot fetch "
      "sha256:ab: HTTP 403";
  auto p = parse_maxtext_line(line);
  ASSERT_EQ(p.kind, LogLineKind::failure_signature) << line;
  EXPECT_EQ(p.signature()->signature, FailureSignature::code_bundle_unusable);
  EXPECT_EQ(p.signature()->excerpt, line);
  EXPECT_FALSE(is_warning_signature(FailureSignature::code_bundle_unusable));
  EXPECT_EQ(to_string(FailureSignature::code_bundle_unusable), "code_bundle_unusable");
  for (const char* other : {"print: code bundle unusable: nothing", "podium-worker: started",
                            "podium-worker: cannot start the process: no such file"}) {
    auto q = parse_maxtext_line(other);
    EXPECT_FALSE(q.signature() != nullptr &&
                 q.signature()->signature == FailureSignature::code_bundle_unusable)
        << other;
  }
}

TEST(MaxtextLogTest, OtherLines) {
  for (const char* line : {
           "",
           "eval metrics after step: 99, loss=2.345, total_weights=262144",
           "saved a checkpoint at step 100",
           "To see full metrics 'tensorboard --logdir=gs://bucket/run/tensorboard/'",
           "completed step: abc, seconds: 1.0",
           "completed step: -1, seconds: 1.0",
           "completed step: 5x, seconds: 1.0",
           "uncompleted step: 5, seconds: 1.0",
           "(not ray) completed",
       }) {
    EXPECT_EQ(parse_maxtext_line(line).kind, LogLineKind::other) << line;
  }
}

TEST(MaxtextLogTest, SurvivesArbitraryBytes) {
  std::mt19937 rng(12345);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_int_distribution<int> length(0, 400);
  const std::string seeds[] = {
      "completed step: 12, seconds: 0.5, TFLOP/s/device: 1, loss: 2",
      "Memstats: x: Using (GB) 1 / 2 (3%) on TPU_0",
      "(RayTrainWorker pid=1, ip=1) [repeated 2x across cluster]",
      "I1121 16:46:01.123456 140 a.py:1] Total memory size: 1 GB, Output size: 2 GB.",
      "\x1b[31m\x1b[",
  };
  for (int i = 0; i < 20000; ++i) {
    std::string line;
    if (i % 3 == 0) {
      // Mutate a real line so the parsers get past their first checks.
      line = seeds[static_cast<std::size_t>(i) % std::size(seeds)];
      const int edits = 1 + i % 5;
      for (int e = 0; e < edits && !line.empty(); ++e) {
        line[static_cast<std::size_t>(byte(rng)) % line.size()] = static_cast<char>(byte(rng));
      }
      line = line.substr(0, static_cast<std::size_t>(length(rng)) % (line.size() + 1));
    } else {
      const int n = length(rng);
      for (int k = 0; k < n; ++k) line.push_back(static_cast<char>(byte(rng)));
    }
    ParsedLine p = parse_maxtext_line(line);
    // Every string that comes out is valid UTF-8: a strict dump must not throw.
    EXPECT_NO_THROW((void)to_json(p).dump()) << i;
  }
  // A huge line is parsed on its prefix only.
  std::string huge = "completed step: 3, seconds: 1.0, " + std::string(10 * 1024 * 1024, ',');
  EXPECT_EQ(parse_maxtext_line(huge).kind, LogLineKind::step);
  std::string nul("completed step: 4, seconds: 2.0\0loss: 1", 39);
  EXPECT_EQ(parse_maxtext_line(nul).kind, LogLineKind::step);
}

constexpr const char* kRealisticLog =
    R"(I1121 16:40:00.000000 140 pyconfig.py:900] Config param model_name: llama2-7b
I1121 16:40:00.000001 140 pyconfig.py:900] Config param per_device_batch_size: 1
I1121 16:40:00.000002 140 pyconfig.py:900] Config param steps: 10
System Information: Jax Version: 0.4.38
I1121 16:41:00.000000 140 max_utils.py:691]
Memstats: After params initialized:
I1121 16:41:00.000001 140 max_utils.py:697] 	Using (GB) 44.63 / 95.74 (46.615835%) on TPU_0(process=0,(0,0,0,0))
I1121 16:41:00.000002 140 max_utils.py:697] 	Using (GB) 44.70 / 95.74 (46.689000%) on TPU_1(process=0,(1,0,0,0))
RAMstats: After params initialized:
	Using (GB) 120.50 / 400.00 (30.125000%) -->  Available:279.50
I1121 16:41:05.000000 140 max_utils.py:741] Total memory size: 60.1 GB, Output size: 30.0 GB, Temp size: 20.1 GB, Argument size: 30.0 GB, Host temp size: 0.0 GB.
Per train step:
 Total TFLOPs: 764.67 
 split as 94.54% learnable weight flops and 5.46% attention flops
I1121 16:41:05.100000 140 metric_logger.py:275] number parameters: 15.933 billion
I1121 16:46:01.000000 140 metric_logger.py:190] completed step: 0, seconds: 301.2, TFLOP/s/device: 2.5, Tokens/s/device: 13.6, total_weights: 262144, loss: 10.9
I1121 16:46:02.000000 140 metric_logger.py:190] completed step: 1, seconds: 0.05, TFLOP/s/device: 15293.4, Tokens/s/device: 81920.0, total_weights: 262144, loss: 10.7
I1121 16:46:13.000000 140 metric_logger.py:190] completed step: 2, seconds: 11.3, TFLOP/s/device: 67.6, Tokens/s/device: 362.5, total_weights: 262144, loss: 10.2
Memstats: After first optimizer step:
	Using (GB) 81.20 / 95.74 (84.8%) on TPU_0(process=0,(0,0,0,0))
I1121 16:46:19.000000 140 metric_logger.py:190] completed step: 3, seconds: 5.667, TFLOP/s/device: 134.9, Tokens/s/device: 723.0, total_weights: 262144, loss: 9.8
I1121 16:46:25.000000 140 metric_logger.py:190] completed step: 4, seconds: 5.671, TFLOP/s/device: 134.8, Tokens/s/device: 722.5, total_weights: 262144, loss: 9.5
E1121 16:46:30.000000 140 train.py:500] Traceback (most recent call last):
    raise StopIteration
StopIteration
I1121 16:50:25.000000 140 metric_logger.py:190] completed step: 4, seconds: 5.700, TFLOP/s/device: 134.1, Tokens/s/device: 719.0, total_weights: 262144, loss: 9.5
)";

TEST(MaxtextLogTest, DigestAccumulatesARealisticLog) {
  LogDigest d;
  d.feed_text(kRealisticLog);
  EXPECT_EQ(d.lines(), 26);
  ASSERT_EQ(d.steps().size(), 5u);
  EXPECT_EQ(d.first_step(), 0);
  EXPECT_EQ(d.last_step(), 4);
  EXPECT_EQ(d.duplicate_step_lines(), 1);
  EXPECT_DOUBLE_EQ(*d.steps().at(4).seconds, 5.700);  // the later line wins
  EXPECT_DOUBLE_EQ(*d.num_params_billion(), 15.933);
  EXPECT_DOUBLE_EQ(*d.tflops_per_step().tflops_per_device, 764.67);
  EXPECT_DOUBLE_EQ(*d.tflops_per_step().learnable_weight_percent, 94.54);
  ASSERT_TRUE(d.memstats_peak().has_value());
  EXPECT_DOUBLE_EQ(d.memstats_peak()->used_gib, 81.20);
  EXPECT_DOUBLE_EQ(d.memstats_peak()->limit_gib, 95.74);
  EXPECT_EQ(d.memstats_peak()->label, "After first optimizer step");
  EXPECT_EQ(d.memstats_peak()->device, "TPU_0(process=0,(0,0,0,0))");
  EXPECT_DOUBLE_EQ(*d.memory_estimate()->total_gb, 60.1);
  EXPECT_EQ(d.config_params().at("model_name"), "llama2-7b");
  EXPECT_EQ(d.config_params().at("steps"), "10");
  ASSERT_EQ(d.signatures().size(), 1u);
  EXPECT_EQ(d.signatures()[0].signature, FailureSignature::data_exhausted);
  EXPECT_EQ(d.signatures()[0].count, 2);
  EXPECT_EQ(d.signatures()[0].first_line, 24);
  EXPECT_TRUE(d.saw(FailureSignature::data_exhausted));
  EXPECT_FALSE(d.saw(FailureSignature::hbm_oom));

  nlohmann::json j = to_json(d);
  EXPECT_EQ(j["steps"]["count"], 5);
  EXPECT_EQ(j["steps"]["last"], 4);
  EXPECT_EQ(j["signatures"][0]["signature"], "data_exhausted");
  EXPECT_EQ(j["memstats_peak"]["used_gib"], 81.20);
  EXPECT_EQ(j["config_params"]["per_device_batch_size"], "1");
}

TEST(MaxtextLogTest, DigestKeepsProfilerStepsOutOfMetrics) {
  LogDigest d;
  d.feed("completed step: 4, seconds: 1.0, loss: 2.0");
  d.feed("completed profiler activation/deactivation step: 5, total_weights: 1, loss: 2.0");
  d.feed("[Rampup Batch Size Phase], completed step: 6, seconds: 1.1, total_weights: 1, loss: 2");
  EXPECT_EQ(d.steps().size(), 2u);
  EXPECT_THAT(d.profiler_steps(), ElementsAre(5));
  EXPECT_TRUE(d.steps().at(6).rampup);
}

TEST(MaxtextLogTest, ParsedLineJson) {
  auto j = to_json(parse_maxtext_line(
      "(RayTrainWorker pid=1, ip=2) completed step: 1, seconds: 0.5, lm_loss: 1.5 [repeated 3x "
      "across cluster]"));
  EXPECT_EQ(j["kind"], "step");
  EXPECT_EQ(j["repeated"], 3);
  EXPECT_EQ(j["step"]["step"], 1);
  EXPECT_EQ(j["step"]["extra"]["lm_loss"], 1.5);
  EXPECT_TRUE(j["step"]["tflops_per_device"].is_null());
  EXPECT_EQ(to_json(parse_maxtext_line("StopIteration"))["signature"]["signature"],
            "data_exhausted");
}

}  // namespace
}  // namespace podium::core
