#!/usr/bin/env bash
# The consumer smoke test: the public packages as a plugin author installs them, in fresh apps outside the
# workspace. Packs every public package with `pnpm pack`, then in a temporary folder:
#   stock-app    DSH 0.1.0-rc.8 (exact versions, stock, from the npm registry) and the tarballs, with npm; runs
#                consumer-smoke/stock-app.mjs: every package imports on stock DSH, the guard throws
#                AgentContextSeamError, AgentTavern refuses agent-managed with mode-unavailable and runs dsh-native
#                for 3 turns.
#   pnpm-app, npm-app   the same install, then `dsh-seam setup` (the packed CLI) and a second install, which
#                patches DSH; runs consumer-smoke/patched-app.mjs (a keep-last-3-turns listener, 10 turns with tool
#                calls, every request matched to the log with firstRequestDivergence) and `dsh-seam verify` on the
#                persisted log; a second `dsh-seam setup` changes nothing.
#   cli/         the real `dsh` CLI from npm with the AgentTavern and compaction bundles (consumer-smoke/cli.sh).
# The last line is `N passed, N failed`.
#   scripts/consumer-smoke.sh        (env CONSUMER_SMOKE_WORK: the folder to use, default a new temporary one)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "${CONSUMER_SMOKE_TOOLCHAIN:-}" ]; then
  CONSUMER_SMOKE_TOOLCHAIN=1 exec sh "$root/scripts/toolchain.sh" bash "$root/scripts/consumer-smoke.sh"
fi
PUBLIC=(dsh-agent-context agent-loop-patch compaction-effective-projection agent-tavern seam-cli)
DSH=0.1.0-rc.8
work=${CONSUMER_SMOKE_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/consumer-smoke.XXXXXX")}
case $work in "$root"/*) echo "consumer-smoke: $work is inside the workspace; the app must be outside it" >&2; exit 2 ;; esac
rm -rf "$work" && mkdir -p "$work/tarballs" "$work/stock-app" "$work/pnpm-app" "$work/npm-app"
passed=0 failed=0
check() { # name, status
  if [ "$2" -eq 0 ]; then echo "pass  $1"; passed=$((passed + 1)); else echo "FAIL  $1"; failed=$((failed + 1)); fi
}

for pkg in "${PUBLIC[@]}"; do
  (cd "$root/packages/$pkg" && pnpm pack --pack-destination "$work/tarballs" >/dev/null)
done
tarballs=("$work"/tarballs/*.tgz)
check "pnpm pack: ${#tarballs[@]} tarballs (${PUBLIC[*]})" $(( ${#tarballs[@]} == ${#PUBLIC[@]} ? 0 : 1 ))
leaks=$(for t in "${tarballs[@]}"; do tar -xOzf "$t" package/package.json; done | grep -c 'workspace:' || true)
check 'no tarball names a workspace: dependency' $(( leaks == 0 ? 0 : 1 ))

manifest() { # app folder: DSH rc.8's packages the apps import, exactly, and every tarball
  node - "$1/package.json" "$DSH" "${tarballs[@]}" <<'JS'
const [file, dsh, ...tarballs] = process.argv.slice(2)
const dependencies = { '@deepseek-ai/cordis': '4.0.1', '@deepseek-ai/schemastery': '3.18.1' }
for (const name of ['agent', 'agent-loop', 'compaction', 'compaction-basic', 'invariants', 'llm', 'session', 'session-persistence-jsonl', 'system-prompt', 'token-meter', 'tools']) dependencies[`@deepseek-ai/dsh-${name}`] = dsh
for (const tarball of tarballs) {
  const { name } = JSON.parse(require('node:child_process').execFileSync('tar', ['-xOzf', tarball, 'package/package.json'], { encoding: 'utf8' }))
  dependencies[name] = `file:${tarball}`
}
require('node:fs').writeFileSync(file, JSON.stringify({ name: require('node:path').basename(require('node:path').dirname(file)), private: true, type: 'module', dependencies }, null, 2))
JS
}
manifest "$work/stock-app"

readme_manifest() { # app folder, package manager: the README's install line ("Use it in your own DSH app"), the
  # unpublished @dsh-seam packages as tarballs with pnpm overrides for their own dependencies, as the README says
  node - "$1/package.json" "$2" "$root/README.md" "${tarballs[@]}" <<'JS'
const { execFileSync } = require('node:child_process')
const { readFileSync, writeFileSync } = require('node:fs')
const { basename, dirname } = require('node:path')
const [file, pm, readme, ...tarballs] = process.argv.slice(2)
const section = /## Use it in your own DSH app[\s\S]*?```sh\n([\s\S]*?)```/.exec(readFileSync(readme, 'utf8'))
const line = section?.[1].replace(/\\\n\s*/g, ' ').split('\n').find(l => l.startsWith('pnpm add '))
if (line === undefined) throw new Error('README: no `pnpm add` line in "Use it in your own DSH app"')
const tgz = Object.fromEntries(tarballs.map(t => [JSON.parse(execFileSync('tar', ['-xOzf', t, 'package/package.json'], { encoding: 'utf8' })).name, `file:${t}`]))
const dependencies = {}
for (const spec of line.slice('pnpm add '.length).split(/\s+/).filter(Boolean)) {
  const at = spec.lastIndexOf('@')
  if (spec.startsWith('@dsh-seam/')) dependencies[spec] = tgz[spec]
  else dependencies[spec.slice(0, at)] = spec.slice(at + 1)
}
dependencies['@dsh-seam/compaction-effective-projection'] = tgz['@dsh-seam/compaction-effective-projection']
const libs = ['@dsh-seam/agent-context', '@dsh-seam/agent-loop-patch', '@dsh-seam/compaction-effective-projection']
const pnpm = pm === 'npm' ? {} : { pnpm: { overrides: Object.fromEntries(libs.map(name => [name, tgz[name]])) } }
writeFileSync(file, JSON.stringify({ name: basename(dirname(file)), private: true, type: 'module', dependencies, ...pnpm }, null, 2))
JS
}
cp "$root/scripts/consumer-smoke/stock-app.mjs" "$work/stock-app/"
status=0
(cd "$work/stock-app" && npm install --no-audit --no-fund --loglevel=error > install.log 2>&1) || status=$?
[ $status -eq 0 ] || tail -20 "$work/stock-app/install.log"
check "npm install in a fresh app: stock DSH $DSH from the registry and the tarballs" $status

if [ $status -eq 0 ]; then
  out=$(cd "$work/stock-app" && node stock-app.mjs 2>&1 | tail -1) || true
  echo "stock app: $out"
  node -e '
    const seen = JSON.parse(process.argv[1])
    const ok = seen.hasSeam === false && seen.guard?.name === "AgentContextSeamError" && seen.guard.missing === "request-projection"
      && seen.mode === "dsh-native" && seen.refusal?.code === "mode-unavailable" && seen.turns === 3 && seen.requests === 3 && seen.errors.length === 0
    process.exit(ok ? 0 : 1)' "$out" 2>/dev/null && status=0 || status=1
  check 'stock DSH: every package imports, the guard throws, AgentTavern refuses agent-managed and runs dsh-native 3 turns' $status
fi

patched_app() { # package manager: install stock, `dsh-seam setup`, install again (patching DSH), run the app, verify its log
  local pm=$1 app=$work/$1-app status=0 out
  readme_manifest "$app" "$pm"
  cp "$root/scripts/consumer-smoke/patched-app.mjs" "$root/scripts/consumer-smoke/my-model.js" "$app/"
  # The README's boot example as written; its ./my-model.js is the offline model above.
  node -e '
    const readme = require("fs").readFileSync(process.argv[1], "utf8")
    const block = /## Use it in your own DSH app[\s\S]*?```js\n([\s\S]*?)```/.exec(readme)
    if (!block) process.exit(1)
    process.stdout.write(block[1])' "$root/README.md" > "$app/readme-app.mjs"
  install() { if [ "$pm" = pnpm ]; then pnpm install --no-frozen-lockfile --reporter=silent; else npm install --no-audit --no-fund --loglevel=error; fi; }
  (cd "$app" && install > install.log 2>&1 && node node_modules/@dsh-seam/cli/bin/dsh-seam.js setup --pm "$pm" > setup.log 2>&1 && install >> install.log 2>&1) || status=$?
  [ $status -eq 0 ] || tail -20 "$app/install.log" "$app/setup.log" 2>/dev/null || true
  check "$pm: a fresh app installs DSH $DSH and the tarballs, dsh-seam setup patches it" $status
  [ $status -eq 0 ] || return 0
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
  check "$pm: the packed dsh-seam verify rebuilds every request of the persisted log" $status
  status=0
  (cd "$app" && node readme-app.mjs > readme.log 2>&1 && node node_modules/@dsh-seam/cli/bin/dsh-seam.js verify sessions/_no-cwd/pilot/session.jsonl.zstd >> readme.log 2>&1 \
    && grep -qE '; [1-9][0-9]* request/projection events hold' readme.log) || status=$?
  [ $status -eq 0 ] || tail -5 "$app/readme.log"
  check "$pm: the README's install line and boot example as written (guard, listener, followup, whenIdle, flush, dispose): projected requests, the log verifies" $status
  status=0
  (cd "$app" && node node_modules/@dsh-seam/cli/bin/dsh-seam.js setup --pm "$pm" --check > recheck.log 2>&1) || status=$?
  check "$pm: a second dsh-seam setup has nothing to change" $status
}
patched_app pnpm
patched_app npm

# The real `dsh` CLI from npm with both bundles, stock and patched (consumer-smoke/cli.sh; its checks count here).
cli_out=$(CLI_SMOKE_WORK=$work/cli TARBALLS=$work/tarballs bash "$root/scripts/consumer-smoke/cli.sh" 2>&1) || true
grep -v '^[0-9]* passed, [0-9]* failed$' <<<"$cli_out" | sed 's/^\(pass\|FAIL\)  /\1  cli: /'
passed=$((passed + $(grep -c '^pass  ' <<<"$cli_out" || true)))
failed=$((failed + $(grep -c '^FAIL  ' <<<"$cli_out" || true)))
grep -q '^[0-9]* passed, 0 failed$' <<<"$cli_out" || { echo 'FAIL  cli: consumer-smoke/cli.sh did not finish with 0 failed'; failed=$((failed + 1)); }

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
