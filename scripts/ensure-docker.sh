#!/usr/bin/env bash
# Make sure a Docker engine answers. Idempotent: does nothing when one already runs.
# As root it installs Debian's docker.io when no dockerd exists and starts dockerd;
# otherwise it says exactly what to do.
set -euo pipefail

if docker info >/dev/null 2>&1; then
  exit 0
fi

if [ "$(id -u)" != "0" ]; then
  cat >&2 <<'MSG'
error: no Docker engine answers and we are not root, so we cannot start one.
  Start it yourself (e.g. `sudo systemctl start docker`, or `sudo dockerd &`),
  and make sure your user can use it (`sudo usermod -aG docker $USER`, then log in again).
MSG
  exit 1
fi

if ! command -v dockerd >/dev/null 2>&1; then
  echo ">> installing the Docker engine (Debian package docker.io)" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq docker.io >/dev/null
fi
if ! command -v docker >/dev/null 2>&1; then
  echo "error: dockerd is installed but the docker client is missing" >&2
  exit 1
fi

log=/var/log/aletheia-dockerd.log
echo ">> starting dockerd (log: $log)" >&2
# A stale pid file from a killed daemon blocks a new one.
if [ -f /var/run/docker.pid ] && ! kill -0 "$(cat /var/run/docker.pid)" 2>/dev/null; then
  rm -f /var/run/docker.pid
fi
setsid nohup dockerd >"$log" 2>&1 < /dev/null &

for _ in $(seq 1 60); do
  if docker info >/dev/null 2>&1; then
    echo ">> Docker engine is up" >&2
    exit 0
  fi
  sleep 1
done
echo "error: dockerd did not answer within 60 s; last lines of $log:" >&2
tail -n 20 "$log" >&2 || true
exit 1
