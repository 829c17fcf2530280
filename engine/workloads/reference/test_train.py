"""End-to-end tests of the reference trainer on generated data.

Single-process runs call train.main in this process (JAX on 4 CPU devices, set before JAX is
imported, as in test_units.py) to save the seconds a new Python spends importing JAX, flax
and Orbax; what needs a process of its own (SIGTERM, exit codes, two processes joined by
jax.distributed) runs as subprocesses.
"""

import io
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest
from contextlib import redirect_stdout

os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import make_dataset  # noqa: E402
from podium_reference import train  # noqa: E402

STEP_LINE = re.compile(
    r"^completed step: (\d+), seconds: (\d+\.\d{3}), TFLOP/s/device: (\d+\.\d{3}), "
    r"Tokens/s/device: (\d+\.\d{3}), total_weights: (\d+), loss: (\d+\.\d{3})$")
BYTES_PER_STEP = 8 * 65  # global batch 8 (2 per device x 4 devices) of 64 + 1 bytes
_tmp = None


def setUpModule():
    global _tmp
    _tmp = tempfile.TemporaryDirectory(prefix="podium-reference-test-")
    with open(os.path.join(_tmp.name, "data.txt"), "wb") as f:
        f.write(make_dataset.generate(300 * 1024, 0))
    with open(os.path.join(_tmp.name, "short.txt"), "wb") as f:  # exactly 12 steps
        f.write(make_dataset.generate(12 * BYTES_PER_STEP, 0))


def tearDownModule():
    _tmp.cleanup()


def path(name):
    return os.path.join(_tmp.name, name)


def args(run_name, dataset="short.txt", **overrides):
    out = [os.path.join(HERE, "base.yml"), f"run_name={run_name}", f"base_output_directory={path('out')}",
           f"dataset_path={path(dataset)}", "per_device_batch_size=2", "max_target_length=64"]
    return out + [f"{k}={v}" for k, v in overrides.items()]


def run_here(argv):
    """train.main in this process: (lines, exception or None)."""
    out = io.StringIO()
    error = None
    with redirect_stdout(out):
        try:
            train.main(["train.py"] + argv, sigterm_guard=False)
        except BaseException as e:  # SystemExit, StopIteration, JAX's errors: the test decides
            error = e
    return out.getvalue().splitlines(), error


def popen(argv, devices=2, extra_env=None):
    env = dict(os.environ, XLA_FLAGS=f"--xla_force_host_platform_device_count={devices}", PYTHONUNBUFFERED="1")
    env.update(extra_env or {})
    return subprocess.Popen([sys.executable, "-u", os.path.join(HERE, "train.py")] + argv, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def steps_of(lines):
    return {int(m.group(1)): m for m in map(STEP_LINE.match, lines) if m}


def checkpoints(run_name):
    root = path(f"out/{run_name}/checkpoints")
    return sorted(os.listdir(root)) if os.path.isdir(root) else []


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


_baseline = []


def baseline():
    """(lines, steps) of the uninterrupted run other tests compare with: 12 steps on 4
    devices, no checkpoints (run once)."""
    if not _baseline:
        lines, error = run_here(args("baseline", steps=12, enable_checkpointing="false"))
        if error:
            raise error
        _baseline.append((lines, steps_of(lines)))
    return _baseline[0]


class TrainTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.baseline, cls.baseline_steps = baseline()

    def test_log_lines_have_maxtext_shape_and_loss_falls(self):
        lines = self.baseline
        self.assertEqual(sorted(self.baseline_steps), list(range(12)))
        self.assertIn("number parameters: 0.000 billion", lines)
        self.assertIn("Per train step: Total TFLOPs: 0.00 split as 93.33% learnable weight flops and "
                      "6.67% attention flops", lines)
        self.assertIn("Memstats: After params initialized:", lines)
        memory = [l for l in lines if l.startswith("Total memory size: ")]
        self.assertEqual(len(memory), 1, lines)
        self.assertRegex(memory[0], r"^Total memory size: \d+\.\d{6} GB, Output size: \d+\.\d{6} GB, Temp size: "
                                    r"\d+\.\d{6} GB, Argument size: \d+\.\d{6} GB, Host temp size: \d+\.\d{6} GB\.$")
        self.assertGreater(float(memory[0].split()[3]), 0.0)
        self.assertIn("Single process (JAX_PROCESS_COUNT=1): process 0 of 1, 4 global devices (4 local), "
                      "no jax.distributed", lines)
        self.assertTrue(any(l.startswith("Mesh (1 slice): diloco: 1, data: 1, stage: 1, fsdp: 4,") for l in lines))
        for m in self.baseline_steps.values():
            self.assertEqual(m.group(5), str(8 * 64))  # total_weights: tokens of the global batch
            seconds = float(m.group(2))
            # Tokens/s/device is the device's tokens over the step time (printed to 1 ms).
            self.assertAlmostEqual(float(m.group(4)), 2 * 64 / seconds, delta=2 * 64 / seconds * 0.0006 / seconds + 0.002)
        self.assertLess(float(self.baseline_steps[11].group(6)), float(self.baseline_steps[0].group(6)) - 1.0)

    def test_checkpoints_resume_exactly_and_stop_iteration_ends_the_data(self):
        lines, error = run_here(args("resume", steps=6, checkpoint_period=3))
        self.assertIsNone(error)
        self.assertIn("No existing checkpoints found, not restoring checkpoint.", lines)
        self.assertIn(f"Finished saving checkpoint to `{path('out/resume/checkpoints')}/3`.", lines)
        self.assertIn("Saved a checkpoint at step 6.", lines)
        self.assertEqual(checkpoints("resume"), ["3", "6"])
        # A save cut short leaves Orbax's temporary directory: never taken for a checkpoint.
        os.makedirs(path("out/resume/checkpoints/9.orbax-checkpoint-tmp-1700000000000000/state"))

        lines, error = run_here(args("resume", steps=13, checkpoint_period=3))
        self.assertIn("restoring from this run's directory step 6", lines)
        resumed = steps_of(lines)
        self.assertEqual(sorted(resumed), list(range(6, 12)))
        for step in range(6, 12):  # the same data and state: the uninterrupted run's losses
            self.assertEqual(resumed[step].group(6), self.baseline_steps[step].group(6), step)
        # The 12-step file cannot feed step 12.
        self.assertIsInstance(error, StopIteration)
        self.assertRegex(str(error), r"exhausted: step 12 needs bytes \[6240, 6760\) but the file has 6240 bytes")
        self.assertEqual(checkpoints("resume"), ["12", "3", "6", "9", "9.orbax-checkpoint-tmp-1700000000000000"])

    def test_init_from_starts_a_new_run_at_another_runs_checkpoint(self):
        lines, error = run_here(args("init-source", steps=6, checkpoint_period=3))
        self.assertIsNone(error)
        source = path("out/init-source/checkpoints/6")
        target = args("init-target", steps=9, checkpoint_period=3) + ["--init-from", source]
        lines, error = run_here(target)
        self.assertIsNone(error)
        self.assertIn(f"init_from: parameters of {source} loaded; training from step 6", lines)
        self.assertFalse([l for l in lines if "restoring" in l.lower() and "step" in l], lines)
        steps = steps_of(lines)
        self.assertEqual(sorted(steps), [6, 7, 8])
        self.assertEqual(checkpoints("init-target"), ["9"])
        # Its data starts at its own beginning (the baseline's first batch), its parameters are
        # the source's after 6 steps: a lower loss on that batch than fresh weights give.
        self.assertLess(float(steps[6].group(6)), float(self.baseline_steps[0].group(6)) - 0.05)
        # A restart of the new run resumes from its own checkpoint, not from init_from's.
        lines, error = run_here(args("init-target", steps=12, checkpoint_period=3) + [f"--init-from={source}"])
        self.assertIsNone(error)
        self.assertIn("restoring from this run's directory step 9", lines)
        self.assertFalse([l for l in lines if l.startswith("init_from:")], lines)
        self.assertEqual(sorted(steps_of(lines)), [9, 10, 11])

    def test_init_from_another_model_or_an_unfinished_step_is_refused(self):
        lines, error = run_here(args("init-other", steps=3, checkpoint_period=3))
        self.assertIsNone(error)
        source = path("out/init-other/checkpoints/3")
        _, error = run_here(args("init-wrong-model", steps=6, model_name="reference-small") + ["--init-from", source])
        self.assertIsInstance(error, ValueError)
        self.assertIn("model_name=reference-tiny, not reference-small", str(error))
        _, error = run_here(args("init-missing", steps=6) + ["--init-from", path("out/init-other/checkpoints/2")])
        self.assertIsInstance(error, FileNotFoundError)

    def test_nan_loss_aborts(self):
        lines, error = run_here(args("nan", dataset="data.txt", steps=20, learning_rate=1e30,
                                     enable_checkpointing="false"))
        self.assertIsInstance(error, SystemExit)
        self.assertEqual(error.code, 1)
        self.assertEqual(lines[-1], "Aborting training due to NaN loss.")

    def test_compile_only_on_this_hosts_cpu_devices(self):
        lines, error = run_here(args("compile", ici_fsdp_parallelism=2, ici_data_parallelism=2) + ["--compile-only"])
        self.assertIsNone(error)
        self.assertIn("Compiled the training step; nothing trained (--compile-only)", lines)
        memory = [l for l in lines if l.startswith("Total memory size: ")]
        self.assertEqual(len(memory), 1)
        self.assertGreater(float(memory[0].split()[3]), 0.0)
        self.assertFalse(steps_of(lines))
        self.assertEqual(checkpoints("compile"), [])

    def test_compile_only_for_a_tpu_slice(self):
        lines, error = run_here(["model_name=reference-tiny", "per_device_batch_size=4", "max_target_length=128",
                                 "compile_topology=v5e-4", "--compile-only"])
        self.assertIsNone(error)
        self.assertIn("Compiling for v5e-4 x 1: topology v5e:2x2, chip config default, chips per host (2, 2, 1), "
                      "wrap (False, False, False)", lines)
        self.assertTrue(any(l.startswith("Mesh (4 tpu devices, 1 slice): diloco: 1, data: 1, stage: 1, fsdp: 4,")
                            for l in lines), lines)
        memory = [l for l in lines if l.startswith("Total memory size: ")]
        self.assertEqual(len(memory), 1)
        self.assertGreater(float(memory[0].split()[3]), 0.0)


class ProcessTest(unittest.TestCase):
    def test_unknown_key_fails_before_jax_is_imported(self):
        code = ("import sys; sys.path.insert(0, %r)\nfrom podium_reference import train\n"
                "try:\n    train.main(['t', 'dataset_path=/d', 'weight_decay=0.1'], sigterm_guard=False)\n"
                "except ValueError as e:\n    print('jax' in sys.modules, e)\n    sys.exit(1)\n" % HERE)
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertRegex(p.stdout, r"^False 'weight_decay' not in valid fields: ")

    def test_a_mesh_jax_cannot_build_fails_inside_jax_with_exit_code_1(self):
        p = popen(args("mesh", ici_tensor_parallelism=3), devices=4)
        out, err = p.communicate(timeout=300)
        self.assertEqual(p.returncode, 1, out + err)
        self.assertIn("Traceback (most recent call last):", err)
        self.assertRegex(err, r'File ".*/jax/_src/mesh_utils.py", line \d+, in create_device_mesh')
        self.assertRegex(err, r"\nValueError: Number of devices 4 must equal the product of mesh_shape "
                              r"\(1, 1, 1, 1, 1, 1, 1, 1, 3, 1, 1, 1\)\n")

    def test_an_out_of_memory_compile_for_a_tpu_slice_fails_with_the_compilers_error(self):
        p = subprocess.Popen([sys.executable, "-u", os.path.join(HERE, "train.py"), "model_name=reference-small",
                              "per_device_batch_size=16", "max_target_length=4096", "compile_topology=v5e-4",
                              "--compile-only"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        out, err = p.communicate(timeout=300)
        self.assertEqual(p.returncode, 1, out + err)
        self.assertRegex(err, r"RESOURCE_EXHAUSTED: Ran out of memory on HBM, the total memory required for HLO "
                              r"temporaries \(\d+\.\d+G\) exceeds available HBM \(15\.75G\)")
        self.assertNotIn("Total memory size", out)

    def test_sigterm_exits_at_once_without_saving(self):
        p = popen(args("sigterm", dataset="data.txt", steps=500, checkpoint_period=3))
        lines = []
        sent = None
        for line in p.stdout:
            lines.append(line.rstrip("\n"))
            if line.startswith("completed step: 4,") and sent is None:
                p.send_signal(signal.SIGTERM)
                sent = time.monotonic()
        _, err = p.communicate(timeout=60)
        self.assertEqual(p.returncode, -signal.SIGTERM, "\n".join(lines) + err)
        self.assertLess(time.monotonic() - sent, 20)
        at = lines.index("Received SIGTERM: exiting without saving a checkpoint (latest finished checkpoint: 3)")
        self.assertFalse([l for l in lines[at + 1:] if "completed step" in l or "checkpoint" in l])
        self.assertEqual([c for c in checkpoints("sigterm") if c.isdigit()], ["3"])

    def test_two_processes_join_with_jax_distributed_and_shard_fsdp_and_data(self):
        # Two slices of one process each (MEGASCALE_*): data=2 over DCN (the slices exchange
        # their slice ids), fsdp=2 over each process's 2 devices.
        port = free_port()
        procs = [popen(args("two", steps=4, checkpoint_period=2, ici_fsdp_parallelism=2, dcn_data_parallelism=2),
                       devices=2, extra_env={"JAX_COORDINATOR_ADDRESS": f"127.0.0.1:{port}",
                                             "JAX_PROCESS_COUNT": "2", "JAX_PROCESS_ID": str(r),
                                             "MEGASCALE_NUM_SLICES": "2", "MEGASCALE_SLICE_ID": str(r)})
                 for r in range(2)]
        outs = [p.communicate(timeout=600) for p in procs]
        for r, (p, (out, err)) in enumerate(zip(procs, outs)):
            self.assertEqual(p.returncode, 0, out + err)
            lines = out.splitlines()
            self.assertIn(f"jax.distributed initialized: process {r} of 2, 4 global devices (2 local)", lines)
            self.assertTrue(any(l.startswith("Mesh (2 slices): diloco: 1, data: 2, stage: 1, fsdp: 2,") for l in lines))
            steps = steps_of(lines)
            self.assertEqual(sorted(steps), [0, 1, 2, 3])
            # The same global batch as the one-process run on 4 devices: the same losses, up to
            # the order of floating-point sums across processes.
            for step, m in steps.items():
                self.assertAlmostEqual(float(m.group(6)), float(baseline()[1][step].group(6)), delta=0.0015)
            self.assertEqual("Saved a checkpoint at step 4." in lines, r == 0)
        self.assertEqual(checkpoints("two"), ["2", "4"])


if __name__ == "__main__":
    unittest.main()
