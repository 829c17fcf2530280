#!/usr/bin/env bash
# Installs what Podium needs from Debian's packages and the npm registry.
# Idempotent: packages already present are not touched, so a second run costs seconds.
set -euo pipefail

DEBIAN_PACKAGES=(
  build-essential cmake pkg-config ninja-build mold git curl ca-certificates procps
  libboost1.81-dev libboost-url1.81-dev
  nlohmann-json3-dev libpq-dev libspdlog-dev libfmt-dev libyaml-cpp-dev
  libsodium-dev libssl-dev zlib1g-dev
  postgresql-15 postgresql-client-15
  googletest libgtest-dev libgmock-dev libbenchmark-dev
  clang-format clang libclang-rt-14-dev
  python3 python3-torch python3-yaml
  chromium
  slurm-wlm munge
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
