#!/usr/bin/env bash
# Installs what Podium needs from Debian's packages, PyPI (one virtual environment, .venv/) and
# the npm registry. Idempotent: what is already present is not touched, so a second run costs
# seconds. Usage: scripts/setup.sh [--tools] [--maxtext]
#   --tools    also the bench/test tools (requirements/README.md)
#   --maxtext  also a separate environment with real MaxText 0.2.0 (.venv-maxtext/, or
#              $PODIUM_MAXTEXT_VENV) for the MaxText e2e test (docs/maxtext-on-cpu.md)
set -euo pipefail
with_tools=0
with_maxtext=0
for arg in "$@"; do
  case "$arg" in
    --tools) with_tools=1 ;;
    --maxtext) with_maxtext=1 ;;
    *) echo "setup: unknown option $arg (usage: scripts/setup.sh [--tools] [--maxtext])" >&2; exit 2 ;;
  esac
done

DEBIAN_PACKAGES=(
  build-essential cmake pkg-config ninja-build mold ccache git curl ca-certificates procps
  libboost1.81-dev
  nlohmann-json3-dev libpq-dev libspdlog-dev libfmt-dev libyaml-cpp-dev libcli11-dev
  libsodium-dev libssl-dev zlib1g-dev
  postgresql-15 postgresql-client-15
  googletest libgtest-dev libgmock-dev libbenchmark-dev
  clang-format clang libclang-rt-14-dev
  python3 python3-venv
  chromium
  slurm-wlm munge
  systemd
)

missing=()
for p in "${DEBIAN_PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

# Node.js may come from Debian (nodejs + npm) or be preinstalled with its own npm;
# Debian's npm conflicts with the latter, so only ask for what is really absent.
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)

if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${#missing[@]} Debian packages: ${missing[*]}"
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: must run as root to install packages (or install them yourself)" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  echo "setup: Debian packages installed"
else
  echo "setup: Debian packages present"
fi

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# The Python environment: the first Python 3.11 on PATH (a fresh Debian's /usr/bin/python3 is
# 3.11), a venv from requirements/*.txt. A stamp holds the digest of the files installed, so an
# unchanged environment is reused and a changed file reinstalls.
venv="${PODIUM_VENV:-$root/.venv}"
requirements=("$root/requirements/workload.txt")
[ $with_tools -eq 1 ] && requirements+=("$root/requirements/tools.txt")
python=""
for candidate in python3.11 python3 /usr/bin/python3; do
  if command -v "$candidate" >/dev/null 2>&1 &&
     "$candidate" -c 'import sys, venv; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null; then
    python="$(command -v "$candidate")"; break
  fi
done
if [ -z "$python" ]; then
  echo "setup: no Python 3.11 with the venv module found (Debian 12: apt-get install python3-venv)" >&2
  exit 1
fi
# The stamp lists one digest per selection installed: that of workload.txt alone and, after
# --tools, that of both files.
digest_of() { cat "$@" | sha256sum | cut -d' ' -f1; }
digest=$(digest_of "${requirements[@]}")
stamp="$venv/.podium-requirements"
if [ -x "$venv/bin/python" ] && grep -qx "$digest" "$stamp" 2>/dev/null; then
  echo "setup: Python environment $venv present"
else
  echo "setup: Python environment $venv from ${requirements[*]#"$root"/} (a few minutes the first time)"
  [ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
  args=()
  for r in "${requirements[@]}"; do args+=(-r "$r"); done
  "$venv/bin/python" -m pip install --disable-pip-version-check --no-input -q "${args[@]}"
  "$venv/bin/python" -m pip check >/dev/null || { "$venv/bin/python" -m pip check; exit 1; }
  { digest_of "$root/requirements/workload.txt"; echo "$digest"; } > "$stamp"
fi

# Real MaxText (PyPI maxtext 0.2.0) in an environment of its own: its ~90 extra packages
# (TensorFlow, transformers, grain, ...) stay out of the project's environment. maxtext declares
# Requires-Python >= 3.12, which pip only lets a command-line option override, and one line of
# it needs a Python 3.11 spelling (patch_py311.py). The stamp holds the digest of the requirement
# files and the patch, so an unchanged environment is reused.
if [ $with_maxtext -eq 1 ]; then
  mt_venv="${PODIUM_MAXTEXT_VENV:-$root/.venv-maxtext}"
  mt_inputs=("$root/requirements/workload.txt" "$root/requirements/maxtext.txt"
             "$root/engine/workloads/maxtext/patch_py311.py")
  mt_digest=$(digest_of "${mt_inputs[@]}")
  mt_stamp="$mt_venv/.podium-requirements"
  if [ -x "$mt_venv/bin/python" ] && grep -qx "$mt_digest" "$mt_stamp" 2>/dev/null; then
    echo "setup: MaxText environment $mt_venv present"
  else
    echo "setup: MaxText environment $mt_venv from requirements/workload.txt + maxtext.txt (several minutes the first time)"
    rm -f "$mt_stamp"
    [ -x "$mt_venv/bin/python" ] || "$python" -m venv "$mt_venv"
    "$mt_venv/bin/python" -m pip install --disable-pip-version-check --no-input -q \
      --ignore-requires-python -r "$root/requirements/workload.txt" -r "$root/requirements/maxtext.txt"
    "$mt_venv/bin/python" -m pip check >/dev/null || { "$mt_venv/bin/python" -m pip check; exit 1; }
    "$mt_venv/bin/python" "$root/engine/workloads/maxtext/patch_py311.py"
    echo "$mt_digest" > "$mt_stamp"
  fi
fi

if [ -f "$root/web/package.json" ]; then
  if [ ! -d "$root/web/node_modules" ] || [ "$root/web/package-lock.json" -nt "$root/web/node_modules" ]; then
    echo "setup: installing dashboard npm packages"
    # npm ci installs exactly the lock file. Some npm 11 builds write lock files without the
    # other platforms' optional packages (rollup's and esbuild's binaries) and then refuse them
    # in ci; npm install with the same lock file installs the same versions without rewriting it.
    if ! (cd "$root/web" && npm ci --no-audit --no-fund --loglevel=error 2>/dev/null); then
      echo "setup: npm ci refused web/package-lock.json; installing the locked versions with npm install"
      (cd "$root/web" && npm install --no-audit --no-fund --no-save --loglevel=error)
    fi
    touch "$root/web/node_modules"
  fi
fi
