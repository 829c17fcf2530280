"""In-process unit tests of the reference workload's parts (config, env, catalog, data,
checkpoints, dataset generator). The end-to-end behaviour of the trainer process is in
test_train.py."""

import io
import os
import tempfile
import unittest
from contextlib import redirect_stderr
from unittest import mock

import torch
import yaml

import make_dataset
from podium_reference import catalog, checkpoint, config, data, distributed
from podium_reference.model import GPT


class ConfigTest(unittest.TestCase):
    def test_base_yml_lists_every_key_with_the_schema_default(self):
        with open(config.DEFAULT_CONFIG_PATH, encoding="utf-8") as f:
            raw = yaml.safe_load(f)
        self.assertEqual(list(raw), list(config.SCHEMA))
        for key, (kind, default) in config.SCHEMA.items():
            self.assertIsInstance(raw[key], kind, key)
            self.assertEqual(raw[key], default, key)

    def test_overrides_are_typed_after_the_schema(self):
        cfg = config.load([config.DEFAULT_CONFIG_PATH, "dataset_path=/d", "steps=7", "learning_rate=1e-3",
                           "enable_checkpointing=False", "run_name=abc", "steps=9"])
        self.assertEqual(cfg.steps, 9)  # the later repetition wins
        self.assertEqual(cfg.learning_rate, 0.001)
        self.assertIs(cfg.enable_checkpointing, False)
        self.assertEqual(cfg.run_name, "abc")

    def test_config_file_is_optional(self):
        self.assertEqual(config.load(["dataset_path=/d"]).model_name, "reference-tiny")

    def test_unknown_key_is_rejected_like_maxtext(self):
        stderr = io.StringIO()
        with redirect_stderr(stderr), self.assertRaisesRegex(ValueError, r"^'weight_decay' not in valid fields: 'run_name', "):
            config.load([config.DEFAULT_CONFIG_PATH, "dataset_path=/d", "weight_decay=0.1"])
        self.assertIn("Ignoring invalid/unsupported field from YAML/CLI: 'weight_decay'", stderr.getvalue())

    def test_unknown_key_in_the_yaml_file_is_rejected_too(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "c.yml")
            with open(path, "w") as f:
                f.write("dataset_path: /d\nfail_at_step: 3\n")
            with redirect_stderr(io.StringIO()), self.assertRaisesRegex(ValueError, "not in valid fields"):
                config.load([path])

    def test_bad_values(self):
        cases = [("steps=ten", "Couldn't parse value"), ("enable_checkpointing=yes", "Couldn't parse value"),
                 ("model_name=llama2-7b", "Invalid model name"), ("per_device_batch_size=0", "positive"),
                 ("checkpoint_period=0", "checkpoint_period"), ("dataset_path=", "dataset_path"),
                 ("run_name=a/b", "run_name"), ("noequals", "key=value")]
        for arg, message in cases:
            with self.subTest(arg=arg), self.assertRaisesRegex(ValueError, message):
                config.load(["dataset_path=/d", arg])


class DistributedEnvTest(unittest.TestCase):
    def test_single_process_needs_nothing(self):
        env = distributed.resolve({})
        self.assertEqual((env.rank, env.world_size), (0, 1))

    def test_pytorch_variables_win_over_jax_ones(self):
        env = distributed.resolve({"MASTER_ADDR": "10.0.0.1", "MASTER_PORT": "29500", "RANK": "1", "WORLD_SIZE": "2",
                                   "JAX_COORDINATOR_ADDRESS": "10.9.9.9:1234", "JAX_PROCESS_ID": "0",
                                   "JAX_PROCESS_COUNT": "8"})
        self.assertEqual(env, distributed.DistEnv(1, 2, "10.0.0.1", 29500))
        self.assertEqual(env.init_method, "tcp://10.0.0.1:29500")

    def test_jax_fallback(self):
        env = distributed.resolve({"JAX_COORDINATOR_ADDRESS": "host-0:8476", "JAX_PROCESS_ID": "3",
                                   "JAX_PROCESS_COUNT": "4"})
        self.assertEqual(env, distributed.DistEnv(3, 4, "host-0", 8476))
        env = distributed.resolve({"JAX_COORDINATOR_ADDRESS": "host-0", "JAX_COORDINATOR_PORT": "2222",
                                   "NODE_RANK": "0", "JAX_PROCESS_ID": "0", "JAX_PROCESS_COUNT": "2"})
        self.assertEqual((env.master_addr, env.master_port), ("host-0", 2222))

    def test_errors(self):
        with self.assertRaisesRegex(ValueError, "coordinator"):
            distributed.resolve({"RANK": "0", "WORLD_SIZE": "2"})
        with self.assertRaisesRegex(ValueError, "Invalid rank"):
            distributed.resolve({"RANK": "2", "WORLD_SIZE": "2", "MASTER_ADDR": "a", "MASTER_PORT": "1"})
        with self.assertRaisesRegex(ValueError, "not an integer"):
            distributed.resolve({"RANK": "x"})


class CatalogTest(unittest.TestCase):
    def test_param_count_matches_the_torch_model(self):
        for name, dims in catalog.CATALOG.items():
            with self.subTest(name):
                model = GPT(dims)
                self.assertEqual(sum(p.numel() for p in model.parameters()), catalog.param_count(dims))
        self.assertEqual(catalog.param_count(catalog.CATALOG["reference-tiny"]), 131392)
        self.assertEqual(catalog.param_count(catalog.CATALOG["reference-small"]), 853120)

    def test_flops_follow_maxtext_formula(self):
        d = catalog.CATALOG["reference-tiny"]
        b, s = 2, 64
        per_layer = 2 * b * s * 256 * 64 * 2 + 2 * b * s * 64 * 12 * 16 + 2 * b * s * 64 * 64
        learnable = (per_layer * 2 + 2 * b * s * 64 * 256) * 3
        attention = 4 * b * s * s * 4 * 16 / 2 * 2 * 3
        self.assertEqual(catalog.training_flops_per_device(d, b, s), (learnable + attention, learnable, attention))
        self.assertEqual(catalog.training_flops_per_device(d, b, s)[0], 94371840)
        total2, _, _ = catalog.training_flops_per_device(d, b, s, gradient_accumulation_steps=2)
        self.assertEqual(total2, 2 * 94371840)

    def test_every_model_trains_one_step(self):
        for name, dims in catalog.CATALOG.items():
            with self.subTest(name):
                torch.manual_seed(0)
                model = GPT(dims)
                loss = model.loss(torch.randint(0, 256, (1, 17)))
                self.assertAlmostEqual(loss.item(), 5.545, delta=0.2)  # ~ln(256) at initialisation
                loss.backward()
                self.assertTrue(all(p.grad is not None for p in model.parameters()))

    def test_model_is_causal(self):
        torch.manual_seed(0)
        model = GPT(catalog.CATALOG["reference-tiny"])
        x = torch.randint(0, 256, (1, 16))
        y = x.clone()
        y[0, 10:] = (y[0, 10:] + 1) % 256
        with torch.no_grad():
            self.assertTrue(torch.allclose(model(x)[0, :10], model(y)[0, :10]))


class DataTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.tmp.name, "d.bin")
        with open(self.path, "wb") as f:
            f.write(bytes(range(256)) * 4)  # 1024 bytes

    def tearDown(self):
        self.tmp.cleanup()

    def test_ranks_read_disjoint_sequential_slices(self):
        seen = []
        for rank in range(2):
            it = data.ByteBatchIterator(self.path, rank, 2, per_device_batch_size=2, max_target_length=7,
                                        gradient_accumulation_steps=2)
            for _ in range(3):
                for micro in next(it):
                    self.assertEqual(tuple(micro.shape), (2, 8))
                    seen.extend(micro.flatten().tolist())
            it.close()
        # 3 steps x 2 ranks x 2 micro-batches x 2 sequences x 8 bytes = the first 192 bytes, each once.
        self.assertEqual(sorted(seen), list(range(192)))

    def test_stop_iteration_when_the_step_cannot_be_fed(self):
        it = data.ByteBatchIterator(self.path, 0, 1, per_device_batch_size=3, max_target_length=99,
                                    gradient_accumulation_steps=1, position=0)
        for _ in range(3):
            next(it)  # 3 x 300 bytes fit in 1024
        with self.assertRaisesRegex(StopIteration, r"step 3 needs bytes \[900, 1200\) but the file has 1024 bytes"):
            next(it)
        self.assertEqual(data.bytes_per_step(4, 2, 64, 3), 4 * 2 * 3 * 65)

    def test_resume_position(self):
        it = data.ByteBatchIterator(self.path, 0, 1, 1, 9, 1, position=20)
        self.assertEqual(next(it)[0].flatten().tolist(), list(range(20, 30)))


class ObjectStoreRootTest(unittest.TestCase):
    def test_local_paths_are_themselves(self):
        self.assertEqual(checkpoint.local_root("/out/run/checkpoints", {}), "/out/run/checkpoints")
        self.assertEqual(checkpoint.local_root("file:///out/run", {}), "/out/run")

    def test_uris_map_under_the_store_by_scheme_and_bucket(self):
        env = {checkpoint.OBJECT_STORE_ENV: "/store"}
        self.assertEqual(checkpoint.local_root("gs://bucket/out/run/checkpoints", env),
                         "/store/gs/bucket/out/run/checkpoints")
        self.assertEqual(checkpoint.local_root("S3://b/x", env), "/store/s3/b/x")

    def test_a_uri_without_a_store_is_a_clear_error(self):
        with self.assertRaisesRegex(ValueError, "gs://bucket/out.*PODIUM_REFERENCE_OBJECT_STORE"):
            checkpoint.local_root("gs://bucket/out", {})


class CheckpointTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = checkpoint.checkpoint_root(self.tmp.name, "run")

    def tearDown(self):
        self.tmp.cleanup()

    def test_only_plain_step_numbers_are_finished_checkpoints(self):
        self.assertIsNone(checkpoint.latest_step(self.root))
        checkpoint.save(self.root, 10, {"format": checkpoint.FORMAT, "x": torch.ones(2)}, {})
        for name in ("30.orbax-checkpoint-tmp-1712345678901234", "-5", "40.tmp", "abc"):
            os.makedirs(os.path.join(self.root, name))
        with open(os.path.join(self.root, "50"), "w"):
            pass  # a file, not a directory
        self.assertEqual(checkpoint.finished_steps(self.root), [10])
        self.assertEqual(sorted(os.listdir(os.path.join(self.root, "10"))), ["metadata.json", "state.pt"])
        payload = checkpoint.load_state_bytes(checkpoint.read_state_bytes(self.root, 10))
        self.assertTrue(torch.equal(payload["x"], torch.ones(2)))

    def test_a_save_cut_short_leaves_no_finished_checkpoint(self):
        checkpoint.save(self.root, 10, {"format": checkpoint.FORMAT}, {})
        with mock.patch.object(checkpoint, "_fsync_path", side_effect=OSError("disk gone")):
            with self.assertRaises(OSError):
                checkpoint.save(self.root, 20, {"format": checkpoint.FORMAT}, {})
        names = os.listdir(self.root)
        self.assertTrue(any(n.startswith("20.orbax-checkpoint-tmp-") for n in names), names)
        self.assertNotIn("20", names)
        self.assertEqual(checkpoint.latest_step(self.root), 10)

    def test_an_existing_checkpoint_is_not_replaced(self):
        first = checkpoint.save(self.root, 10, {"format": checkpoint.FORMAT, "v": 1}, {})
        self.assertIsNone(checkpoint.save(self.root, 10, {"format": checkpoint.FORMAT, "v": 2}, {}))
        self.assertEqual(checkpoint.load_state_bytes(checkpoint.read_state_bytes(self.root, 10))["v"], 1)
        self.assertEqual(os.listdir(self.root), ["10"])
        self.assertEqual(first, os.path.join(self.root, "10"))


class MakeDatasetTest(unittest.TestCase):
    def test_exact_size_deterministic_prefix_stable(self):
        a = make_dataset.generate(50000, seed=0)
        self.assertEqual(len(a), 50000)
        self.assertEqual(a, make_dataset.generate(50000, seed=0))
        self.assertEqual(make_dataset.generate(70000, seed=0)[:50000], a)
        self.assertNotEqual(make_dataset.generate(50000, seed=1), a)
        a.decode("ascii")
        self.assertEqual(make_dataset.parse_size("300K"), 307200)
        self.assertEqual(make_dataset.parse_size("1.5M"), 1572864)
        self.assertEqual(make_dataset.parse_size("123"), 123)

    def test_cli_writes_the_file(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "sub", "data.txt")
            with redirect_stderr(io.StringIO()), mock.patch("sys.stdout", new=io.StringIO()):
                self.assertEqual(make_dataset.main([out, "--size", "2K", "--seed", "3"]), 0)
            with open(out, "rb") as f:
                self.assertEqual(f.read(), make_dataset.generate(2048, 3))
            self.assertEqual(os.listdir(os.path.dirname(out)), ["data.txt"])


if __name__ == "__main__":
    unittest.main()


class CompileOnlyTest(unittest.TestCase):
    def test_activation_count_is_exact_at_lengths_it_did_not_sample(self):
        from podium_reference import compile_only

        model = GPT(catalog.get_dims("reference-tiny"))
        storages = {p.storage().data_ptr() for p in model.parameters()}
        for batch, length in ((3, 100), (1, 57)):
            direct = compile_only._saved_activation_bytes(model, length, storages) * batch
            counted = compile_only.memory_bytes("reference-tiny", batch, length)["temp"]
            self.assertEqual(direct, counted)

    def test_arguments_are_four_copies_of_the_parameters_and_the_batch(self):
        from podium_reference import compile_only

        params = catalog.param_count(catalog.get_dims("reference-small"))
        sizes = compile_only.memory_bytes("reference-small", 2, 64)
        self.assertEqual(sizes["argument"], 4 * 4 * params + 2 * 65 * 8)
        self.assertEqual(sizes["total"], sizes["argument"] + sizes["temp"] + sizes["output"])
        line = compile_only.format_line(sizes)
        self.assertTrue(line.startswith("Total memory size: "))
        self.assertIn(" GB, Output size: ", line)

    def test_quadratic_in_length_linear_in_batch(self):
        from podium_reference import compile_only

        a = compile_only.memory_bytes("reference-tiny", 1, 1024)["temp"]
        b = compile_only.memory_bytes("reference-tiny", 4, 1024)["temp"]
        c = compile_only.memory_bytes("reference-tiny", 1, 2048)["temp"]
        self.assertEqual(b, 4 * a)
        self.assertGreater(c, 2 * a)  # the attention scores grow with the square
