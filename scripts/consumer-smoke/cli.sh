#!/usr/bin/env bash
# The real `dsh` CLI from npm with the AgentTavern and projection-aware compaction bundles, as a user who does not
# build DSH installs them after the release (docs/cli-bundles.md, steps 1 to 5): in a fresh folder outside the
# workspace, pnpm adds @deepseek-ai/dsh@0.1.0-rc.8 and @dsh-seam/cli, `dsh-seam setup` pins the DSH set (and, for the
# patched half, installs the patches), pnpm installs again; `dsh plugin --profile headless add` adds both bundles by
# name, without one "missing peer" warning,
# `dsh --profile headless --dump-config` must show their layers, and the headless CLI runs against a loopback
# DeepSeek-compatible server (scripts/source-checkout/mock-deepseek.mjs) with AgentTavern asked for agent-managed
# (AGENT_TAVERN_CONTEXT_MODE):
# `dsh plugin` lists AgentTavern's bundle first, so the compaction bundle's row is the one compaction service.
#   stock half (`dsh-seam setup --no-patches`): AgentTavern asked for dsh-native runs $STOCK_TURNS turns (asked for
#     agent-managed it would refuse the activation closed and fail the turn: test/tavern/bundle.test.ts);
#   patched half (`dsh-seam setup`): agent-managed runs $PATCHED_TURNS turns with tool calls, the released
#     `dsh-seam verify` rebuilds every request from the log and `dsh-seam inspect` shows projected requests.
# Each check prints `pass  <name>` or `FAIL  <name>`; the last line is `N passed, N failed`.
#   scripts/consumer-smoke/cli.sh
#   env CLI_SMOKE_WORK: work folder, outside the workspace (default: a new temporary one; emptied first)
#       npm_config_registry: the registry holding the released @dsh-seam packages (scripts/consumer-smoke.sh sets
#         it); unset, this script rehearses the release itself (scripts/release-rehearsal.sh) and stops the registry
#         on exit
#       CLI_SMOKE_PATCHED=0: skip the patched half
# To watch AgentTavern's projected requests without a key, run it and read `patched/inspect.txt` in the work folder:
# every request the 12 turns sent, against the loopback server (its DEEPSEEK_BASE_URL), with thinking mode on.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
here=$root/scripts/consumer-smoke
if [ -z "${CLI_SMOKE_TOOLCHAIN:-}" ] && [ -z "${CONSUMER_SMOKE_TOOLCHAIN:-}" ]; then
  CLI_SMOKE_TOOLCHAIN=1 exec sh "$root/scripts/toolchain.sh" bash "$here/cli.sh"
fi
# The app and the profile are a user's, installed from a shell as docs/cli-bundles.md says: under CI=true pnpm would
# refuse (frozen lockfile) the `pnpm install` that follows `dsh-seam setup`, which changes the app's overrides.
unset CI
DSH=0.1.0-rc.8
STOCK_TURNS=4
PATCHED_TURNS=12
WINDOW=40000
TASK='Turn 1: The ferry waits at the Grey Estuary landing at dawn. Who is there?'
source "$root/scripts/source-checkout/mock.sh"
work=${CLI_SMOKE_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/cli-smoke.XXXXXX")}
case $work in "$root"|"$root"/*) echo "cli-smoke: $work is inside the workspace; the app must be outside it" >&2; exit 2 ;; esac
rm -rf "$work" && mkdir -p "$work"
echo "cli-smoke: work folder $work"
passed=0 failed=0
check() { # name, status
  if [ "$2" -eq 0 ]; then echo "pass  $1"; passed=$((passed + 1)); else echo "FAIL  $1"; failed=$((failed + 1)); fi
}
finish() {
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
  exit
}
json() { node -e 'const v = JSON.parse(process.argv[1]); console.log(eval(process.argv[2]))' "$1" "$2"; } # json, expression of v

# ---- the released packages ------------------------------------------------------------------------------------
if [ -z "${npm_config_registry:-}" ]; then
  source "$root/scripts/release-rehearsal.sh"
  trap registry_stop EXIT
  mkdir -p "$work/registry"
  registry_start "$work/registry" && release_publish "$work/registry" || { check 'release rehearsal (scripts/release-rehearsal.sh)' 1; finish; }
  export npm_config_registry=$REGISTRY_URL
fi
status=0
mkdir -p "$work/tarballs"
(cd "$work/tarballs" && npm pack --silent @dsh-seam/agent-tavern @dsh-seam/compaction-effective-projection > /dev/null 2>&1) || status=1
for t in "$work"/tarballs/*.tgz; do
  [ -e "$t" ] || { status=1; continue; }
  patch=$(json "$(tar -xOzf "$t" package/package.json)" 'v.dsh?.bundle?.patch ?? ""')
  [ -n "$patch" ] && tar -tzf "$t" | grep -x "package/${patch#./}" > /dev/null || status=1
done
check "both released bundles ($npm_config_registry) declare dsh.bundle.patch and carry the patch file" \
  "$( [ $status -eq 0 ] && [ "$(ls "$work"/tarballs/*.tgz 2>/dev/null | wc -l)" -eq 2 ] && echo 0 || echo 1)"

# ---- the app: @deepseek-ai/dsh from the registry ---------------------------------------------------------------
dsh_versions() { # app: every @deepseek-ai/dsh-* version its lockfile resolves, "name@version" per line
  grep -oE "^  '?@deepseek-ai/dsh-[a-z0-9-]+@[^(:']+" "$1/pnpm-lock.yaml" | sed -E "s/^ +'?//" | sort -u
}

install_app() { # app-dir, setup flags: docs/cli-bundles.md step 1: @deepseek-ai/dsh@$DSH and @dsh-seam/cli with pnpm,
  # then `dsh-seam setup` and pnpm install again
  local app=$1
  shift
  mkdir -p "$app"
  echo '{ "name": "dsh-app", "private": true, "packageManager": "pnpm@10.34.9" }' > "$app/package.json"
  (cd "$app" && pnpm add "@deepseek-ai/dsh@$DSH" @dsh-seam/cli > install.log 2>&1 && pnpm exec dsh-seam setup "$@" > setup.log 2>&1 \
    && pnpm install >> install.log 2>&1) || return 1
}

# ---- the profile: both bundles, `dsh plugin --profile headless add` ----------------------------------------------
setup_profile() { # app-dir, home: docs/cli-bundles.md step 2, both bundles by name, and the scripted user
  local app=$1 home=$2
  (cd "$work" && DSH_HOME=$home "$app/node_modules/.bin/dsh" plugin --profile headless add \
    @dsh-seam/agent-tavern @dsh-seam/compaction-effective-projection "file:$here/scripted-user") > "$home.plugin.log" 2>&1
}

cli_run() { # label, app-dir, home, turns, compression, mode: one headless session; leaves $work/<label>/{stdout,stderr,status,requests.jsonl}
  local label=$1 app=$2 home=$3 dir=$work/$1 status=0
  mkdir -p "$dir/cwd"
  sed -e "s|@WINDOW@|$WINDOW|g; s|@TURNS@|$4|g; s|@COMPRESSION@|$5|g; s|@WARNINGS@|$dir/warnings.log|g" "$here/cli-run.patch.yml" > "$dir/run.patch.yml"
  start_mock "$dir/requests.jsonl" "$dir/mock.out"
  if [ -n "$MOCK_PORT" ]; then
    (cd "$dir/cwd" && DSH_HOME=$home DEEPSEEK_BASE_URL="http://127.0.0.1:$MOCK_PORT/v1" DEEPSEEK_API_KEY=fake AGENT_TAVERN_CONTEXT_MODE=$6 \
      timeout 600 "$app/node_modules/.bin/dsh" --profile headless --patch "$dir/run.patch.yml" "$TASK") > "$dir/stdout" 2> "$dir/stderr" || status=$?
  else
    echo "the loopback server did not start: $(cat "$dir/mock.out")" > "$dir/stderr"
    status=1
  fi
  stop_mock
  echo $status > "$dir/status"
  touch "$dir/requests.jsonl"
  echo "$label: AGENT_TAVERN_CONTEXT_MODE=$6 dsh --profile headless --patch run.patch.yml '<task>' -> exit $status, $(grep -c '"kind":"\(tool-call\|reply\)"' "$dir/requests.jsonl") chat requests"
  sed 's/^/  stderr: /' "$dir/stderr" | head -5
}

session_of() { find "$1/sessions" -name 'session.jsonl*' -type f 2>/dev/null | head -1 || true; } # home
stats_of() { # app, log: session-stats.mjs run in the app (its released @dsh-seam/agent-context reads a .zstd log)
  [ -n "$2" ] && (cd "$1" && node "$here/session-stats.mjs" "$2") 2>/dev/null || echo '{}'
}

# ---- stock half ---------------------------------------------------------------------------------------------------
app=$work/stock-app
home=$work/stock-home
status=0
install_app "$app" --no-patches || status=$?
[ $status -eq 0 ] || tail -n 20 "$app/install.log" "$app/setup.log" || true
versions=$( [ $status -eq 0 ] && dsh_versions "$app" || true)
stray=$(echo "$versions" | grep -v "@$DSH\$" || true)
[ -z "$stray" ] || echo "$stray" | sed 's/^/  not pinned: /'
check "pnpm install @deepseek-ai/dsh@$DSH in a fresh folder: $(echo "$versions" | grep -c . || true) @deepseek-ai/dsh-* packages, every one $DSH" \
  "$( [ $status -eq 0 ] && [ -n "$versions" ] && [ -z "$stray" ] && echo 0 || echo 1)"
[ $status -eq 0 ] || finish

status=0
setup_profile "$app" "$home" || status=$?
[ $status -eq 0 ] || tail -n 20 "$home.plugin.log" || true
bundles=$(node -e 'console.log((JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).dsh?.profile?.bundles ?? []).join(" "))' "$home/profiles/headless/package.json" 2>/dev/null || true)
echo "profile headless: bundles $bundles"
peers=$(grep -ci 'missing peer' "$home.plugin.log" || true)
[ "$peers" -eq 0 ] || grep -i 'missing peer' "$home.plugin.log" | head -5 | sed 's/^/  /'
check "dsh plugin --profile headless add: no \"missing peer\" warning ($peers)" $(( peers == 0 ? 0 : 1 ))
check 'dsh plugin --profile headless add @dsh-seam/agent-tavern @dsh-seam/compaction-effective-projection: both join the profile'"'"'s bundle list after dsh-base and dsh-headless' \
  "$( [ $status -eq 0 ] && [ "$bundles" = '@deepseek-ai/dsh-base @deepseek-ai/dsh-headless @dsh-seam/agent-tavern @dsh-seam/compaction-effective-projection' ] && echo 0 || echo 1)"

status=0
(cd "$work" && DSH_HOME=$home "$app/node_modules/.bin/dsh" --profile headless --dump-config) > "$work/dump-config.yml" 2> "$work/dump-config.err" || status=$?
grep -n '^# == @dsh-seam\|^# == .*patched by @dsh-seam' -A3 "$work/dump-config.yml" | sed 's/^/  /'
for want in '^# == @dsh-seam/agent-tavern$' "^  name: '@dsh-seam/agent-tavern/host'$" '^# == @dsh-seam/compaction-effective-projection$' \
  "^  name: '@dsh-seam/compaction-effective-projection'$" '^# == @deepseek-ai/dsh-base, patched by @dsh-seam/agent-tavern$'; do
  grep -q "$want" "$work/dump-config.yml" || status=1
done
grep -A3 '^# == @deepseek-ai/dsh-base, patched by @dsh-seam/agent-tavern$' "$work/dump-config.yml" | grep 'disabled: true' > /dev/null || status=1
grep -q "^  name: '@dsh-seam/agent-tavern/compaction'$" "$work/dump-config.yml" || status=1
# One compaction service: `dsh plugin` lists AgentTavern's bundle first, so the compaction bundle's layer disables the
# curator's row and its own row serves.
grep -A8 '^# == @dsh-seam/agent-tavern, patched by @dsh-seam/compaction-effective-projection$' "$work/dump-config.yml" | grep -q 'disabled: true' || status=1
check 'dsh --profile headless --dump-config: the @dsh-seam layers; one compaction service (compaction-basic and the curator'"'"'s row disabled, compaction-projection serving)' $status

cli_run stock "$app" "$home" $STOCK_TURNS none dsh-native
log=$(session_of "$home")
stats=$(stats_of "$app" "$log")
echo "stock: ${log#"$work"/}: $stats"
refused=$(json "$stats" 'v.tavernEvents === 0 ? 0 : 1' 2>/dev/null || echo 1)
check "stock CLI, dsh-native asked: no AgentTavern event in the stock log (the binding records the mode)" "$refused"
ok=$(json "$stats" "v.turns === $STOCK_TURNS && v.failedTurns === 0 && v.toolCalls >= $STOCK_TURNS && v.toolErrors === 0 && v.projections === 0 ? 0 : 1" 2>/dev/null || echo 1)
check "stock CLI: runs dsh-native, exit $(cat "$work/stock/status"), $(json "$stats" 'v.turns ?? 0')/$STOCK_TURNS turns completed, $(json "$stats" 'v.toolCalls ?? 0') AgentTavern tool calls answered, no request/projection" \
  "$( [ "$ok" = 0 ] && [ "$(cat "$work/stock/status")" -eq 0 ] && echo 0 || echo 1)"

status=0
[ -n "$log" ] && (cd "$app" && node_modules/.bin/dsh-seam verify "$log") || status=1
check 'stock CLI: the released dsh-seam verify (on stock DSH) rebuilds every request of the stock log' $status

# ---- patched half ------------------------------------------------------------------------------------------------
if [ "${CLI_SMOKE_PATCHED:-1}" = 0 ]; then
  echo 'skipped: patched half (CLI_SMOKE_PATCHED=0)'
  finish
fi
app=$work/patched-app
home=$work/patched-home
status=0
install_app "$app" || status=$?
[ $status -eq 0 ] || tail -n 20 "$app/install.log" "$app/setup.log" || true
sed 's/^/  /' "$app/setup.log" | head -3
versions=$( [ $status -eq 0 ] && dsh_versions "$app" || true)
applied=$(grep -l 'request/projection' "$app"/node_modules/@deepseek-ai/dsh-session/lib/index.js 2>/dev/null | wc -l)
check "patched app: @deepseek-ai/dsh $DSH and the released @dsh-seam/cli, then dsh-seam setup and pnpm install: every dsh-* $DSH, the patches applied" \
  "$( [ $status -eq 0 ] && [ -z "$(echo "$versions" | grep -v "@$DSH\$" || true)" ] && [ "$applied" -eq 1 ] && echo 0 || echo 1)"
[ $status -eq 0 ] || finish

status=0
setup_profile "$app" "$home" || status=$?
[ $status -eq 0 ] || tail -n 20 "$home.plugin.log" || true
check 'patched app: dsh plugin --profile headless add both bundles' $status

cli_run patched "$app" "$home" $PATCHED_TURNS zstd agent-managed
log=$(session_of "$home")
stats=$(stats_of "$app" "$log")
echo "patched: ${log#"$work"/}: $stats"
ok=$(json "$stats" "v.turns === $PATCHED_TURNS && v.failedTurns === 0 && v.toolCalls >= $PATCHED_TURNS && v.toolErrors === 0 && v.tavernEvents === 0 ? 0 : 1" 2>/dev/null || echo 1)
rules=$(node -e '
  const lines = require("fs").readFileSync(process.argv[1], "utf8").split("\n").filter(Boolean).map(line => JSON.parse(line))
  const refused = lines.filter(r => r.kind === "refused")
  console.log(JSON.stringify({ requests: lines.length, refused: refused.length, error: refused[0]?.error ?? null,
    thinking: lines.filter(r => r.thinking && r.tools > 0).length, laterWithCalls: lines.filter(r => r.thinking && r.calls > 0).length }))' "$work/patched/requests.jsonl" 2>/dev/null || echo '{}')
echo "loopback server: $rules"
check "patched CLI: the loopback server enforces DeepSeek's request rules and refused none of $(json "$rules" 'v.requests ?? 0') requests (thinking mode on in $(json "$rules" 'v.thinking ?? 0'), $(json "$rules" 'v.laterWithCalls ?? 0') of them carrying earlier tool-call messages with reasoning_content)" \
  "$(json "$rules" 'v.requests > 0 && v.refused === 0 && v.thinking > 0 && v.laterWithCalls > 0 ? 0 : 1' 2>/dev/null || echo 1)"
check "patched CLI, agent-managed: exit $(cat "$work/patched/status"), $(json "$stats" 'v.turns ?? 0')/$PATCHED_TURNS turns completed with $(json "$stats" 'v.toolCalls ?? 0') tool calls, no AgentTavern event in the log (the binding records agent-managed)" \
  "$( [ "$ok" = 0 ] && [ "$(cat "$work/patched/status")" -eq 0 ] && echo 0 || echo 1)"
status=0
[ -n "$log" ] && (cd "$app" && node_modules/.bin/dsh-seam verify "$log") || status=1
check 'patched CLI: the released dsh-seam verify rebuilds every request from session.jsonl.zstd' $status
status=0
[ -n "$log" ] && (cd "$app" && node_modules/.bin/dsh-seam inspect "$log") > "$work/patched/inspect.txt" 2>&1 || status=1
sed 's/^/  /' "$work/patched/inspect.txt"
projected=$(grep -oE '[0-9]+ projected' "$work/patched/inspect.txt" | grep -oE '[0-9]+' || echo 0)
check "patched CLI: dsh-seam inspect shows AgentTavern's projected requests ($projected)" "$( [ $status -eq 0 ] && [ "${projected:-0}" -gt 0 ] && echo 0 || echo 1)"
finish
