#!/usr/bin/env bash
# Apply the agent/context seam stack (packages/agent-loop-patch/source/<n>-*/, in order) to a DeepSeek Harness source
# checkout at the series' base, 0.1.1-rc.2.
# Usage: scripts/apply-upstream-patch.sh [--commit] <dsh-clone>
#   --commit  apply with `git am` (one commit per patch) instead of changing the working tree only.
# Refuses a checkout at another version, or whose files the series touches differ from the base's; applies nothing unless the
# whole series applies (`git apply --check` first); says so when the series is already applied.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
SERIES=$root/packages/agent-loop-patch/source
commit=false
if [ "${1:-}" = --commit ]; then commit=true; shift; fi
[ $# -eq 1 ] || { echo "usage: $0 [--commit] <dsh-clone>" >&2; exit 2; }
dsh=$(cd "$1" 2>/dev/null && pwd) || { echo "apply-upstream-patch: $1 is not a directory" >&2; exit 2; }
refuse() { echo "apply-upstream-patch: refusing $dsh: $*" >&2; exit 1; }

node "$root/scripts/dsh-source.mjs" version --need "$(bash "$SERIES/series.sh" base)" "$dsh" >/dev/null || exit 1

patches=("$SERIES"/[0-9]-*/[0-9][0-9][0-9][0-9]-*.patch)
[ -e "${patches[0]}" ] || { echo "apply-upstream-patch: no patch series in $SERIES" >&2; exit 2; }
series=$(mktemp)
trap 'rm -f "$series"' EXIT
cat "${patches[@]}" > "$series"

if git -C "$dsh" apply --reverse --check "$series" 2>/dev/null; then
  echo "apply-upstream-patch: the series is already applied to $dsh"
  exit 0
fi

# Every file the series changes must be the base's: its blob id must match the first pre-image id the stack records for it
# (a later step's pre-image is an earlier step's result).
changed=0
declare -A seen=()
while read -r pre path; do
  [ -z "${seen[$path]:-}" ] || continue
  seen[$path]=1
  [ "$pre" = 0000000 ] && { [ ! -e "$dsh/$path" ] || { echo "  $path: exists, the series creates it"; changed=1; }; continue; }
  [ -f "$dsh/$path" ] || { echo "  $path: missing"; changed=1; continue; }
  blob=$(git hash-object "$dsh/$path")
  case $blob in "$pre"*) ;; *) echo "  $path: blob ${blob:0:12}, the base has $pre"; changed=1 ;; esac
done < <(awk '/^diff --git /{ path = substr($4, 3) } /^index /{ split($2, ids, "\\.\\."); print ids[1], path }' "$series")
[ $changed -eq 0 ] || refuse "the files above differ from DeepSeek Harness $(bash "$SERIES/series.sh" base)"

git -C "$dsh" apply --check "$series" || refuse 'the series does not apply (see the git apply errors above)'
if $commit; then
  git -C "$dsh" rev-parse --git-dir >/dev/null 2>&1 || refuse '--commit needs a git checkout'
  git -C "$dsh" am -q "${patches[@]}"
  echo "apply-upstream-patch: committed ${#patches[@]} patches on $(git -C "$dsh" rev-parse --abbrev-ref HEAD)"
else
  git -C "$dsh" apply "$series"
  echo "apply-upstream-patch: applied ${#patches[@]} patches to the working tree of $dsh"
fi
git apply --numstat "$series" | awk '{ printf "  +%-4s -%-4s %s\n", $1, $2, $3 }'

cat <<EOF

Next steps in $dsh (Node ^22.19 || >=24, pnpm):
  pnpm install
  pnpm run build                     # tsc emits lib/types, tsdown bundles lib/
  pnpm exec vitest run packages/core/agent-loop packages/core/session   # DSH's suites plus the seam specs

Managed mode (a plugin chooses the history each request sends) is then available on every agent:
  - a build with the seam lists it: KNOWN_SESSION_EVENT_TYPES.has('request/projection') (@deepseek-ai/dsh-session);
  - an example policy: the @deepseek-ai/dsh-context-policy-demo plugin (packages/examples/context-policy-demo: recent
    nodes plus anchors, its window start moved in blocks), e.g. after linking it into the profile
      dsh plugin --profile headless add "link:\$PWD/packages/examples/context-policy-demo"
      dsh --profile headless --patch examples/headless-agent/context-policy.patch.yml "<task>"
  - a context policy listens on the agent's own context, so it applies to that agent only:
      agent.ctx.on('agent/context', async ({ nodes, requiredSeqs }, next) => {
        const all = await next()
        return { include: all.include.slice(-20), revision: 'last-20' }   // requiredSeqs and tool units are added
      })
    or mount such a plugin in the agent's preset or setup (e.g. AgentTavern with contextMode 'agent-managed');
  - each partial selection is logged as request/projection; logs that carry it resume only on a build with this
    series (a build without it refuses them with SessionFormatUnsupportedError).
The proposals, one per step with a decision (step 3 is a refactor): $root/rfcs/0001-agent-context-seam.md,
0004-context-policy-example.md, 0003-projection-aware-compaction.md
EOF
