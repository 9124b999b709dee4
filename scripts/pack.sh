#!/usr/bin/env sh
# Packs the public packages (every packages/* without `"private": true`) with `pnpm pack` into DEST (default out/tarballs), in a fresh clone too: it runs
# through scripts/toolchain.sh, which installs Node 22, pnpm and the workspace first (each package's `prepack` runs
# `tsc -b`, which needs the workspace's TypeScript).
#   sh scripts/pack.sh [DEST]
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "${PACK_TOOLCHAIN:-}" ]; then
  PACK_TOOLCHAIN=1 exec sh "$root/scripts/toolchain.sh" sh "$root/scripts/pack.sh" "$@"
fi
dest=${1:-$root/out/tarballs}
mkdir -p "$dest"
dest=$(cd "$dest" && pwd)
for dir in "$root"/packages/*/; do
  node -e 'process.exit(require(process.argv[1]).private ? 1 : 0)' "$dir/package.json" || continue
  (cd "$dir" && pnpm pack --pack-destination "$dest" >/dev/null)
done
ls "$dest"/dsh-seam-*.tgz
