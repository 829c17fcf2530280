"""Child processes of a bench: each with its output in a log file, waited for with a deadline,
and stopped (SIGTERM, then SIGKILL) by the script that started it."""

import os
import pwd
import re
import signal
import socket
import subprocess
import time


def free_port():
    """A TCP port on 127.0.0.1 that was free a moment ago (bound once and released)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def clean_env(extra=None):
    """This process's environment without PODIUM_* (a developer's shell must not change what a
    bench measures), plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PODIUM_")}
    env.update(extra or {})
    return env


def current_user():
    return pwd.getpwuid(os.getuid()).pw_name


def proc_status(pid):
    """/proc/<pid>/status as {field: value text}."""
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            out[key] = value.strip()
    return out


def rss_mb(pid, gone=float("nan")):
    """Resident memory of `pid` in MB; `gone` when it has exited."""
    try:
        return int(proc_status(pid)["VmRSS"].split()[0]) / 1024.0
    except (OSError, KeyError, ValueError, IndexError):
        return gone


# Every Process started by this bench, in order: kill_started() ends those still running (an
# exit handler's last word, after a failure or Ctrl-C).
STARTED = []


def kill_started():
    for p in reversed(STARTED):
        try:
            p.kill()
        except Exception:  # noqa: BLE001 - best effort at exit
            pass


class Process:
    """One child process with stdout and stderr in `log_path`, stdin /dev/null.

    new_session: the child leads a process group of its own (a signal meant for the bench's
    terminal does not reach it, and stop() ends its children with it)."""

    def __init__(self, name, argv, log_path, env=None, new_session=False, cwd=None,
                 append=False):
        self.name, self.argv, self.log_path = name, list(argv), log_path
        self.env = clean_env() if env is None else env
        self.new_session, self.cwd, self.append = new_session, cwd, append
        self.popen = None

    def start(self):
        with open(self.log_path, "ab" if self.append else "wb") as log:
            self.popen = subprocess.Popen(self.argv, stdout=log, stderr=subprocess.STDOUT,
                                          stdin=subprocess.DEVNULL, env=self.env, cwd=self.cwd,
                                          start_new_session=self.new_session)
        if self not in STARTED:
            STARTED.append(self)
        return self

    @property
    def pid(self):
        return self.popen.pid if self.popen else None

    @property
    def returncode(self):
        return self.popen.poll() if self.popen else None

    def running(self):
        return self.popen is not None and self.popen.poll() is None

    def wait_until(self, ready, timeout, what):
        """Polls ready() until it gives a true value, which it returns. Raises RuntimeError
        with the log's tail when the process exits first, or (after killing it) when `timeout`
        seconds pass."""
        deadline = time.monotonic() + timeout
        while True:
            value = ready()
            if value:
                return value
            if not self.running():
                raise RuntimeError(f"{self.name} exited (status {self.returncode}) before "
                                   f"{what}; log tail:\n{self.log_tail(30)}")
            if time.monotonic() > deadline:
                self.kill()
                raise RuntimeError(f"{self.name}: not {what} within {timeout} s; log tail:\n"
                                   f"{self.log_tail(30)}")
            time.sleep(0.05)

    def wait_for_line(self, pattern, timeout, what=None):
        """The first match of `pattern` in the log (wait_until)."""
        regex = re.compile(pattern)
        return self.wait_until(lambda: regex.search(self.log_text()), timeout,
                               what or f"it printed /{pattern}/")

    def _signal(self, sig):
        if self.new_session:
            try:
                os.killpg(self.popen.pid, sig)
                return
            except ProcessLookupError:
                pass
        self.popen.send_signal(sig)

    def kill(self):
        """SIGKILL and reap; the exit status (negative signal number)."""
        if not self.running():
            return self.returncode
        self._signal(signal.SIGKILL)
        return self.popen.wait(timeout=30)

    def stop(self, grace=30):
        """SIGTERM, then SIGKILL when it has not exited within `grace` seconds; the status."""
        if not self.running():
            return self.returncode
        self._signal(signal.SIGTERM)
        try:
            return self.popen.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            return self.kill()

    def log_text(self):
        try:
            with open(self.log_path, "rb") as f:
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def log_tail(self, n=30):
        return "\n".join(self.log_text().splitlines()[-n:])
