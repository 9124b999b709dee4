#!/usr/bin/env bash
# Checks of the upstream source series (packages/agent-loop-patch/source/) on its base, DeepSeek Harness 0.1.1-rc.2:
#  (a) the steps apply in order with `git am` (series.sh checkout), each step's changed-line count per file
#  (b) after each step, on DSH's own install of the base (its pinned pnpm, --frozen-lockfile), DSH's suites of every
#      package the series touches pass (vitest, packages from source, as DSH runs them), the count per step printed;
#      after the last step, the keyless headless snapshots of the example and of projection-aware compaction, and the
#      TypeScript SDK snapshots (the context-policy scenario carries request/projection), too
#  (c) after each step, DSH's generated-artifact gates the series feeds: persistence catalog, scoped events, cordis
#      catalog, doc graphs, translation pairing, Agent Note format; after the last step, the host typecheck (src and
#      tests, as DSH's build compiles them) and knip
#  (d) drift: the series' generated seam modules and Agent Notes equal what the workspace generates (series.sh check)
#  (e) no listener, no change: one scripted conversation (series-checks/no-listener.spec.ts) run on the unmodified base
#      and on the last step sends the same requests and writes the same log, byte for byte
# DSH's build, its static gates, oxlint, jscpd and the coverage lane on the whole monorepo are
# scripts/source-checkout.sh's; the compiled npm patches are scripts/upstream-checks.sh's.
# Usage: scripts/series-checks.sh [CHECKOUT]   CHECKOUT (or DSH_CHECKOUT): DSH at tag dsh-v0.1.1-rc.2 (a git clone,
# folder or `git archive` tarball; only read). Env: SERIES_WORK (default $TMPDIR/dsh-seam-series, emptied first).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[ $# -le 1 ] || { echo 'usage: scripts/series-checks.sh [CHECKOUT]' >&2; exit 2; }
SERIES=$root/packages/agent-loop-patch/source
checkout=$(node "$root/scripts/dsh-source.mjs" path --need "$(bash "$SERIES/series.sh" base)" "$@") || exit 2
if [ -z "${DSH_SEAM_TOOLCHAIN:-}" ]; then
  DSH_SEAM_TOOLCHAIN=1 exec sh "$root/scripts/toolchain.sh" bash "$root/scripts/series-checks.sh" "$checkout"
fi
WORK=${SERIES_WORK:-${TMPDIR:-/tmp}/dsh-seam-series}
rm -rf "$WORK"
mkdir -p "$WORK"
T0=$(date +%s)
step() { printf '\n== %s  (+%ds)\n' "$*" $(($(date +%s) - T0)); }
export DSH_CHECKOUT=$checkout CI=true

step "(a) the series applied to $checkout in order"
bash "$SERIES/series.sh" checkout "$WORK/dsh"
tree=$WORK/dsh
git -C "$tree" config core.hooksPath /dev/null
mapfile -t ends < <(for dir in "$SERIES"/[0-9]-*/; do ls "$dir"[0-9]*.patch | wc -l; done)
mapfile -t names < <(for dir in "$SERIES"/[0-9]-*/; do basename "$dir"; done)

# shellcheck source=scripts/pinned-pnpm.sh
. "$root/scripts/pinned-pnpm.sh"
pinned_pnpm "$tree/package.json" "$WORK/tools" || { echo "series-checks: the checkout's pnpm could not be installed" >&2; exit 1; }
export PATH=$PINNED_PNPM_BIN:$PATH
step "install ($PINNED_PNPM, --frozen-lockfile)"
(cd "$tree" && pnpm install --frozen-lockfile --store-dir "$WORK/store" > "$WORK/install.log" 2>&1) \
  || { tail -30 "$WORK/install.log"; echo 'series-checks: pnpm install failed' >&2; exit 1; }

mapfile -t sources < <(git -C "$tree" diff --name-only base HEAD -- 'packages/*/*/src/*' | cut -d/ -f1-3 | sort -u)
[ ${#sources[@]} -gt 0 ] || { echo 'series-checks: the series touches no package source' >&2; exit 1; }
# A package whose sources the series changes runs its whole suite; one where it only adds or changes tests runs those
# test files (the rest of such a suite is the base's, and as root some of DSH's permission tests cannot pass).
mapfile -t specs < <(git -C "$tree" diff --name-only base HEAD -- 'packages/*/*/tests/*' \
  | while read -r file; do case " ${sources[*]} " in *" $(cut -d/ -f1-3 <<<"$file") "*) ;; *) echo "$file" ;; esac; done)
touched=("${sources[@]}" "${specs[@]}")
GATES=(verify-persistence-catalog verify-scoped-events verify-cordis-catalog verify-doc-graphs verify-translation-pairing
  verify-agent-note-format)
failed=0
at=0
mapfile -t commits < <(git -C "$tree" rev-list --reverse base..HEAD)
# (e) no listener, no change: one scripted conversation (series-checks/no-listener.spec.ts, copied into the tree's
# agent-loop tests for the run and removed after) on the unmodified base and on the last step, compared byte for byte.
no_listener() { # label: writes $WORK/no-listener.<label>.json
  local spec=packages/core/agent-loop/tests/no-listener-differential.spec.ts
  cp "$root/scripts/series-checks/no-listener.spec.ts" "$tree/$spec"
  local status=0
  (cd "$tree" && NO_LISTENER_OUT="$WORK/no-listener.$1.json" pnpm exec vitest run "$spec" > "$WORK/no-listener.$1.log" 2>&1) || status=$?
  rm -f "$tree/$spec"
  return $status
}
last=$(git -C "$tree" rev-parse HEAD)
git -C "$tree" checkout -q base
no_listener base || { tail -20 "$WORK/no-listener.base.log"; echo 'series-checks: the no-listener conversation failed on the base' >&2; exit 1; }
for i in "${!names[@]}"; do
  first=${commits[at]}
  at=$((at + ends[i]))
  git -C "$tree" checkout -q "${commits[at - 1]}"
  step "(a) step ${names[i]} changes (added, deleted)"
  git -C "$tree" diff --numstat "$first^" HEAD \
    | awk '{ printf "  %5s %5s  %s\n", $1, $2, $3 }'
  step "(b) DSH's suites of ${touched[*]} after step ${names[i]}"
  if (cd "$tree" && pnpm exec vitest run "${touched[@]}" > "$WORK/step-$((i + 1)).tests.log" 2>&1); then
    grep -E 'Test Files|Tests ' "$WORK/step-$((i + 1)).tests.log" | sed 's/\x1b\[[0-9;]*m//g'
  else
    grep -E 'FAIL|Test Files|Tests ' "$WORK/step-$((i + 1)).tests.log" | sed 's/\x1b\[[0-9;]*m//g' | head -20
    failed=$((failed + 1))
  fi
  step "(c) generated-artifact gates after step ${names[i]}"
  for gate in "${GATES[@]}"; do
    if (cd "$tree" && pnpm run -s "$gate" > "$WORK/gate.log" 2>&1); then echo "  pass  $gate"
    else echo "  FAIL  $gate"; tail -5 "$WORK/gate.log"; failed=$((failed + 1)); fi
  done
done

step '(c) after the last step: the host typecheck (src and tests, as `pnpm run build` compiles them) and knip'
if (cd "$tree" && pnpm exec tsc -b tsconfig.host.json > "$WORK/tsc.log" 2>&1); then echo '  pass  tsc -b tsconfig.host.json'
else echo '  FAIL  tsc -b tsconfig.host.json'; grep -m 5 'error TS' "$WORK/tsc.log"; failed=$((failed + 1)); fi
if (cd "$tree" && pnpm run -s knip > "$WORK/knip.log" 2>&1); then echo '  pass  knip'
else echo '  FAIL  knip'; tail -5 "$WORK/knip.log"; failed=$((failed + 1)); fi

step '(b) the keyless headless snapshots: the context-policy example, and projection-aware compaction over it'
if (cd "$tree" && pnpm exec vitest run --config vitest.snapshot.config.ts examples/headless-agent/tests/headless.snapshot.ts \
  -t 'context-policy|projected request' > "$WORK/snapshot.log" 2>&1); then
  grep -E 'Test Files|Tests ' "$WORK/snapshot.log" | sed 's/\x1b\[[0-9;]*m//g'
else
  grep -E 'FAIL|Test Files|Tests ' "$WORK/snapshot.log" | sed 's/\x1b\[[0-9;]*m//g' | head; failed=$((failed + 1))
fi

step '(b) the TypeScript SDK snapshots, the context-policy scenario among them (SDK expected outputs for request/projection)'
if (cd "$tree" && pnpm exec vitest run --config vitest.snapshot.config.ts examples/jsonrpc-agent/tests/sdk.snapshot.ts \
  > "$WORK/sdk-snapshot.log" 2>&1); then
  grep -E 'Test Files|Tests ' "$WORK/sdk-snapshot.log" | sed 's/\x1b\[[0-9;]*m//g'
else
  grep -E 'FAIL|Test Files|Tests ' "$WORK/sdk-snapshot.log" | sed 's/\x1b\[[0-9;]*m//g' | head; failed=$((failed + 1))
fi

step '(e) no listener, no change: the same conversation on the unmodified base and on the last step'
git -C "$tree" checkout -q "$last"
if no_listener series && cmp -s "$WORK/no-listener.base.json" "$WORK/no-listener.series.json"; then
  echo "  pass  6 requests and the whole log ($(wc -c < "$WORK/no-listener.base.json") bytes of canonical JSON) equal the base's, byte for byte"
else
  echo '  FAIL  the series without a listener sends or logs something the base does not:'
  diff <(tr ',' '\n' < "$WORK/no-listener.base.json") <(tr ',' '\n' < "$WORK/no-listener.series.json") | head -10
  failed=$((failed + 1))
fi

step '(d) drift: the seam modules and Agent Notes are what the workspace generates'
bash "$SERIES/series.sh" check || failed=$((failed + 1))

[ $failed -eq 0 ] || { printf '\nseries-checks: %d checks failed in %ss\n' $failed $(($(date +%s) - T0)); exit 1; }
printf '\nseries-checks: all checks passed in %ss\n' $(($(date +%s) - T0))
