"""End-to-end tests of the reference trainer as Podium runs it: separate processes, real
files, real gloo rendezvous on 127.0.0.1, real signals. Datasets are generated in temporary
directories."""

import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest

import make_dataset
from podium_reference import catalog

HERE = os.path.dirname(os.path.abspath(__file__))
TRAIN = os.path.join(HERE, "train.py")
BASE = os.path.join(HERE, "base.yml")
PYTHON = sys.executable  # /usr/bin/python3 under ctest: the interpreter that has torch

# MaxText's step line, exactly: fixed field order, 3 decimals, integer total_weights.
STEP_LINE = re.compile(
    r"^completed step: (?P<step>\d+), seconds: (?P<seconds>\d+\.\d{3}), "
    r"TFLOP/s/device: (?P<tflops>\d+\.\d{3}), Tokens/s/device: (?P<tokens>\d+\.\d{3}), "
    r"total_weights: (?P<weights>\d+), loss: (?P<loss>\d+\.\d{3})$"
)


def step_lines(stdout):
    return [m.groupdict() for m in map(STEP_LINE.match, stdout.splitlines()) if m]


def losses(stdout):
    return {int(s["step"]): s["loss"] for s in step_lines(stdout)}


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def clean_env(**extra):
    """The test's own environment minus any gang variables, plus `extra`."""
    gang = {"RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT", "JOBSET_NAME", "JAX_COORDINATOR_ADDRESS",
            "JAX_COORDINATOR_PORT", "JAX_PROCESS_ID", "JAX_PROCESS_COUNT"}
    env = {k: v for k, v in os.environ.items() if k not in gang}
    # One intra-op thread: several trainers share the test machine's cores, and OpenMP
    # threads spinning against each other would only add CPU time.
    env["OMP_NUM_THREADS"] = "1"
    env.update({k: str(v) for k, v in extra.items()})
    return env


class TrainerTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls._tmp = tempfile.TemporaryDirectory()
        cls.tmp = cls._tmp.name
        cls.dataset = os.path.join(cls.tmp, "data.txt")
        with open(cls.dataset, "wb") as f:
            f.write(make_dataset.generate(300 * 1024, seed=0))
        cls.out = os.path.join(cls.tmp, "out")
        # The uninterrupted reference run several tests compare against (Podium's acceptance
        # shape: 40 steps, checkpoint_period 10).
        cls.full = cls.run_trainer(["run_name=full", "steps=40", "checkpoint_period=10"])

    @classmethod
    def tearDownClass(cls):
        cls._tmp.cleanup()

    @classmethod
    def args(cls, overrides):
        return [PYTHON, TRAIN, BASE, f"base_output_directory={cls.out}", f"dataset_path={cls.dataset}"] + overrides

    @classmethod
    def run_trainer(cls, overrides, env=None, timeout=120):
        return subprocess.run(cls.args(overrides), env=env or clean_env(), capture_output=True, text=True,
                              timeout=timeout)

    def ckpts(self, run_name):
        root = os.path.join(self.out, run_name, "checkpoints")
        return sorted(os.listdir(root)) if os.path.isdir(root) else []

    def test_log_lines_have_maxtext_shape_and_loss_falls(self):
        r = self.full
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        steps = step_lines(r.stdout)
        self.assertEqual([int(s["step"]) for s in steps], list(range(40)))
        self.assertEqual(len([l for l in lines if l.startswith("completed step:")]), 40, "every step line matches")
        self.assertTrue(all(s["weights"] == str(2 * 64) for s in steps))
        self.assertIn("number parameters: 0.000 billion", lines)
        self.assertTrue(any(re.fullmatch(r"Per train step: Total TFLOPs: \d+\.\d{2} split as \d+\.\d{2}% learnable "
                                         r"weight flops and \d+\.\d{2}% attention flops", l) for l in lines))
        self.assertIn("No existing checkpoints found, not restoring checkpoint.", lines)
        for n in (10, 20, 30, 40):
            self.assertIn(f"Saved a checkpoint at step {n}.", lines)
        self.assertEqual(self.ckpts("full"), ["10", "20", "30", "40"])
        first, last = float(steps[0]["loss"]), sum(float(s["loss"]) for s in steps[-5:]) / 5
        self.assertGreater(first, 5.0)  # ~ln(256) at initialisation
        self.assertLess(last, first - 2.0, "loss must fall clearly over 40 steps")

    def test_tflops_per_device_is_model_flops_over_step_time(self):
        flops, learnable, attention = catalog.training_flops_per_device(catalog.CATALOG["reference-tiny"], 2, 64, 1)
        self.assertIn(f"Per train step per device: {flops:,.0f} FLOPs ({learnable:,.0f} learnable weight, "
                      f"{attention:,.0f} attention)", self.full.stdout.splitlines())
        for s in step_lines(self.full.stdout):
            seconds = float(s["seconds"])
            # Only the rounding of the printed figures may separate them (a formula off by a
            # constant factor would not fit across 40 steps of varying duration).
            # The printed seconds are rounded to 3 decimals: the true time t lies within 0.0005 of
            # them, so X/t and X/seconds differ by at most X*0.0005/(seconds*(seconds-0.0005))
            # (the exact bound; the first-order X*0.0005/seconds**2 is too tight for short steps),
            # plus 0.0005 for the rounding of the printed figure itself.
            def bound(numerator):
                return 0.0005 + numerator * 0.0005 / (seconds * (seconds - 0.0005))
            expected = flops / 1e12 / seconds
            self.assertAlmostEqual(float(s["tflops"]), expected, delta=bound(flops / 1e12))
            tokens = 2 * 64 / seconds
            self.assertAlmostEqual(float(s["tokens"]), tokens, delta=bound(2 * 64))

    def test_sigterm_then_resume_reproduces_the_uninterrupted_run(self):
        p = subprocess.Popen(self.args(["run_name=resume", "steps=20", "checkpoint_period=10"]), env=clean_env(),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        seen = []
        for line in p.stdout:
            seen.append(line)
            if line.startswith("completed step: 14,"):
                p.send_signal(signal.SIGTERM)
                sent = time.monotonic()
                break
        rest, _ = p.communicate(timeout=30)
        self.assertLess(time.monotonic() - sent, 5, "SIGTERM must end the run promptly")
        self.assertEqual(p.returncode, -signal.SIGTERM)
        self.assertIn("Received SIGTERM: exiting without saving a checkpoint", rest)
        self.assertEqual(self.ckpts("resume"), ["10"])

        # A save that never finished must not be taken for checkpoint 20.
        stale = os.path.join(self.out, "resume", "checkpoints", "20.orbax-checkpoint-tmp-1712345678901234")
        os.makedirs(stale)
        with open(os.path.join(stale, "state.pt"), "wb") as f:
            f.write(b"truncated")

        r = self.run_trainer(["run_name=resume", "steps=20", "checkpoint_period=10"])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("restoring from this run's directory step 10", r.stdout.splitlines())
        resumed = losses(r.stdout)
        self.assertEqual(sorted(resumed), list(range(10, 20)), "redoes from step 10")
        full = losses(self.full.stdout)
        self.assertEqual(resumed, {k: full[k] for k in range(10, 20)})
        self.assertEqual(losses("".join(seen)), {k: full[k] for k in range(15)})
        self.assertEqual(self.ckpts("resume"), ["10", "20", "20.orbax-checkpoint-tmp-1712345678901234"])

    def test_stop_iteration_when_data_runs_out(self):
        small = os.path.join(self.tmp, "small.txt")
        with open(small, "wb") as f:
            f.write(make_dataset.generate(7 * 2 * 65 + 100, seed=0))  # 7 full steps and a partial one
        # The module form of the entry point, as Podium may launch it.
        r = subprocess.run([PYTHON, "-m", "podium_reference.train", BASE, f"base_output_directory={self.out}",
                            f"dataset_path={small}", "run_name=short", "steps=20", "checkpoint_period=5"],
                           env=clean_env(PYTHONPATH=HERE), capture_output=True, text=True, timeout=120, cwd=self.tmp)
        self.assertEqual(r.returncode, 1)
        self.assertEqual(sorted(losses(r.stdout)), list(range(7)))
        self.assertIn("Traceback (most recent call last):", r.stderr)
        self.assertRegex(r.stderr, r"(?m)^StopIteration: dataset .* exhausted: step 7 needs bytes")
        self.assertEqual(self.ckpts("short"), ["5"])

    def test_two_ranks_with_gloo(self):
        port = free_port()
        procs = [subprocess.Popen(self.args(["run_name=ddp", "steps=3", "checkpoint_period=2", "per_device_batch_size=1"]),
                                  env=clean_env(MASTER_ADDR="127.0.0.1", MASTER_PORT=port, RANK=rank, WORLD_SIZE=2),
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for rank in range(2)]
        outs = [p.communicate(timeout=120) for p in procs]
        for p, (stdout, stderr) in zip(procs, outs):
            self.assertEqual(p.returncode, 0, stderr)
        steps = [step_lines(stdout) for stdout, _ in outs]
        self.assertEqual([int(s["step"]) for s in steps[0]], [0, 1, 2])
        self.assertEqual([s["loss"] for s in steps[0]], [s["loss"] for s in steps[1]], "ranks train one model")
        self.assertTrue(all(s["weights"] == str(2 * 1 * 64) for s in steps[0] + steps[1]))
        # Only rank 0 writes checkpoints (2, then the final 3).
        self.assertIn("Saved a checkpoint at step 2.", outs[0][0])
        self.assertNotIn("Saved a checkpoint", outs[1][0])
        self.assertEqual(self.ckpts("ddp"), ["2", "3"])
        # Data parallelism is real: 2 ranks x 1 sequence train on the same global batch as
        # the reference run's 1 process x 2 sequences, so the losses agree up to summation order.
        for a, b in zip(steps[0], step_lines(self.full.stdout)):
            self.assertAlmostEqual(float(a["loss"]), float(b["loss"]), delta=0.0025)

    def test_missing_peer_fails_instead_of_hanging(self):
        start = time.monotonic()
        r = self.run_trainer(["run_name=alone", "distributed_timeout_seconds=2"], timeout=60,
                             env=clean_env(JAX_COORDINATOR_ADDRESS=f"127.0.0.1:{free_port()}", JAX_PROCESS_ID=1,
                                           JAX_PROCESS_COUNT=2))
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertLess(time.monotonic() - start, 45)
        self.assertEqual(step_lines(r.stdout), [])

    def test_unknown_key_is_rejected(self):
        r = self.run_trainer(["run_name=bad", "weight_decay=0.1"])
        self.assertEqual(r.returncode, 1)
        self.assertIn("ValueError: 'weight_decay' not in valid fields", r.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.out, "bad")))


if __name__ == "__main__":
    unittest.main()
