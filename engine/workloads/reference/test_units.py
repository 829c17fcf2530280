"""In-process unit tests of the reference workload's parts (config, environment, catalog vs.
the flax model, mesh, sharding, data, checkpoint paths, TPU topology names, dataset
generator). The trainer's end-to-end behaviour is in test_train.py.

JAX runs on 4 CPU devices here (XLA_FLAGS is set before JAX is first imported; test_train.py
sets the same value, since both run in one process under `unittest discover`).
"""

import io
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stderr
from unittest import mock

os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import yaml  # noqa: E402

import make_dataset  # noqa: E402
from podium_reference import catalog, checkpoint, config, data, distributed, topology  # noqa: E402
from podium_reference import mesh as mesh_lib  # noqa: E402


def cfg_with(**overrides):
    return config.load(["dataset_path=/d"] + [f"{k}={v}" for k, v in overrides.items()])


class ConfigTest(unittest.TestCase):
    def test_base_yml_lists_every_key_with_the_schema_default(self):
        with open(config.DEFAULT_CONFIG_PATH, encoding="utf-8") as f:
            raw = yaml.safe_load(f)
        self.assertEqual(list(raw), list(config.SCHEMA))
        for key, (kind, default) in config.SCHEMA.items():
            self.assertIsInstance(raw[key], kind, key)
            self.assertEqual(raw[key], default, key)

    def test_maxtext_parallelism_defaults(self):
        cfg = cfg_with()
        self.assertEqual(cfg.ici_fsdp_parallelism, -1)
        self.assertEqual(cfg.dcn_data_parallelism, -1)
        others = [k for k in config.SCHEMA if k.endswith("_parallelism")
                  and k not in ("ici_fsdp_parallelism", "dcn_data_parallelism")]
        self.assertEqual(len(others), 24)
        self.assertTrue(all(cfg[k] == 1 for k in others))
        self.assertEqual(cfg.num_slices, -1)

    def test_overrides_are_typed_after_the_schema(self):
        cfg = config.load([config.DEFAULT_CONFIG_PATH, "dataset_path=/d", "steps=7", "learning_rate=1e-3",
                           "enable_checkpointing=False", "run_name=abc", "steps=9", "ici_tensor_parallelism=2"])
        self.assertEqual(cfg.steps, 9)  # the later repetition wins
        self.assertEqual(cfg.learning_rate, 0.001)
        self.assertIs(cfg.enable_checkpointing, False)
        self.assertEqual(cfg.run_name, "abc")
        self.assertEqual(cfg.ici_tensor_parallelism, 2)

    def test_config_file_is_optional_and_compile_only_needs_no_dataset(self):
        self.assertEqual(config.load(["dataset_path=/d"]).model_name, "reference-tiny")
        self.assertEqual(config.load(["compile_topology=v5e-8"], require_dataset=False).compile_topology, "v5e-8")

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
                 ("run_name=a/b", "run_name"), ("noequals", "key=value"),
                 ("ici_fsdp_parallelism=0", "ici_fsdp_parallelism"), ("num_slices=0", "num_slices")]
        for arg, message in cases:
            with self.subTest(arg=arg), self.assertRaisesRegex(ValueError, message):
                config.load(["dataset_path=/d", arg])


class DistributedEnvTest(unittest.TestCase):
    def test_single_process_needs_nothing(self):
        self.assertEqual(distributed.resolve({}), distributed.DistEnv(0, 1, "", 1, 0))

    def test_jax_variables(self):
        env = distributed.resolve({"JAX_COORDINATOR_ADDRESS": "host-0:8476", "JAX_PROCESS_ID": "3",
                                   "JAX_PROCESS_COUNT": "4", "MEGASCALE_NUM_SLICES": "2",
                                   "MEGASCALE_SLICE_ID": "1", "MASTER_ADDR": "ignored", "RANK": "0"})
        self.assertEqual(env, distributed.DistEnv(3, 4, "host-0:8476", 2, 1))
        env = distributed.resolve({"JAX_COORDINATOR_ADDRESS": "host-0", "JAX_COORDINATOR_PORT": "2222",
                                   "JAX_PROCESS_ID": "1", "JAX_PROCESS_COUNT": "2"})
        self.assertEqual(env.coordinator_address, "host-0:2222")
        env = distributed.resolve({"JAX_COORDINATOR_ADDRESS": "fd00::1", "JAX_COORDINATOR_PORT": "2222",
                                   "JAX_PROCESS_ID": "1", "JAX_PROCESS_COUNT": "2"})
        self.assertEqual(env.coordinator_address, "[fd00::1]:2222")

    def test_errors(self):
        with self.assertRaisesRegex(ValueError, "JAX_COORDINATOR_ADDRESS"):
            distributed.resolve({"JAX_PROCESS_ID": "0", "JAX_PROCESS_COUNT": "2"})
        with self.assertRaisesRegex(ValueError, "Invalid JAX_PROCESS_ID"):
            distributed.resolve({"JAX_PROCESS_ID": "2", "JAX_PROCESS_COUNT": "2", "JAX_COORDINATOR_ADDRESS": "a:1"})
        with self.assertRaisesRegex(ValueError, "not an integer"):
            distributed.resolve({"JAX_PROCESS_ID": "x"})
        with self.assertRaisesRegex(ValueError, "MEGASCALE_SLICE_ID"):
            distributed.resolve({"MEGASCALE_NUM_SLICES": "2", "MEGASCALE_SLICE_ID": "2"})


class CatalogTest(unittest.TestCase):
    def test_param_count_is_the_flax_models_parameter_count(self):
        import jax
        import jax.numpy as jnp

        from podium_reference.model import Decoder

        for name, dims in catalog.CATALOG.items():
            with self.subTest(name):
                shapes = jax.eval_shape(Decoder(dims).init, jax.random.PRNGKey(0), jnp.zeros((1, 4), jnp.int32))
                counted = sum(leaf.size for leaf in jax.tree.leaves(shapes))
                self.assertEqual(counted, catalog.param_count(dims))
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


class ModelTest(unittest.TestCase):
    def test_initial_loss_is_about_ln256_and_the_model_is_causal(self):
        import jax
        import jax.numpy as jnp

        from podium_reference.model import Decoder, loss_fn

        model = Decoder(catalog.CATALOG["reference-tiny"])
        tokens = jax.random.randint(jax.random.PRNGKey(1), (2, 17), 0, 256, dtype=jnp.int32)
        params = model.init(jax.random.PRNGKey(0), tokens)["params"]
        self.assertAlmostEqual(float(loss_fn(model, params, tokens)), 5.545, delta=0.2)
        changed = tokens.at[:, 10].set((tokens[:, 10] + 1) % 256)
        a = model.apply({"params": params}, tokens)
        b = model.apply({"params": params}, changed)
        self.assertTrue(bool(jnp.allclose(a[:, :10], b[:, :10], atol=1e-6)))  # the past ignores the future
        self.assertFalse(bool(jnp.allclose(a[:, 10:], b[:, 10:], atol=1e-6)))


class MeshTest(unittest.TestCase):
    def test_fill_unspecified_like_maxtext(self):
        self.assertEqual(mesh_lib.fill_unspecified([1, -1, 2], 8), [1, 4, 2])
        self.assertEqual(mesh_lib.fill_unspecified([1, 2, 2], 8), [1, 2, 2])  # left for JAX to refuse
        self.assertEqual(mesh_lib.fill_unspecified([-1, 3], 4), [1, 3])  # 4/3: JAX refuses the product
        with self.assertRaisesRegex(ValueError, "more than one"):
            mesh_lib.fill_unspecified([-1, -1], 4)

    def test_axis_order_and_shapes(self):
        self.assertEqual(mesh_lib.MESH_AXES, ("diloco", "data", "stage", "fsdp", "fsdp_transpose", "context",
                                              "context_usp_ulysses", "context_autoregressive", "tensor",
                                              "tensor_sequence", "expert", "autoregressive"))
        ici, dcn = mesh_lib.shapes(cfg_with(ici_tensor_parallelism=2, ici_sequence_parallelism=2), 16, 2)
        named = dict(zip(mesh_lib.MESH_AXES, ici))
        self.assertEqual((named["fsdp"], named["tensor"], named["context"]), (2, 2, 2))
        self.assertEqual(dict(zip(mesh_lib.MESH_AXES, dcn))["data"], 2)
        ici, _ = mesh_lib.shapes(cfg_with(ici_pipeline_parallelism=4, ici_fsdp_parallelism=1), 4, 1)
        self.assertEqual(dict(zip(mesh_lib.MESH_AXES, ici))["stage"], 4)

    def test_mesh_over_cpu_devices(self):
        import jax

        devices = jax.devices()
        self.assertEqual(len(devices), 4)
        ici, dcn = mesh_lib.shapes(cfg_with(ici_fsdp_parallelism=2, ici_data_parallelism=2), 4, 1)
        array = mesh_lib.device_array(devices, ici, dcn, lambda d: 0)
        self.assertEqual(array.shape, (1, 2, 1, 2, 1, 1, 1, 1, 1, 1, 1, 1))

    def test_a_layout_jax_cannot_build_fails_with_jaxs_message(self):
        import jax

        ici, dcn = mesh_lib.shapes(cfg_with(ici_tensor_parallelism=3), 4, 1)
        with self.assertRaisesRegex(ValueError, r"Number of devices 4 must equal the product of mesh_shape"):
            mesh_lib.device_array(jax.devices(), ici, dcn, lambda d: 0)

    def test_two_slices_along_dcn(self):
        import jax

        devices = jax.devices()
        ici, dcn = mesh_lib.shapes(cfg_with(), 4, 2)  # ici fsdp -1 -> 2, dcn data -1 -> 2
        array = mesh_lib.device_array(devices, ici, dcn, lambda d: d.id // 2)
        self.assertEqual(array.shape, (1, 2, 1, 2, 1, 1, 1, 1, 1, 1, 1, 1))
        # data (the DCN axis) indexes the slice; fsdp stays inside one.
        flat = array.reshape(2, 2)
        self.assertEqual([[d.id // 2 for d in row] for row in flat], [[0, 0], [1, 1]])


class ShardingTest(unittest.TestCase):
    def test_weights_shard_over_fsdp_and_tensor_where_they_divide(self):
        import jax
        from jax.sharding import Mesh, PartitionSpec as P

        from podium_reference.state import Trainer

        ici, dcn = mesh_lib.shapes(cfg_with(ici_fsdp_parallelism=2, ici_tensor_parallelism=2), 4, 1)
        mesh = Mesh(mesh_lib.device_array(jax.devices(), ici, dcn, lambda d: 0), mesh_lib.MESH_AXES)
        trainer = Trainer(catalog.CATALOG["reference-tiny"], 0.003, mesh)
        params = trainer.state_shardings["params"]
        self.assertEqual(params["embedding"]["embedding"].spec, P("fsdp", "tensor"))  # (vocab, embed)
        self.assertEqual(params["layers_0"]["attention"]["query"]["kernel"].spec, P("fsdp", "tensor"))
        self.assertEqual(params["layers_0"]["mlp"]["wo"]["kernel"].spec, P("tensor", "fsdp"))
        self.assertEqual(params["final_norm"]["scale"].spec, P())
        # AdamW's moments follow their parameter.
        mu = trainer.state_shardings["opt_state"][1][0].mu
        self.assertEqual(mu["layers_0"]["mlp"]["wi"]["kernel"].spec, P("fsdp", "tensor"))
        self.assertEqual(trainer.batch_sharding.spec, P(None, mesh_lib.BATCH_AXES, None))

    def test_a_dimension_the_axis_does_not_divide_is_replicated(self):
        from podium_reference.state import leaf_spec
        from jax.sharding import PartitionSpec as P
        from jax.tree_util import DictKey

        path = (DictKey("layers_0"), DictKey("attention"), DictKey("query"), DictKey("kernel"))
        self.assertEqual(leaf_spec(path, (64, 64), {"fsdp": 3, "tensor": 2}), P(None, "tensor"))
        self.assertEqual(leaf_spec(path, (64, 64), {"fsdp": 1, "tensor": 1}), P(None, None))


class DataTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.tmp.name, "d.bin")
        with open(self.path, "wb") as f:
            f.write(bytes(range(256)) * 4)  # 1024 bytes

    def tearDown(self):
        self.tmp.cleanup()

    def test_processes_read_their_rows_of_the_same_global_batch(self):
        whole = data.ByteBatchIterator(self.path, 4, 7, 2)  # 4 sequences of 8 bytes, 2 micro-batches
        top = data.ByteBatchIterator(self.path, 4, 7, 2, rows=(0, 2))
        bottom = data.ByteBatchIterator(self.path, 4, 7, 2, rows=(2, 4))
        a, b, c = next(whole), next(top), next(bottom)
        self.assertEqual(a.shape, (2, 4, 8))
        self.assertEqual(a.tolist()[0][0], list(range(8)))
        self.assertEqual(a.tolist()[1][0], list(range(32, 40)))  # micro-batch 1 follows micro-batch 0
        self.assertEqual(a[:, :2].tolist(), b.tolist())
        self.assertEqual(a[:, 2:].tolist(), c.tolist())
        self.assertEqual(whole.position, 64)

    def test_stop_iteration_when_the_step_cannot_be_fed_and_resume_position(self):
        it = data.ByteBatchIterator(self.path, 4, 63, 1)  # 256 bytes per step
        for _ in range(4):
            next(it)
        with self.assertRaisesRegex(StopIteration, r"step 4 needs bytes \[1024, 1280\) but the file has 1024 bytes"):
            next(it)
        resumed = data.ByteBatchIterator(self.path, 4, 63, 1, position=768, first_step=3)
        self.assertEqual(next(resumed)[0, 0, 0], 0)  # byte 768 is 0 again (256-byte pattern)
        self.assertRaises(StopIteration, next, resumed)


class CheckpointPathTest(unittest.TestCase):
    def test_local_paths_are_themselves(self):
        self.assertEqual(checkpoint.local_root("/a/b", {}), "/a/b")
        self.assertEqual(checkpoint.local_root("file:///a/b", {}), "/a/b")

    def test_uris_map_under_the_store_by_scheme_and_bucket(self):
        env = {checkpoint.OBJECT_STORE_ENV: "/store"}
        self.assertEqual(checkpoint.local_root("gs://bucket/out/r/checkpoints", env), "/store/gs/bucket/out/r/checkpoints")

    def test_a_uri_without_a_store_is_a_clear_error(self):
        with self.assertRaisesRegex(ValueError, checkpoint.OBJECT_STORE_ENV):
            checkpoint.local_root("gs://bucket/x", {})


class InitFromArgumentTest(unittest.TestCase):
    def test_both_forms_are_taken_out_of_the_key_value_arguments(self):
        from podium_reference import train

        self.assertEqual(train.split_init_from(["base.yml", "steps=3"]), (["base.yml", "steps=3"], None))
        self.assertEqual(train.split_init_from(["base.yml", "--init-from", "/o/r/checkpoints/20", "steps=3"]),
                         (["base.yml", "steps=3"], "/o/r/checkpoints/20"))
        self.assertEqual(train.split_init_from(["--init-from=gs://b/r/checkpoints/20", "--compile-only"]),
                         (["--compile-only"], "gs://b/r/checkpoints/20"))
        for bad in (["--init-from"], ["--init-from="], ["--init-from", ""]):
            with self.assertRaisesRegex(ValueError, "needs a checkpoint step directory"):
                train.split_init_from(bad)

    def test_the_step_is_the_directory_name(self):
        self.assertEqual(checkpoint.step_of_directory("/o/r/checkpoints/20"), 20)
        self.assertEqual(checkpoint.step_of_directory("gs://b/r/checkpoints/300/"), 300)
        with self.assertRaisesRegex(ValueError, "not a checkpoint step directory"):
            checkpoint.step_of_directory("/o/r/checkpoints/20.orbax-checkpoint-tmp-1")


class TopologyTest(unittest.TestCase):
    def test_maxtext_names(self):
        cases = {
            # accelerator: (topology_name, chip_config, chips_per_host_bounds, wrap), as MaxText's map
            "v5p-8": ("v5:2x2x1", "megacore", (2, 2, 1), (False, False, False)),
            "v5p-128": ("v5:4x4x4", "megacore", (2, 2, 1), (True, True, True)),
            "v4-16": ("v4:2x2x2", "megacore_dense", (2, 2, 1), (False, False, False)),
            "v5e-1": ("v5e:1x1", "default", (1, 1, 1), (False, False, False)),
            "v5e-8": ("v5e:2x4", "default", (2, 2, 1), (False, False, False)),
            "v5litepod-16": ("v5e:4x4", "default", (2, 2, 1), (False, False, False)),
            "v6e-128": ("v6e:8x16", "default", (2, 2, 1), (False, True, False)),
            "v6e-256": ("v6e:16x16", "default", (2, 2, 1), (True, True, False)),
            "tpu7x-8": ("tpu7x:2x2x1", "default", (2, 2, 1), (False, False, False)),
            "tpu7x-64": ("tpu7x:2x4x4", "default", (2, 2, 1), (False, False, False)),
            "tpu7x-128": ("tpu7x:4x4x4", "default", (2, 2, 1), (True, True, True)),
        }
        for name, want in cases.items():
            with self.subTest(name):
                s = topology.spec(name)
                self.assertEqual((s.topology_name, s.chip_config_name, s.chips_per_host_bounds, s.wrap), want)

    def test_unknown_names(self):
        for name in ("v5p-12", "h100-8", "v5e", "cpu-2"):
            with self.subTest(name), self.assertRaisesRegex(ValueError, "compile_topology"):
                topology.spec(name)


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
