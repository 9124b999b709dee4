#!/usr/bin/env bash
# Build a DeepSeek Harness source checkout at the series' base (0.1.1-rc.2) with the agent/context series applied,
# DSH's way, beside the unpatched checkout, and run AgentTavern in managed mode inside DSH's real headless CLI.
#
#   scripts/source-checkout.sh [--patched-only | --baseline-gates] [CHECKOUT]
#
# CHECKOUT (or DSH_CHECKOUT): DeepSeek Harness at tag dsh-v0.1.1-rc.2, as a git clone (exported at HEAD), a folder
# (copied without node_modules) or a `git archive` tarball (scripts/dsh-source.mjs reads it and refuses any other
# version). It is never modified: two copies are made under $SOURCE_CHECKOUT_WORK
# (default ${TMPDIR:-/tmp}/dsh-source-checkout, emptied first), `unpatched` and `patched`; in `patched` the numbered
# patches of packages/agent-loop-patch/source/ are applied with `git am`, in path order. For each copy:
#   install   pnpm install --frozen-lockfile with the checkout's pinned pnpm (its packageManager), one store for both
#   build     pnpm run build (tsc -b host and client, tsdown): DSH's build, which typechecks src and tests
#   (then the CLI runs below, which need only the builds)
#   gates     pnpm run check:ci:static (DSH's 37 static gates), pnpm run lint:contracts-ready (oxlint) and
#             pnpm run duplication (jscpd); on the unpatched copy only with --baseline-gates (the base passes them all;
#             they cost about 5 minutes). The browser snapshot gate (web-snapshot, `pnpm run test:web:ci`) is not in
#             ci-static and is not run: it needs a Chromium download.
#   tests     DSH's coverage lane on the whole monorepo, as check:ci:coverage runs it: every suite instrumented
#             (`vitest run --coverage`, per-file 100% thresholds, DSH_COVERAGE_EXEMPT_HEAVY=1) and the heavy suites of
#             scripts/coverage-exempt.ts uninstrumented beside it, with coverage reported even when a test fails, as the
#             unprivileged user `nobody` when run as root, so DSH's permission tests mean what they say
# then prints both runs side by side per package (the series' packages and their dependents, from
# scripts/source-checkout/dependents.mjs; every other package in one row): no new failure, every new test passing,
# and no file the series can affect (its packages and their dependents) newly or further below a coverage threshold
# (the rule, with its re-measure of a package's own suites on both copies, is in
# scripts/source-checkout/compare-coverage.mjs's header). It runs the built CLI,
# `dsh --profile headless`, offline against a loopback DeepSeek-compatible server (scripts/source-checkout/
# mock-deepseek.mjs) with AgentTavern and projection-aware compaction inserted by `--patch` overlays:
#   patched    agent-managed, $TURNS turns with tool calls, a $WINDOW-token window; the persisted session.jsonl.zstd
#              passes `dsh-seam verify` and `dsh-seam inspect` shows its projected requests
#   unpatched  agent-managed is refused with AgentTavern's mode-unavailable warning and runs dsh-native; dsh-native runs
# Last, in each copy, DSH's Python SDK smoke (scripts/smoke-python-runtime.py, every scenario) against its expected
# outputs, on DSH's node carrier (scripts/source-checkout/python-sdk.sh; python3 needs pydantic >= 2.12).
# The last line is `N passed, N failed` over the checks listed above it. --patched-only skips the unpatched copy.
# Env: SOURCE_CHECKOUT_WORK, TURNS (default 24), WINDOW (default 24000); SOURCE_CHECKOUT_EXTRA: patch files
# (`git format-patch` output) applied with `git am` after the series, to try fixes before they join the series
# (the run says so; CI sets none).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
usage='usage: scripts/source-checkout.sh [--patched-only | --baseline-gates] [CHECKOUT]'
flag=
case ${1:-} in --patched-only | --baseline-gates) flag=$1; shift ;; esac
[ $# -le 1 ] || { echo "$usage" >&2; exit 2; }
# Checked against the series' base, and absolute, before the toolchain runs this script from the repository root.
BASE=$(bash "$root/packages/agent-loop-patch/source/series.sh" base)
checkout=$(node "$root/scripts/dsh-source.mjs" path --need "$BASE" "$@") || exit 2
if [ -z "${DSH_SEAM_TOOLCHAIN:-}" ]; then
  DSH_SEAM_TOOLCHAIN=1 exec sh "$root/scripts/toolchain.sh" bash "$root/scripts/source-checkout.sh" $flag "$checkout"
fi
here=$root/scripts/source-checkout
SERIES=$root/packages/agent-loop-patch/source
WORK=${SOURCE_CHECKOUT_WORK:-${TMPDIR:-/tmp}/dsh-source-checkout}
TURNS=${TURNS:-24}
WINDOW=${WINDOW:-24000}
die() { echo "source-checkout: $*" >&2; exit 2; }

baseline=true
baseline_gates=false
case $flag in
  --patched-only) baseline=false ;;
  --baseline-gates) baseline_gates=true ;;
esac
src=$checkout
mapfile -t patches < <(find "$SERIES" -name '[0-9][0-9][0-9][0-9]-*.patch' | LC_ALL=C sort)
[ ${#patches[@]} -gt 0 ] || die "no numbered patches under $SERIES"

rm -rf "$WORK"
mkdir -p "$WORK"
chmod 755 "$WORK"
T_START=$(date +%s)
declare -a CHECKS TIMES
check() { # name, status (0 = pass)
  if [ "$2" -eq 0 ]; then CHECKS+=("pass  $1"); else CHECKS+=("FAIL  $1"); fi
}
timed() { # label, command...: run, record the wall time, keep the status
  local t0=$SECONDS status=0
  "${@:2}" || status=$?
  TIMES+=("$(printf '%-34s %4ds' "$1" $((SECONDS - t0)))")
  return $status
}
step() { printf '\n== %s  (+%ds)\n' "$*" $(($(date +%s) - T_START)); }

# --- the two copies ------------------------------------------------------------------------------------------------
export GIT_AUTHOR_NAME='dsh-seam source-checkout' GIT_AUTHOR_EMAIL='source-checkout@dsh-seam.invalid'
export GIT_COMMITTER_NAME=$GIT_AUTHOR_NAME GIT_COMMITTER_EMAIL=$GIT_AUTHOR_EMAIL
copy_checkout() { # dir: an untouched copy of the checkout in dir, committed (DSH's build and jscpd need a git repository)
  node "$root/scripts/dsh-source.mjs" export --need "$BASE" "$src" "$1" >/dev/null || die "copying $src failed"
  git -C "$1" init -q
  git -C "$1" add -A
  git -C "$1" commit -q --no-verify -m "DeepSeek Harness $BASE"
  # The base the series applies to, as series.sh names it: `series.sh catalogs|export $WORK/patched` work on this copy.
  git -C "$1" tag base
}

step "copies of $src"
trees=(patched)
$baseline && trees=(unpatched patched)
for tree in "${trees[@]}"; do timed "copy ($tree)" copy_checkout "$WORK/$tree"; done
if git -C "$WORK/patched" am -q "${patches[@]}"; then
  echo "applied ${#patches[@]} patches with git am:"
  git -C "$WORK/patched" log --format='  %h %s' --reverse HEAD~${#patches[@]}..HEAD
  check "the series (${#patches[@]} patches) applies with git am" 0
else
  git -C "$WORK/patched" am --abort || true
  check "the series (${#patches[@]} patches) applies with git am" 1
  die 'the series does not apply to this checkout'
fi

if [ -n "${SOURCE_CHECKOUT_EXTRA:-}" ]; then
  read -r -a extra <<< "$SOURCE_CHECKOUT_EXTRA"
  git -C "$WORK/patched" am -q "${extra[@]}" || die "the extra patches do not apply: ${extra[*]}"
  echo "EXTRA patches applied after the series (not part of it): ${extra[*]}"
  check "extra patches applied after the series: ${extra[*]##*/}" 0
fi

# --- DSH's pinned pnpm, install, build ------------------------------------------------------------------------------
# shellcheck source=scripts/pinned-pnpm.sh
. "$root/scripts/pinned-pnpm.sh"
pinned_pnpm "$WORK/patched/package.json" "$WORK/tools" || die "the checkout's pnpm could not be installed"
DSH_PATH=$PINNED_PNPM_BIN:$PATH
export CI=true
dsh() { # tree, command...: run a command in a checkout with its pinned pnpm first on PATH
  local tree=$1
  shift
  (cd "$WORK/$tree" && PATH=$DSH_PATH DSH_CLIENT_COMMIT_HASH=$(git rev-parse --short HEAD) "$@")
}

declare -A GATES
for tree in "${trees[@]}"; do
  step "install and build ($tree, $PINNED_PNPM)"
  timed "install ($tree)" dsh "$tree" pnpm install --frozen-lockfile --store-dir "$WORK/store" > "$WORK/$tree.install.log" 2>&1 \
    || { tail -30 "$WORK/$tree.install.log"; die "pnpm install failed in $tree"; }
  status=0
  timed "build ($tree)" dsh "$tree" pnpm run build > "$WORK/$tree.build.log" 2>&1 || status=$?
  GATES[$tree.build]=$status
  if [ $status -ne 0 ]; then
    echo "pnpm run build failed in $tree:"
    grep -E 'error TS|ERROR|Error:' "$WORK/$tree.build.log" | head -40
  else
    echo "pnpm run build: ok"
  fi
done
$baseline && check 'unpatched: pnpm run build' "${GATES[unpatched.build]}"
check "patched: pnpm run build (tsc -b host + client, src and tests; tsdown)" "${GATES[patched.build]}"

# --- AgentTavern managed in the real headless CLI (needs the builds only) ------------------------------------------
source "$here/cli-runs.sh"

# --- DSH's gates ---------------------------------------------------------------------------------------------------
gate_trees=(patched)
$baseline && $baseline_gates && gate_trees=(unpatched patched)
for tree in "${gate_trees[@]}"; do
  step "static gates ($tree)"
  status=0
  timed "check:ci:static ($tree)" dsh "$tree" pnpm run check:ci:static > "$WORK/$tree.gates.log" 2>&1 || status=$?
  GATES[$tree.static]=$status
  GATES[$tree.static.line]=$(grep -E '^run-gates: [0-9]+ passed' "$WORK/$tree.gates.log" | tail -1 || echo 'run-gates: no summary')
  echo "${GATES[$tree.static.line]}"
  for gate in lint:contracts-ready duplication; do
    status=0
    timed "$gate ($tree)" dsh "$tree" pnpm run "$gate" > "$WORK/$tree.$gate.log" 2>&1 || status=$?
    GATES[$tree.$gate]=$status
    if [ $status -eq 0 ]; then echo "pnpm run $gate: ok"; else echo "pnpm run $gate: FAILED"; tail -25 "$WORK/$tree.$gate.log"; fi
  done
done
step 'static gates side by side'
gate_logs=()
for tree in "${gate_trees[@]}"; do gate_logs+=("$tree=$WORK/$tree.gates.log"); done
node "$here/gates-table.mjs" "${gate_logs[@]}"
for tree in "${gate_trees[@]}"; do
  printf '%-10s build %-4s lint %-4s jscpd %s\n' "$tree" \
    "$( [ "${GATES[$tree.build]}" -eq 0 ] && echo ok || echo FAIL)" \
    "$( [ "${GATES[$tree.lint:contracts-ready]}" -eq 0 ] && echo ok || echo FAIL)" \
    "$( [ "${GATES[$tree.duplication]}" -eq 0 ] && echo ok || echo FAIL)"
done
check "patched: pnpm run check:ci:static (${GATES[patched.static.line]#run-gates: })" "${GATES[patched.static]}"
check 'patched: pnpm run lint:contracts-ready (oxlint)' "${GATES[patched.lint:contracts-ready]}"
check 'patched: pnpm run duplication (jscpd)' "${GATES[patched.duplication]}"

# --- DSH's coverage lane on the whole monorepo, unprivileged -------------------------------------------------------
step 'dependents of the packages the series touches (the rows of the side-by-side table)'
PATH=$DSH_PATH node "$here/dependents.mjs" "$WORK/patched" "${patches[@]}" > "$WORK/dependents.json"
node -e 'const d = require(process.argv[1]); console.log(`touched: ${d.touched.join(", ")}\n${d.dependents.length} packages depend on them (themselves included)`)' "$WORK/dependents.json"
# The suites check:ci:coverage runs uninstrumented beside the instrumented run, read from the checkout's own list.
mapfile -t exempt < <(cd "$WORK/patched" && PATH=$DSH_PATH node --input-type=module \
  -e "for (const s of (await import('./scripts/coverage-exempt.ts')).coverageExemptHeavySuites) console.log(s.filter)")
[ ${#exempt[@]} -gt 0 ] || die 'scripts/coverage-exempt.ts lists no suites'

runner=()
if [ "$(id -u)" -eq 0 ]; then
  if command -v setpriv >/dev/null && setpriv --reuid=nobody --regid=nogroup --clear-groups test -r "$WORK/patched/package.json"; then
    runner=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
    echo 'tests run as nobody (setpriv): root would pass the permission checks DSH tests expect to fail'
  else
    echo 'tests run as root: setpriv is missing or nobody cannot read the work folder; permission tests fail as root'
  fi
fi
mkdir -p "$WORK/results" "$WORK/home"
summary() { # report, label
  node -e 'const r = require(process.argv[1]); console.log(`${process.argv[2]}: ${r.testResults.length} files: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${r.numPendingTests + r.numTodoTests} skipped`)' "$1" "$2"
}
vitest_in() { # tree report log [env=value...] -- [vitest args...]: one vitest run as the runner, with a JSON report
  local tree=$1 report=$2 log=$3 vars=()
  shift 3
  while [ "$1" != -- ]; do vars+=("$1"); shift; done
  shift
  (cd "$WORK/$tree" && env HOME="$WORK/home" IS_SANDBOX=1 CI=true PATH="$DSH_PATH" "${vars[@]}" "${runner[@]}" \
    node_modules/.bin/vitest run "$@" --maxWorkers=2 --reporter=dot --reporter=json --outputFile.json="$report") > "$log" 2>&1 || true
}
run_tests() { # tree: check:ci:coverage's two runs, each with a JSON report (and coverage reported even when a test fails)
  local out=$WORK/results/$1
  mkdir -p "$WORK/$1/node_modules/.vite-temp" "$WORK/$1/node_modules/.vite"
  # The unprivileged user owns the checkout it tests, as a contributor owns theirs: DSH's specs write temporary
  # folders inside the tree (typert's generated schemas, the SDK's relative-cwd probe, the session index).
  if [ ${#runner[@]} -gt 0 ]; then chown -R nobody:nogroup "$WORK/$1" "$WORK/results" "$WORK/home"; fi
  vitest_in "$1" "$out.json" "$WORK/$1.tests.log" DSH_COVERAGE_EXEMPT_HEAVY=1 -- --coverage --coverage.reportOnFailure
  vitest_in "$1" "$out.exempt.json" "$WORK/$1.exempt.log" -- "${exempt[@]}"
  # Back to the invoking user, so git (which refuses a repository another user owns) and series.sh work on it after.
  if [ ${#runner[@]} -gt 0 ]; then chown -R "$(id -u):$(id -g)" "$WORK/$1" "$WORK/results" "$WORK/home"; fi
  [ -f "$out.json" ] || { tail -40 "$WORK/$1.tests.log"; die "vitest wrote no coverage-run report in $1"; }
  [ -f "$out.exempt.json" ] || { tail -40 "$WORK/$1.exempt.log"; die "vitest wrote no report of the uninstrumented suites in $1"; }
  summary "$out.json" "$1, instrumented (test:coverage)"
  summary "$out.exempt.json" "$1, uninstrumented (test:coverage-exempt-heavy)"
}
remeasure_packages() { # the packages in remeasure: their own suites with coverage of them alone, in both checkouts
  local filters=() includes=() tree
  # vitest filters match substrings of test paths: `<dir>/` runs the package's own tests (and any under a longer path
  # containing it, on both copies alike).
  for dir in "${remeasure[@]}"; do filters+=("$dir/"); includes+=("--coverage.include=$dir/src/**"); done
  for tree in unpatched patched; do
    if [ ${#runner[@]} -gt 0 ]; then chown -R nobody:nogroup "$WORK/$tree" "$WORK/results" "$WORK/home"; fi
    vitest_in "$tree" "$WORK/results/$tree.remeasure.json" "$WORK/$tree.remeasure.log" DSH_COVERAGE_EXEMPT_HEAVY=1 -- \
      "${filters[@]}" --coverage --coverage.reportOnFailure "${includes[@]}" --coverage.reporter=json-summary \
      "--coverage.reportsDirectory=$WORK/results/$tree.remeasure-coverage"
    if [ ${#runner[@]} -gt 0 ]; then chown -R "$(id -u):$(id -g)" "$WORK/$tree" "$WORK/results" "$WORK/home"; fi
    [ -f "$WORK/results/$tree.remeasure-coverage/coverage-summary.json" ] \
      || { tail -40 "$WORK/$tree.remeasure.log"; die "vitest wrote no re-measure coverage summary in $tree"; }
  done
}
for tree in "${trees[@]}"; do
  step "DSH's coverage lane on the whole monorepo ($tree)"
  timed "coverage lane ($tree)" run_tests "$tree"
done
if $baseline; then
  step 'unpatched vs patched: tests, per package'
  status=0
  node "$here/compare-tests.mjs" "$WORK/dependents.json" "$WORK/unpatched" "$WORK/results/unpatched.json,$WORK/results/unpatched.exempt.json" \
    "$WORK/patched" "$WORK/results/patched.json,$WORK/results/patched.exempt.json" || status=$?
  check 'whole-monorepo tests: no new failure, no test lost, every new test passes' $status
  step 'unpatched vs patched: per-file coverage thresholds (100%)'
  status=0
  node "$here/compare-coverage.mjs" "$WORK/unpatched.tests.log" "$WORK/patched.tests.log" "$WORK/dependents.json" \
    --flagged "$WORK/coverage-flagged.txt" || status=$?
  if [ $status -eq 3 ]; then
    # Counted pairs outside the files the series changes: DSH's coverage of a file can depend on what else runs, so each
    # one's package is re-measured with its own suites, instrumented for that package only, on both checkouts.
    mapfile -t remeasure < <(cut -d' ' -f1 "$WORK/coverage-flagged.txt" | sort -u)
    step "re-measuring ${remeasure[*]} with their own suites on both checkouts"
    timed 're-measure (both)' remeasure_packages
    status=0
    node "$here/compare-coverage.mjs" --remeasured "$WORK/coverage-flagged.txt" \
      "$WORK/results/unpatched.remeasure-coverage/coverage-summary.json" \
      "$WORK/results/patched.remeasure-coverage/coverage-summary.json" || status=$?
  fi
  check 'per-file coverage: no file the series can affect newly or further below the threshold (compare-coverage.mjs)' $status
else
  status=$(node -e 'console.log(process.argv.slice(1).some(f => require(f).numFailedTests > 0) ? 1 : 0)' "$WORK/results/patched.json" "$WORK/results/patched.exempt.json")
  check 'whole-monorepo tests (patched only): no failing test' "$status"
  status=0
  node "$here/compare-coverage.mjs" /dev/null "$WORK/patched.tests.log" || status=$?
  check 'per-file coverage (patched only): no file below the threshold' $status
fi

# --- the Python SDK's smoke and expected outputs (last: its deploy leaves the trees' installs changed) --------------
source "$here/python-sdk.sh"

# --- summary -------------------------------------------------------------------------------------------------------
step 'times'
printf '  %s\n' "${TIMES[@]}"
printf '  %-34s %4ds\n' total $(($(date +%s) - T_START))
step 'checks'
printf '  %s\n' "${CHECKS[@]}"
passed=$(printf '%s\n' "${CHECKS[@]}" | grep -c '^pass' || true)
failed=$(printf '%s\n' "${CHECKS[@]}" | grep -c '^FAIL' || true)
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
