#!/usr/bin/env bash
# The release rehearsed on a real local npm registry: Verdaccio (pinned, installed from the npm registry into
# .toolchain/ on first use) on 127.0.0.1 at a free port, with a temporary storage folder, serving what is published
# to it under @dsh-seam/* and proxying every other package to https://registry.npmjs.org/. Into it goes what a release
# publishes: `changeset version` runs on a temporary copy of the workspace (this checkout's .changeset/ and versions
# are never changed), then `pnpm -r publish` publishes the public packages of that copy (pnpm turns `workspace:*`
# into the released versions, `prepack` builds, `files` and `publishConfig` apply as on the real registry).
#
#   bash scripts/release-rehearsal.sh     starts the registry, publishes, prints the registry's address and waits;
#                                         Ctrl-C stops it and removes its storage. In another shell, in a fresh folder
#                                         outside this repository: `export npm_config_registry=<address>`, then the
#                                         README's install lines as written (pnpm and npm both read that variable).
#   source scripts/release-rehearsal.sh   (bash) defines the functions below for scripts/consumer-smoke.sh:
#     registry_start DIR   starts Verdaccio with its config and storage under DIR; sets REGISTRY_URL, REGISTRY_PID
#     release_publish DIR  versions a copy of the workspace in DIR/release and publishes it; sets RELEASED (the
#                          published name@version, one per line)
#     registry_stop        stops Verdaccio (callers trap it on EXIT)
# Needs Node ^22.19 and pnpm on PATH (scripts/toolchain.sh provides both; running this file directly goes through it).

VERDACCIO=6.8.0
UPLINK=https://registry.npmjs.org/
rehearsal_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

registry_start() { # dir
  local dir=$1 verdaccio=$rehearsal_root/.toolchain/verdaccio-$VERDACCIO port
  if [ ! -x "$verdaccio/node_modules/.bin/verdaccio" ]; then
    echo "release-rehearsal: installing verdaccio@$VERDACCIO from the npm registry into .toolchain/" >&2
    mkdir -p "$verdaccio" && echo '{"name":"toolchain","private":true}' > "$verdaccio/package.json"
    (cd "$verdaccio" && npm install --no-audit --no-fund --loglevel=error "verdaccio@$VERDACCIO") >&2 || return 1
  fi
  mkdir -p "$dir/storage"
  port=$(node -e 'const s = require("node:net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close() })')
  cat > "$dir/config.yaml" <<YAML
storage: $dir/storage
auth:
  htpasswd:
    file: $dir/htpasswd
uplinks:
  npmjs:
    url: $UPLINK
    timeout: 60s
packages:
  '@dsh-seam/*':
    access: \$all
    publish: \$authenticated
  '**':
    access: \$all
    publish: \$authenticated
    proxy: npmjs
server:
  keepAliveTimeout: 60
log: { type: stdout, format: pretty, level: warn }
YAML
  "$verdaccio/node_modules/.bin/verdaccio" --config "$dir/config.yaml" --listen "127.0.0.1:$port" > "$dir/verdaccio.log" 2>&1 &
  REGISTRY_PID=$!
  REGISTRY_URL=http://127.0.0.1:$port/
  node -e '
    const url = process.argv[1]
    const until = Date.now() + 30_000
    const ping = () => fetch(`${url}-/ping`).then(r => { if (!r.ok) throw new Error(r.status) })
      .catch(() => Date.now() < until ? new Promise(res => setTimeout(res, 200)).then(ping) : Promise.reject(new Error(`no answer from ${url} in 30 s`)))
    ping().catch(error => { console.error(`release-rehearsal: ${error.message}`); process.exit(1) })' "$REGISTRY_URL" \
    || { tail -5 "$dir/verdaccio.log" >&2; registry_stop; return 1; }
}

registry_stop() {
  [ -n "${REGISTRY_PID:-}" ] || return 0
  kill "$REGISTRY_PID" 2>/dev/null || true
  wait "$REGISTRY_PID" 2>/dev/null || true
  REGISTRY_PID=''
}

release_publish() { # dir: a copy of the workspace (without .git, the toolchain, stock/ and outputs), versioned, published
  local dir=$1/release token
  rm -rf "$dir" && mkdir -p "$dir"
  (cd "$rehearsal_root" && tar -cf - --exclude=./.git --exclude=./.toolchain --exclude=./stock --exclude=./out --exclude=./coverage .) \
    | tar -xf - -C "$dir"
  # changeset reads each changeset's commit; the copy is a repository of its own.
  (cd "$dir" && git init -q && git add -A && git -c user.name=rehearsal -c user.email=rehearsal@localhost commit -qm rehearsal) || return 1
  (cd "$dir" && pnpm exec changeset version) > "$1/changeset.log" 2>&1 || { tail -20 "$1/changeset.log" >&2; return 1; }
  token=$(node -e '
    fetch(`${process.argv[1]}-/user/org.couchdb.user:rehearsal`, { method: "PUT", headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "rehearsal", password: "rehearsal" }) })
      .then(async r => { const body = await r.json(); if (!body.token) throw new Error(`${r.status} ${JSON.stringify(body)}`); console.log(body.token) })
      .catch(error => { console.error(`release-rehearsal: no publish token: ${error.message}`); process.exit(1) })' "$REGISTRY_URL") || return 1
  printf 'registry=%s\n//%s:_authToken=%s\n' "$REGISTRY_URL" "${REGISTRY_URL#http://}" "$token" > "$dir/.npmrc"
  (cd "$dir" && pnpm -r publish --no-git-checks --registry "$REGISTRY_URL") > "$1/publish.log" 2>&1 || { tail -20 "$1/publish.log" >&2; return 1; }
  RELEASED=$(cd "$dir" && for p in packages/*/package.json; do
    node -e 'const p = require(process.argv[1]); if (!p.private) console.log(`${p.name}@${p.version}`)' "$PWD/$p"
  done)
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  if [ -z "${REHEARSAL_TOOLCHAIN:-}" ]; then
    REHEARSAL_TOOLCHAIN=1 exec sh "$rehearsal_root/scripts/toolchain.sh" bash "$rehearsal_root/scripts/release-rehearsal.sh" "$@"
  fi
  work=$(mktemp -d "${TMPDIR:-/tmp}/release-rehearsal.XXXXXX")
  trap 'registry_stop; rm -rf "$work"' EXIT
  trap 'exit 130' INT TERM
  registry_start "$work"
  release_publish "$work"
  echo "release-rehearsal: published to $REGISTRY_URL (storage $work/storage):"
  sed 's/^/  /' <<<"$RELEASED"
  echo "In another shell, in a fresh folder outside this repository:"
  echo "  export npm_config_registry=$REGISTRY_URL"
  echo "then the README's install lines as written. Ctrl-C stops the registry and removes its storage."
  while :; do sleep 3600; done
fi
