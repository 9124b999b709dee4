#!/usr/bin/env sh
# Runs a command with Node ^22.19 and pnpm on PATH, the workspace installed and built.
# DSH 0.1.0-rc.8 needs Node ^22.19 || >=24; a machine with only an older Node and npm gets both
# tools from the npm registry into .toolchain/ (ignored by git) on first use.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
tc="$root/.toolchain"
NODE_SPEC=22.23.3
PNPM_SPEC=10.34.9
ok_node() { "$1" -e 'const [a,b]=process.versions.node.split(".").map(Number);process.exit(a>22||a===22&&b>=19?0:1)' 2>/dev/null; }
npm_into() { # dir spec
  mkdir -p "$1"
  [ -f "$1/package.json" ] || echo '{"name":"toolchain","private":true}' > "$1/package.json"
  (cd "$1" && npm install --no-audit --no-fund --loglevel=error "$2") >&2
}
if ! ok_node node; then
  if ! ok_node "$tc/node/node_modules/.bin/node"; then
    echo "toolchain: installing node@$NODE_SPEC from the npm registry into .toolchain/" >&2
    npm_into "$tc/node" "node@$NODE_SPEC"
  fi
  PATH="$tc/node/node_modules/.bin:$PATH"
fi
if [ "$(pnpm --version 2>/dev/null || true)" != "$PNPM_SPEC" ]; then
  if [ ! -x "$tc/pnpm/node_modules/.bin/pnpm" ]; then
    echo "toolchain: installing pnpm@$PNPM_SPEC from the npm registry into .toolchain/" >&2
    npm_into "$tc/pnpm" "pnpm@$PNPM_SPEC"
  fi
  PATH="$tc/pnpm/node_modules/.bin:$PATH"
fi
export PATH
cd "$root"
stamp=node_modules/.install-stamp
if [ ! -f "$stamp" ] || [ -n "$(find pnpm-lock.yaml package.json pnpm-workspace.yaml patches packages/*/package.json -newer "$stamp" 2>/dev/null | head -1)" ]; then
  if [ "${CI:-}" = true ]; then pnpm install --frozen-lockfile >&2; else pnpm install >&2; fi
  touch "$stamp"
fi
# The unmodified npm set, for differential tests and benchmarks (never patched: npm, not the workspace).
if [ ! -f stock/node_modules/.install-stamp ] || [ stock/package-lock.json -nt stock/node_modules/.install-stamp ]; then
  (cd stock && npm ci --no-audit --no-fund --loglevel=error) >&2
  touch stock/node_modules/.install-stamp
fi
pnpm exec tsc -b tsconfig.build.json >&2
# The patch files dsh-seam setup installs: @dsh-seam/cli ships a copy of patches/ (its build and prepack make it too).
node packages/seam-cli/scripts/copy-patches.mjs >&2
exec "$@"
