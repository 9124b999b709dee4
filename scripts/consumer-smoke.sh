#!/usr/bin/env bash
# The consumer smoke test: the public packages as a plugin author installs them after the release, in fresh apps
# outside the workspace. The release is rehearsed first (scripts/release-rehearsal.sh): a local Verdaccio on
# 127.0.0.1 proxying everything but @dsh-seam/* to the npm registry, `changeset version` on a temporary copy of the
# workspace, `pnpm -r publish` of its public packages; every install below reads that registry through
# npm_config_registry, exactly as it will read npm's, with no overrides and no tarballs (the README's pack command,
# scripts/pack.sh, is checked beside it). Then, in a temporary folder:
#   stock-app    DSH 0.1.0-rc.8 (exact versions, stock) and the released packages, with npm; runs
#                consumer-smoke/stock-app.mjs: every package imports on stock DSH, the guard throws
#                AgentContextSeamError, AgentTavern refuses activating agent-managed closed (architecture-conflict) and runs dsh-native
#                for 3 turns.
#   pnpm/my-app, npm/my-app   the README's install block ("Use it in your own DSH app") run as written, with pnpm and
#                with its `# npm:` line: `dsh-seam setup` patches DSH; the lockfile names no local path; runs
#                consumer-smoke/patched-app.mjs (a keep-last-3-turns listener, 10 turns with tool calls, every request
#                matched to the log with firstRequestDivergence), `dsh-seam verify` on the persisted log, and the
#                README's boot example as written; a second `dsh-seam setup` changes nothing.
#   cli/         the real `dsh` CLI from npm with the AgentTavern and compaction bundles (consumer-smoke/cli.sh), from
#                the same registry.
# The registry is stopped on exit. The last line is `N passed, N failed`.
#   scripts/consumer-smoke.sh        (env CONSUMER_SMOKE_WORK: the folder to use, default a new temporary one)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "${CONSUMER_SMOKE_TOOLCHAIN:-}" ]; then
  CONSUMER_SMOKE_TOOLCHAIN=1 exec sh "$root/scripts/toolchain.sh" bash "$root/scripts/consumer-smoke.sh"
fi
DSH=0.1.0-rc.8
source "$root/scripts/release-rehearsal.sh"
work=${CONSUMER_SMOKE_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/consumer-smoke.XXXXXX")}
case $work in "$root"/*) echo "consumer-smoke: $work is inside the workspace; the app must be outside it" >&2; exit 2 ;; esac
rm -rf "$work" && mkdir -p "$work/registry" "$work/stock-app" "$work/pnpm" "$work/npm"
trap registry_stop EXIT
passed=0 failed=0
check() { # name, status
  if [ "$2" -eq 0 ]; then echo "pass  $1"; passed=$((passed + 1)); else echo "FAIL  $1"; failed=$((failed + 1)); fi
}
seconds() { echo $(( $(date +%s) - $1 )); } # since

# ---- the release, rehearsed ---------------------------------------------------------------------------------------
versions_before=$(cd "$root" && git status --porcelain -- .changeset 'packages/*/package.json' 'packages/*/CHANGELOG.md' 2>/dev/null || true)
since=$(date +%s)
status=0
{ registry_start "$work/registry" && release_publish "$work/registry"; } || status=1
echo "registry ${REGISTRY_URL:-none}: $(tr '\n' ' ' <<<"${RELEASED:-}")"
public=$(cd "$root" && for p in packages/*/package.json; do node -e 'process.exit(require(process.argv[1]).private ? 1 : 0)' "$PWD/$p" && echo "$p"; done | wc -l)
check "release rehearsal: Verdaccio on 127.0.0.1, changeset version on a copy, $(grep -c . <<<"${RELEASED:-}") of $public public packages published ($(seconds "$since") s)" \
  "$( [ $status -eq 0 ] && [ "$(grep -c . <<<"$RELEASED")" -eq "$public" ] && echo 0 || echo 1)"
[ $status -eq 0 ] || { echo "$passed passed, $((failed)) failed"; exit 1; }
check "the workspace's .changeset/, versions and changelogs are unchanged by the rehearsal" \
  "$( [ "$(cd "$root" && git status --porcelain -- .changeset 'packages/*/package.json' 'packages/*/CHANGELOG.md' 2>/dev/null || true)" = "$versions_before" ] && echo 0 || echo 1)"
# The README's pack command, for a tarball route: one tarball per public package, none naming a workspace: range.
status=0
sh "$root/scripts/pack.sh" "$work/tarballs" > "$work/pack.log" 2>&1 || status=1
tarballs=$(ls "$work"/tarballs/*.tgz 2>/dev/null | wc -l)
leaks=$(for t in "$work"/tarballs/*.tgz; do tar -xOzf "$t" package/package.json; done 2>/dev/null | grep -c 'workspace:' || true)
check "sh scripts/pack.sh: $tarballs tarballs, no workspace: range" "$( [ $status -eq 0 ] && [ "$tarballs" -eq "$public" ] && [ "$leaks" -eq 0 ] && echo 0 || echo 1)"
export npm_config_registry=$REGISTRY_URL
# The apps below are a plugin author's, installed from a shell as the README says: under CI=true pnpm would refuse
# (frozen lockfile) the `pnpm install` that follows `dsh-seam setup`, which changes the app's overrides by design.
unset CI
clean=$(node -e '
  const [url, ...specs] = process.argv.slice(1)
  Promise.all(specs.map(async spec => {
    const at = spec.lastIndexOf("@")
    const manifest = (await (await fetch(url + spec.slice(0, at).replace("/", "%2f"))).json()).versions?.[spec.slice(at + 1)]
    return manifest !== undefined && !JSON.stringify([manifest.dependencies, manifest.peerDependencies]).includes("workspace:")
  })).then(ok => console.log(ok.filter(Boolean).length), () => console.log(0))' "$REGISTRY_URL" $RELEASED)
check "the registry serves all $public released manifests, none naming a workspace: range ($clean clean)" $(( clean == public ? 0 : 1 ))

# stock-app: DSH rc.8's packages the apps import, exactly, and every released package at its released version
node - "$work/stock-app/package.json" "$DSH" $RELEASED <<'JS'
const [file, dsh, ...released] = process.argv.slice(2)
const dependencies = { '@deepseek-ai/cordis': '4.0.1', '@deepseek-ai/schemastery': '3.18.1' }
for (const name of ['agent', 'agent-loop', 'compaction', 'compaction-basic', 'invariants', 'llm', 'session', 'session-persistence-jsonl', 'system-prompt', 'token-meter', 'tools']) dependencies[`@deepseek-ai/dsh-${name}`] = dsh
for (const spec of released) dependencies[spec.slice(0, spec.lastIndexOf('@'))] = spec.slice(spec.lastIndexOf('@') + 1)
require('node:fs').writeFileSync(file, JSON.stringify({ name: 'stock-app', private: true, type: 'module', dependencies }, null, 2))
JS

readme_block() { # package manager: the README's install block ("Use it in your own DSH app"); for npm, its `# npm:` line
  # in place of the pnpm line
  node - "$root/README.md" "$1" <<'JS'
const [readme, pm] = process.argv.slice(2)
const block = /## Use it in your own DSH app[\s\S]*?```sh\n([\s\S]*?)```/.exec(require('node:fs').readFileSync(readme, 'utf8'))?.[1]
if (block === undefined || !/^pnpm add /m.test(block) || !/^# npm: /m.test(block)) throw new Error('README: no install block with a `pnpm add` and a `# npm:` line in "Use it in your own DSH app"')
const lines = block.split('\n').filter(line => !(pm === 'npm' ? /^pnpm / : /^# npm: /).test(line))
process.stdout.write(lines.map(line => line.replace(/^# npm: /, '')).join('\n'))
JS
}
cp "$root/scripts/consumer-smoke/stock-app.mjs" "$work/stock-app/"
status=0
(cd "$work/stock-app" && npm install --no-audit --no-fund --loglevel=error > install.log 2>&1) || status=$?
[ $status -eq 0 ] || tail -20 "$work/stock-app/install.log"
check "npm install in a fresh app: stock DSH $DSH and the released packages from the local registry" $status

if [ $status -eq 0 ]; then
  out=$(cd "$work/stock-app" && node stock-app.mjs 2>&1 | tail -1) || true
  echo "stock app: $out"
  node -e '
    const seen = JSON.parse(process.argv[1])
    const ok = seen.hasSeam === false && seen.guard?.name === "AgentContextSeamError" && seen.guard.missing === "request-projection"
      && seen.mode === "dsh-native" && seen.refusal?.code === "architecture-conflict" && seen.refusal.reason === "mode-unavailable" && seen.turns === 3 && seen.requests === 3 && seen.errors.length === 0
    process.exit(ok ? 0 : 1)' "$out" 2>/dev/null && status=0 || status=1
  check 'stock DSH: every package imports, the guard throws, AgentTavern refuses activating agent-managed closed, dsh-native runs 3 turns' $status
fi

patched_app() { # package manager: the README's install block as written, run the app, verify its log
  local pm=$1 app=$work/$1/my-app status=0 out since
  readme_block "$pm" > "$work/$pm/install.sh"
  since=$(date +%s)
  (cd "$work/$pm" && bash -euo pipefail install.sh > install.log 2>&1) || status=$?
  [ $status -eq 0 ] || tail -20 "$work/$pm/install.log"
  check "$pm: the README's install block as written in a fresh folder: DSH $DSH and the released packages from the registry, dsh-seam setup patches DSH ($(seconds "$since") s)" $status
  [ $status -eq 0 ] || return 0
  local lock=pnpm-lock.yaml
  [ "$pm" = npm ] && lock=package-lock.json
  local local_paths
  local_paths=$(grep -nE "(: |'|\")(file|link):|$work|$root|$HOME/|/tmp/" "$app/$lock" | head -3 || true)
  [ -z "$local_paths" ] || echo "$local_paths" | sed 's/^/  /'
  check "$pm: $lock is portable (no file: or link: dependency, no local path)" "$( [ -f "$app/$lock" ] && [ -z "$local_paths" ] && echo 0 || echo 1)"
  cp "$root/scripts/consumer-smoke/patched-app.mjs" "$root/scripts/consumer-smoke/my-model.js" "$app/"
  # The README's boot example as written; its ./my-model.js is the offline model above.
  node -e '
    const readme = require("fs").readFileSync(process.argv[1], "utf8")
    const block = /## Use it in your own DSH app[\s\S]*?```js\n([\s\S]*?)```/.exec(readme)
    if (!block) process.exit(1)
    process.stdout.write(block[1])' "$root/README.md" > "$app/readme-app.mjs"
  out=$(cd "$app" && node patched-app.mjs "$app/smoke-sessions" 2>&1 | tail -1) || true
  echo "$pm app: $out"
  node -e '
    const seen = JSON.parse(process.argv[1])
    const ok = seen.turns === 10 && seen.toolCalls >= 3 && seen.projections > 0 && seen.maxSent < seen.surface && seen.divergence === null && seen.hostError && seen.log
    process.exit(ok ? 0 : 1)' "$out" 2>/dev/null && status=0 || status=1
  check "$pm: keep-last-3-turns listener, 10 turns with tool calls, every request rebuilt from the log (firstRequestDivergence)" $status
  local log
  log=$(node -e 'console.log(JSON.parse(process.argv[1]).log ?? "")' "$out" 2>/dev/null || true)
  status=1
  [ -n "$log" ] && (cd "$app" && node node_modules/@dsh-seam/cli/bin/dsh-seam.js verify "$log" > verify.log 2>&1) && status=0
  sed 's/^/  /' "$app/verify.log" 2>/dev/null | tail -1
  check "$pm: the released dsh-seam verify rebuilds every request of the persisted log" $status
  status=0
  (cd "$app" && node readme-app.mjs > readme.log 2>&1 && node node_modules/@dsh-seam/cli/bin/dsh-seam.js verify sessions/_no-cwd/pilot/session.jsonl.zstd >> readme.log 2>&1 \
    && grep -qE '; [1-9][0-9]* request/projection events hold' readme.log) || status=$?
  [ $status -eq 0 ] || tail -5 "$app/readme.log"
  check "$pm: the README's boot example as written (guard, listener, followup, whenIdle, flush, dispose): projected requests, the log verifies" $status
  status=0
  (cd "$app" && node node_modules/@dsh-seam/cli/bin/dsh-seam.js setup --pm "$pm" --check > recheck.log 2>&1) || status=$?
  check "$pm: a second dsh-seam setup has nothing to change" $status
}
patched_app pnpm
patched_app npm

# The real `dsh` CLI from npm with both bundles, stock and patched, from the same registry (consumer-smoke/cli.sh,
# which reads npm_config_registry; its checks count here).
cli_out=$(CLI_SMOKE_WORK=$work/cli bash "$root/scripts/consumer-smoke/cli.sh" 2>&1) || true
grep -v '^[0-9]* passed, [0-9]* failed$' <<<"$cli_out" | sed 's/^\(pass\|FAIL\)  /\1  cli: /'
passed=$((passed + $(grep -c '^pass  ' <<<"$cli_out" || true)))
failed=$((failed + $(grep -c '^FAIL  ' <<<"$cli_out" || true)))
grep -q '^[0-9]* passed, 0 failed$' <<<"$cli_out" || { echo 'FAIL  cli: consumer-smoke/cli.sh did not finish with 0 failed'; failed=$((failed + 1)); }

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
