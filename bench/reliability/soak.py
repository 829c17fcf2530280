"""Crash soak: a real podium-server on a private PostgreSQL, 4 podium-worker agents (cluster
`cpu-2`, 2 slices) training reference runs, and the server killed with SIGKILL at random moments
(restarted each time on the same port). Agents (with their ranks: a host dying) and single rank
processes are killed at random too.

At the end every stored log line is compared with what the agent read (its kept copy,
logs/<attempt>/rank-<r>.log), every step line and metrics row is counted, and every run and
attempt must have ended:

- lost: a line the agent read and that must be in the database but is not. Must be: every line
  of a rank the server recorded as `exited` (the agent reports the exit only once every line of
  the rank was acknowledged), and every line read by an agent process that was never killed (its
  spool delivers them). A killed agent's unacknowledged lines are not counted (nothing had
  acknowledged them), and are reported apart. Also lost: a gap in the stored seq numbers, a step
  the workload printed (it prints every step once, in order) missing between two stored ones,
  and a stored step line of rank 0 without its metrics row.
- duplicated: a stored line the agent did not read at that position (more lines stored than
  read, or another line at that seq), a step line stored twice for one (attempt, rank), and a
  metrics row for a step rank 0 has no stored line for.
"""

import os
import random
import subprocess
import sys
import time

import common as c
from common import say


def make_dataset(path, size):
    subprocess.run([sys.executable,
                    os.path.join(c.ROOT, "engine/workloads/reference/make_dataset.py"), path,
                    "--size", size], check=True, capture_output=True, timeout=120)


class Soak:
    def __init__(self, work, kills, seed, max_minutes, steps, pg_dir, settings=()):
        self.work = work
        self.kills_wanted = kills
        self.rng = random.Random(seed)
        self.deadline = c.Deadline(max_minutes * 60)
        self.steps = steps
        self.pg = c.Postgres(pg_dir)
        self.admin = c.random_token("pdm_")
        self.runs = {}  # run id -> {"steps"}
        self.agents = {}  # (slice, host) -> Agent
        self.generations = {}  # (slice, host) -> [[start, end or None, killed]]
        self.kills = {"server": 0, "agent": 0, "rank": 0}
        self.secrets = [self.admin]
        self.failures = []
        self.extra_settings = list(settings)

    # ---- setup ----

    def start(self):
        os.makedirs(self.work, exist_ok=True)
        self.pg.start()
        self.db = "soak_%s" % os.urandom(4).hex()
        url = self.pg.create_database(self.db)
        out = os.path.join(self.work, "output")
        # Coordinator ports of this harness's own range (the e2e tests use 10000-32000 by pid).
        first = 40000 + (os.getpid() % 200) * 20
        self.server = c.Server(os.path.join(self.work, "server"), url, self.admin, settings=[
            "scheduler.coordinator_port_first=%d" % first,
            "scheduler.coordinator_port_count=20",
            # The reference workload runs under this harness's own interpreter: the project's
            # environment (bench/reliability/run.sh), which has JAX.
            "workloads.python=" + sys.executable,
            "workloads.reference_dir=" + os.path.join(c.ROOT, "engine/workloads/reference"),
            "workloads.output_dir=" + out,
        ] + self.extra_settings)
        self.server.start()
        c.require(self.server.api("POST", "/api/v1/clusters",
                                  {"name": "soak", "accelerator": "cpu-2", "num_slices": 2}),
                  201, "create cluster")
        token = c.require(self.server.api("POST", "/api/v1/clusters/soak/worker-tokens", {}), 201,
                          "worker token")["token"]
        self.secrets.append(token)
        ds = os.path.join(self.work, "dataset.txt")
        make_dataset(ds, "2M")
        c.require(self.server.api("POST", "/api/v1/datasets",
                                  {"name": "soak-data", "uri": ds, "format": "text"}), 201,
                  "dataset")
        for s in range(2):
            for h in range(2):
                a = c.Agent(os.path.join(self.work, "agents", "s%dh%d" % (s, h)),
                            self.server.url, token, "soak", s, h)
                self.agents[(s, h)] = a
                self.start_agent(a)
        ok = c.wait_until(lambda: self.healthy_hosts() == 4, 60, 0.3)
        if not ok:
            raise RuntimeError("the 4 agents did not register within 60 s")

    def start_agent(self, a):
        a.start()
        self.generations.setdefault((a.slice, a.host), []).append([time.time(), None, False])

    def healthy_hosts(self):
        st, j, _, _ = self.server.api("GET", "/api/v1/clusters/soak", timeout=5)
        return j.get("hosts", {}).get("healthy", 0) if st == 200 else 0

    # ---- load ----

    def submit(self):
        n = len(self.runs)
        spec = {"name": "soak-%03d" % n, "cluster": "soak", "dataset": "soak-data",
                "model": "reference-tiny", "workload": "reference", "steps": self.steps,
                "per_device_batch_size": 4, "max_target_length": 64,
                "checkpoint_period": 10, "max_restarts": 20}
        st, j, raw, _ = self.server.api("POST", "/api/v1/runs", spec, timeout=15)
        if st == 201:
            self.runs[j["id"]] = {"steps": self.steps}
            say("submitted", j["id"], spec["name"])
        else:
            say("submit answered", st, raw[:200])

    def active_runs(self):
        st, j, _, _ = self.server.api("GET", "/api/v1/runs?cluster=soak&limit=500", timeout=10)
        if st != 200:
            return None
        return [r for r in j["items"] if r["state"] not in ("succeeded", "failed", "cancelled")]

    def top_up(self):
        active = self.active_runs()
        if active is not None and len(active) < 2:
            for _ in range(2 - len(active)):
                self.submit()

    # ---- chaos ----

    def kill_server(self):
        self.server.kill()
        self.kills["server"] += 1

    def kill_agent(self):
        key = self.rng.choice(sorted(self.agents))
        a = self.agents[key]
        ranks = a.kill_host()
        self.generations[key][-1][1] = time.time()
        self.generations[key][-1][2] = True
        self.kills["agent"] += 1
        say("killed %s and its ranks %s" % (a.name, ranks))
        return a

    def kill_rank(self):
        candidates = [(a, p) for a in self.agents.values() for p in a.rank_pids()]
        if not candidates:
            return
        a, pid = self.rng.choice(candidates)
        c.kill_group_and_pid(pid)
        self.kills["rank"] += 1
        say("killed rank process %d of %s" % (pid, a.name))

    def chaos(self):
        for i in range(self.kills_wanted):
            if self.deadline.passed():
                self.failures.append("time limit reached after %d of %d server kills" %
                                     (i, self.kills_wanted))
                break
            self.top_up()
            # At a random moment: mid-batch, mid-poll, mid-dispatch, mid-startup.
            time.sleep(self.rng.uniform(0.5, 6.0))
            self.kill_server()
            down_agent = None
            if self.rng.random() < 0.15:
                down_agent = self.kill_agent()
            if self.rng.random() < 0.15:
                self.kill_rank()
            time.sleep(self.rng.uniform(0.0, 2.0))
            t0 = time.monotonic()
            self.server.start()
            say("server kill %d/%d: back in %.2f s" % (i + 1, self.kills_wanted,
                                                       time.monotonic() - t0))
            if down_agent is not None:
                time.sleep(self.rng.uniform(0.5, 3.0))
                self.start_agent(down_agent)

    def drain(self, seconds):
        """No more chaos or submissions: every run must end by itself."""
        d = c.Deadline(seconds)
        while not d.passed():
            active = self.active_runs()
            if active == []:
                return True
            time.sleep(2)
        return False

    def stop_agents(self):
        for key, a in self.agents.items():
            st = a.stop(grace=60)
            self.generations[key][-1][1] = time.time()
            if st != 0:
                self.failures.append("%s exited %s on SIGTERM" % (a.name, st))

    # ---- the check ----

    def agent_killed_while_writing(self, key, path):
        """True when the agent process that wrote the rank's local copy was killed: the copy's
        last write falls within that process's lifetime (only it writes that file)."""
        try:
            t = os.stat(path).st_mtime
        except OSError:
            return False
        for g_start, g_end, killed in self.generations.get(key, []):
            if g_start - 0.5 <= t and (g_end is None or t <= g_end + 0.5):
                return killed
        return False

    def stored_lines(self, run_id, attempt_id, rank):
        """A rank's lines as the log API gives them back (rank 0's step lines are stored once,
        as metrics rows, and rebuilt by the API: reading the table would miss them)."""
        out, cursor = [], ""
        while True:
            path = "/api/v1/runs/%s/logs?attempt=%s&rank=%d&limit=5000" % (run_id, attempt_id,
                                                                           rank)
            if cursor:
                path += "&cursor=" + cursor
            st, j, raw, _ = self.server.api("GET", path, timeout=30)
            if st != 200:
                raise RuntimeError("GET %s answered %s: %s" % (path, st, raw[:200]))
            out += [{"seq": item["seq"], "line": item["line"]} for item in j["items"]]
            cursor = j.get("next_cursor")
            if not cursor:
                return out

    def check(self):
        ids = ",".join("'%s'" % r for r in self.runs)
        runs = self.pg.query_json(self.db, "SELECT id, state, failure_class, restarts, "
                                           "recoveries FROM runs WHERE id IN (%s)" % ids)
        attempts = self.pg.query_json(
            self.db, "SELECT id, run_id, number, state, resumed_from_step FROM attempts "
                     "WHERE run_id IN (%s) ORDER BY run_id, number" % ids)
        hosts = self.pg.query_json(
            self.db, "SELECT h.attempt_id, h.rank, h.slice, h.host, h.state, h.exit_code, "
                     "h.signal FROM attempt_hosts h "
                     "JOIN attempts a ON a.id = h.attempt_id WHERE a.run_id IN (%s)" % ids)
        res = {"lines_checked": 0, "steps_checked": 0, "lost": 0, "duplicated": 0,
               "unacknowledged_at_host_kill": 0, "unacknowledged_steps": 0, "mismatched": 0}
        problems = []
        for r in runs:
            if r["state"] != "succeeded":
                problems.append("run %s ended %s (%s)" % (r["id"], r["state"],
                                                           r["failure_class"]))
        for a in attempts:
            if a["state"] in ("pending", "starting", "running"):
                problems.append("attempt %s of %s is stuck in %s" % (a["id"], a["run_id"],
                                                                      a["state"]))
        for h in hosts:
            if h["state"] in ("pending", "delivered", "running"):
                problems.append("rank %d of attempt %s is stuck in %s" % (h["rank"],
                                                                           h["attempt_id"],
                                                                           h["state"]))
        attempt_by_id = {a["id"]: a for a in attempts}
        unacked_steps = {}  # run id -> steps only in a killed host's unacknowledged tail
        for h in hosts:
            att = attempt_by_id[h["attempt_id"]]
            key = (h["slice"], h["host"])
            agent = self.agents[key]
            stored = self.stored_lines(att["run_id"], h["attempt_id"], h["rank"])
            local = agent.local_lines(h["attempt_id"], h["rank"])
            where = "attempt %s (#%d of %s) rank %d on %s" % (h["attempt_id"], att["number"],
                                                             att["run_id"], h["rank"], agent.name)
            if local is None:
                if stored:
                    problems.append("%s: %d lines stored, no local copy" % (where, len(stored)))
                    res["duplicated"] += len(stored)
                continue
            res["lines_checked"] += len(stored)
            lost_before = res["lost"]
            by_seq = {row["seq"]: row["line"] for row in stored}
            # Lines the agent read that are not stored: a gap before the last stored line is
            # lost whatever happened (the agent delivers in order); a missing tail is lost unless
            # the agent that read it was killed before it could deliver it.
            last = max(by_seq) if by_seq else -1
            gaps = [i for i in range(min(last, len(local) - 1) + 1) if i not in by_seq]
            tail = max(len(local) - (last + 1), 0)
            if gaps:
                res["lost"] += len(gaps)
                problems.append("%s: %d lines missing before seq %d (first: seq %d)" %
                                (where, len(gaps), last, gaps[0]))
            for seq in sorted(by_seq):
                if seq >= len(local):
                    res["duplicated"] += 1  # stored, but the agent never read such a line
                elif by_seq[seq] != local[seq]:
                    res["mismatched"] += 1
                    res["duplicated"] += 1
                    if res["mismatched"] <= 5:
                        problems.append("%s: seq %d stored %r, the agent read %r" %
                                        (where, seq, by_seq[seq][:120], local[seq][:120]))
            if last >= len(local):
                problems.append("%s: seq up to %d stored, the agent read %d lines" %
                                (where, last, len(local)))
            if tail > 0:
                killed = self.agent_killed_while_writing(
                    key, agent.local_path(h["attempt_id"], h["rank"]))
                if h["state"] == "exited" or not killed:
                    res["lost"] += tail
                    problems.append("%s (%s, agent killed: %s): %d lines stored, the agent read "
                                    "%d; first missing: %r" %
                                    (where, h["state"], killed, len(stored), len(local),
                                     local[last + 1][:120]))
                else:
                    res["unacknowledged_at_host_kill"] += tail
                    if h["rank"] == 0:
                        # Steps whose lines died with their host: if a checkpoint saved after them
                        # let the next attempt skip them, no attempt stores their metrics.
                        unacked_steps.setdefault(att["run_id"], set()).update(
                            s for s in (c.step_of(x) for x in local[last + 1:]) if s is not None)
            # Step checks below explain a loss the line check found; they add to `lost` only
            # when that check found none for this rank (no loss is counted twice).
            lines_lost_here = res["lost"] > lost_before
            # The workload prints each step once, in order: stored step lines are consecutive.
            steps = [s for s in (c.step_of(row["line"]) for row in stored) if s is not None]
            seen = set()
            for prev, cur in zip([None] + steps, steps):
                if cur in seen:
                    res["duplicated"] += 1
                    problems.append("%s: step %d stored twice" % (where, cur))
                elif prev is not None and cur != prev + 1:
                    if not lines_lost_here:
                        res["lost"] += max(cur - prev - 1, 0)
                    problems.append("%s: steps %d then %d" % (where, prev, cur))
                seen.add(cur)
            if att["state"] == "succeeded":
                first = att["resumed_from_step"] or 0
                want = list(range(first, self.runs[att["run_id"]]["steps"]))
                if steps != want:
                    if not lines_lost_here:
                        res["lost"] += len(set(want) - set(steps))
                    problems.append("%s: succeeded, but its stored steps are %s..%s (%d), "
                                    "expected %d..%d" % (where, steps[:1], steps[-1:],
                                                         len(steps), first, want[-1]))
            if h["rank"] == 0:
                rows = self.pg.query_json(
                    self.db, "SELECT step FROM metrics WHERE attempt_id = '%s' ORDER BY step" %
                             h["attempt_id"])
                metric_steps = [m["step"] for m in rows]
                res["steps_checked"] += len(metric_steps)
                for s in sorted(seen - set(metric_steps)):
                    res["lost"] += 1
                    problems.append("%s: step %d stored as a line but has no metrics row" %
                                    (where, s))
                for s in sorted(set(metric_steps) - seen):
                    res["duplicated"] += 1
                    problems.append("%s: metrics row for step %d without its line" % (where, s))
        # Every succeeded run has every step's metrics (over its attempts).
        for r in runs:
            if r["state"] != "succeeded":
                continue
            rows = self.pg.query_json(self.db, "SELECT DISTINCT step FROM metrics WHERE run_id "
                                               "= '%s' ORDER BY step" % r["id"])
            got = [m["step"] for m in rows]
            want = list(range(self.runs[r["id"]]["steps"]))
            missing = set(want) - set(got)
            excused = missing & unacked_steps.get(r["id"], set())
            res["unacknowledged_steps"] += len(excused)
            if missing - excused:
                if not any(r["id"] in p for p in problems):  # else already counted above
                    res["lost"] += len(missing - excused)
                problems.append("run %s: metrics cover %d of %d steps" % (r["id"], len(got),
                                                                          len(want)))
        # What a surviving agent still holds in its spool was never acknowledged.
        for a in self.agents.values():
            spool = os.path.join(a.workdir, "spool")
            left = [f for f in (os.listdir(spool) if os.path.isdir(spool) else [])
                    if f.endswith(".seg")]
            if left:
                problems.append("%s left spool segments after a clean stop: %s" % (a.name, left))
        return res, problems, runs, attempts


def run(args, work):
    soak = Soak(work, args.kills, args.seed, args.soak_minutes, args.steps,
                os.path.join(args.pg_root, "soak"))
    soak.start()
    say("soak: %d server kills, 4 agents, runs of %d steps" % (args.kills, args.steps))
    soak.chaos()
    # Runs submitted during the chaos must now finish on their own.
    ended = soak.drain(args.drain_seconds)
    if not ended:
        soak.failures.append("runs still active %d s after the last kill" % args.drain_seconds)
    soak.stop_agents()
    res, problems, runs, attempts = soak.check()
    logs = [p for a in soak.agents.values() for p in a.logs] + soak.server.logs
    leaks = c.find_secrets(soak.secrets, logs)
    # Host credentials the agents were issued (pdh_…), kept in their workdirs.
    creds = []
    for a in soak.agents.values():
        try:
            with open(os.path.join(a.workdir, "credential")) as f:
                creds.append(f.read().strip())
        except OSError:
            pass
    leaks += c.find_secrets(creds, logs, check_ps=False)
    soak.server.terminate()
    problems = soak.failures + problems + leaks
    summary = {
        "kills": soak.kills["server"],
        "lines_checked": res["lines_checked"],
        "steps_checked": res["steps_checked"],
        "lost": res["lost"],
        "duplicated": res["duplicated"],
    }
    details = dict(summary)
    details.update({"agent_kills": soak.kills["agent"], "rank_kills": soak.kills["rank"],
                    "runs": len(runs), "attempts": len(attempts),
                    "runs_succeeded": sum(1 for r in runs if r["state"] == "succeeded"),
                    "unacknowledged_at_host_kill": res["unacknowledged_at_host_kill"],
                    "steps_only_in_unacknowledged_lines": res["unacknowledged_steps"],
                    "secrets_in_logs_or_ps": len(leaks), "problems": problems[:50]})
    return summary, details, problems
