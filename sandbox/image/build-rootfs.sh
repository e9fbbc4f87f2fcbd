#!/usr/bin/env bash
# Build the sandbox's Debian root file system with debootstrap and pack it as a tar
# for `docker import` (used where no registry is reachable to pull debian:bookworm-slim).
# usage: build-rootfs.sh PACKAGES_FILE OUTPUT_TAR
# env:   ALETHEIA_DEBIAN_MIRROR (default http://deb.debian.org/debian), ALETHEIA_DEBIAN_SUITE (bookworm)
set -euo pipefail
packages_file=$1
out_tar=$2
mirror=${ALETHEIA_DEBIAN_MIRROR:-http://deb.debian.org/debian}
suite=${ALETHEIA_DEBIAN_SUITE:-bookworm}

if [ "$(id -u)" != "0" ]; then
  echo "error: debootstrap needs root; run 'python -m sandbox image ensure' as root, or use --builder dockerfile where a registry is reachable" >&2
  exit 2
fi

if ! command -v debootstrap >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1; then
    echo ">> installing debootstrap (apt-get)" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null 2>&1 || {
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null; } || true
  fi
  if ! command -v debootstrap >/dev/null 2>&1; then
    echo "error: debootstrap is not installed and could not be installed (apt-get install debootstrap); or build from sandbox/Dockerfile with --builder dockerfile where a registry is reachable" >&2
    exit 2
  fi
fi

include=$(grep -v '^\s*#' "$packages_file" | tr -s ' \n' ',' | sed 's/^,//; s/,$//')
work=$(mktemp -d "${out_tar}.work.XXXXXX")
cleanup() {
  local status=$?
  set +e
  # debootstrap mounts /proc (and more) inside the tree: unmount before removing anything.
  if [ -d "$work/rootfs" ]; then
    { grep -o " $work/rootfs[^ ]*" /proc/mounts || true; } | sort -r | while read -r m; do umount -l "$m"; done
  fi
  rm -rf --one-file-system "$work"
  exit "$status"
}
trap cleanup EXIT
echo ">> debootstrap --variant=minbase --include=$include $suite ($mirror)" >&2
debootstrap --variant=minbase --include="$include" "$suite" "$work/rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 || {
  echo "error: debootstrap failed; last lines of its log:" >&2; tail -n 30 "$work/debootstrap.log" >&2; exit 1; }

# Drop what a sandbox never needs: package caches, docs, man pages, locales.
r="$work/rootfs"
rm -rf "$r"/var/cache/apt/archives/*.deb "$r"/var/lib/apt/lists/* "$r"/usr/share/doc/* \
       "$r"/usr/share/man/* "$r"/usr/share/info/* "$r"/var/log/* "$r"/tmp/* || true
find "$r"/usr/share/locale -mindepth 1 -maxdepth 1 ! -name 'C.*' -exec rm -rf {} + 2>/dev/null || true

echo ">> packing $out_tar" >&2
tar --numeric-owner --one-file-system --exclude=./proc/* --exclude=./sys/* -C "$r" -cf "$out_tar.partial" .
mv "$out_tar.partial" "$out_tar"
