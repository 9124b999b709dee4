#!/usr/bin/env bash
# The upstream patch series in this folder: a stack of `git format-patch` series against the DeepSeek Harness
# repository at 0.1.1-rc.2 (tag dsh-v0.1.1-rc.2), one folder per stack step (one upstream PR each), applied in folder
# order, each applying and passing on the steps before it:
#   1-agent-context/            the seam: request/projection (event, fold, checker), agent/context, the host, invariant
#   2-context-policy/           an example policy package (recent nodes plus anchors, a window start moved in blocks;
#                               packages/examples/context-policy-demo) and the headless and JSON-RPC examples wiring it
#   3-compaction-basic-shared/  a refactor of dsh-compaction-basic with no behaviour change: target resolution in config.ts,
#                               the pressure-failure warning a protected method, for the next step to share
#   4-projection-compaction/    projection-aware compaction inside dsh-compaction-basic (its /projection entry)
# A step ends with the docs commit that adds its Agent Note (STEPS below); a step without a note (a refactor) is the
# number of commits its entry gives. The seam's modules in DSH are generated
# from the workspace modules by generate.ts (the workspace is their one source); `sync` regenerates them.
#
#   series.sh checkout DIR     copy the base snapshot to DIR, commit it (tag base) and `git am` every step
#   series.sh sync DIR         in a checkout: regenerate the generated files and render each step's Agent Note (and its
#                              zh twin and pair record) from its rfcs/ files with notes.ts, amending the commits that
#                              carry them (a rebase onto base in DIR)
#   series.sh catalogs DIR     in a whole, installed monorepo checkout of the series: regenerate, at each step's
#                              docs commit, the catalogs and graphs DSH generates from sources (cordis catalog, doc
#                              graphs, config and persistence catalogs, module graph) with DSH's own generators,
#                              amending the docs commits
#   series.sh export DIR       sync, then write DIR's commits after base back as the series, split into step folders
#   series.sh apply DIR [--steps N] [PATH...]
#                              copy the snapshot to DIR, `git apply --check` then apply the first N steps (default
#                              all), commit, and print `git diff base -- PATH...` (a single repo-relative diff)
#   series.sh check            drift check: checkout + sync in a temporary folder; fails when sync changes anything
#   series.sh base             the DeepSeek Harness version the series applies to
#
# Env: DSH_CHECKOUT, a DeepSeek Harness checkout at the base version (a git clone, a folder or a `git archive`
# tarball; scripts/dsh-source.mjs reads it and refuses any other version). It is only read: the snapshot the commands
# start from is a copy of it, committed and tagged base.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
BASE=0.1.1-rc.2
NOTES=.agents/notes/implemented/architecture
# step folder | RFC | Agent Note it becomes in the step's docs commit (or: step folder | | its number of commits)
STEPS=(
  "1-agent-context|rfcs/0001-agent-context-seam.md|$NOTES/2026-11-29-agent-context-seam.md"
  "2-context-policy|rfcs/0004-context-policy-example.md|$NOTES/2026-11-29-context-policy-example.md"
  "3-compaction-basic-shared||1"
  "4-projection-compaction|rfcs/0003-projection-aware-compaction.md|$NOTES/2026-11-29-projection-aware-compaction.md"
)
export GIT_AUTHOR_NAME='agent-context seam authors' GIT_AUTHOR_EMAIL='agent-context-seam@example.invalid'
export GIT_COMMITTER_NAME=$GIT_AUTHOR_NAME GIT_COMMITTER_EMAIL=$GIT_AUTHOR_EMAIL
# Fixed base date: the exported files do not change when nothing but the clock moved.
export GIT_COMMITTER_DATE='2026-11-29T00:00:00Z'

die() { echo "series.sh: $*" >&2; exit 1; }

snapshot() { # DIR: a git repository holding a copy of DSH_CHECKOUT, committed and tagged base
  [ -n "${DSH_CHECKOUT:-}" ] || die "no DSH checkout: set DSH_CHECKOUT to a DeepSeek Harness $BASE checkout"
  [ ! -e "$1" ] || die "$1 exists; pass a new directory"
  node "$root/scripts/dsh-source.mjs" export --need "$BASE" "$DSH_CHECKOUT" "$1" >/dev/null || exit 1
  git -C "$1" init -q
  git -C "$1" add -A
  GIT_AUTHOR_DATE=$GIT_COMMITTER_DATE git -C "$1" commit -q --no-verify -m "DeepSeek Harness $BASE"
  git -C "$1" tag base
}

step_patches() { # [N]: the patch files of the first N steps (all by default), in order
  local n=${1:-${#STEPS[@]}} i=0 entry dir
  for entry in "${STEPS[@]}"; do
    [ $i -lt "$n" ] || break
    dir=$here/${entry%%|*}
    ls "$dir"/[0-9][0-9][0-9][0-9]-*.patch 2>/dev/null || die "no patches in $dir"
    i=$((i + 1))
  done
}

generated() { node "$here/generate.ts" --list; }

# DSH's bilingual-pair record (docs/i18n/README.md) of EN.md and its .zh.md twin, as
# `pnpm run verify-translation-pairing --write` writes it, staged.
record_pair() {
  printf '%s\n' '# Bilingual-pair consistency record (docs/i18n/README.md): the git blob hash of each' \
    '# side as of the last confirmed-consistent state. Both languages carry equal authority;' \
    '# after editing either side, bring the other along and re-record with:' \
    "#   pnpm run verify-translation-pairing --write $1" \
    "$(basename "$1"): $(git hash-object "$1")" \
    "$(basename "${1%.md}.zh.md"): $(git hash-object "${1%.md}.zh.md")" > "${1%.md}.i18n.yaml"
  git add "${1%.md}.i18n.yaml"
}

# Run inside a checkout after each commit during `sync` (git rebase --exec): regenerate the generated files this
# commit touches and refresh the Agent Note it adds, then amend the commit.
sync_commit() {
  local touched entry rfc note file
  local -a note_pairs=()
  for entry in "${STEPS[@]}"; do rfc=${entry#*|}; [ -z "${rfc%%|*}" ] || note_pairs+=("$root/${rfc%%|*}=${entry##*|}"); done
  touched=$(git diff-tree --no-commit-id --name-only -r HEAD)
  # A commit that carries no generated file (an earlier step's) is not regenerated: its tree may lack what they need.
  if grep -qxF -f <(generated) <<<"$touched"; then node "$here/generate.ts" . >/dev/null; fi
  for file in $(generated); do
    if grep -qxF "$file" <<<"$touched"; then git add "$file"
    elif git cat-file -e "HEAD:$file" 2>/dev/null; then git checkout -q HEAD -- "$file"
    else rm -f "$file"
    fi
  done
  for entry in "${STEPS[@]}"; do
    rfc=${entry#*|}; note=${rfc#*|}; rfc=${rfc%%|*}
    if [ -n "$rfc" ] && grep -qxF "$note" <<<"$touched"; then
      [ -f "$root/$rfc" ] && [ -f "$root/${rfc%.md}.zh.md" ] || die "$rfc or its .zh.md twin is missing; the note $note is made from them"
      node "$here/notes.ts" "$root/$rfc" "${note_pairs[@]}" > "$note"
      node "$here/notes.ts" "$root/${rfc%.md}.zh.md" "${note_pairs[@]}" > "${note%.md}.zh.md"
      record_pair "$note"
      git add "$note" "${note%.md}.zh.md"
    fi
  done
  # Every pair the commit touches is brought along in it, so its record is re-recorded (a commit's own edit of both
  # sides, or a regenerated side).
  local doc
  for doc in $(git diff-tree --no-commit-id --name-only -r HEAD -- '*.md' | sed 's/\.zh\.md$/.md/' | sort -u); do
    if [ -f "${doc%.md}.i18n.yaml" ] && [ -f "$doc" ] && [ -f "${doc%.md}.zh.md" ]; then record_pair "$doc"; fi
  done
  git diff --cached --quiet || git commit -q --amend --no-edit --no-verify
}

# Run inside a whole, installed checkout after each step's docs commit during `catalogs` (git rebase --exec): DSH's own
# generators for the catalogs and graphs the step's sources feed, the reviewed zh sides brought along (the event
# matrix's rows, the persistence catalog's declaration sites and the module graph are the English ones), the pair
# records they touch re-recorded, then amend the commit.
catalogs_commit() {
  pnpm run -s gen-cordis-catalog >/dev/null
  pnpm run -s gen-doc-graphs >/dev/null
  pnpm run -s gen-config-catalog >/dev/null
  pnpm run -s gen-persistence-catalog >/dev/null
  pnpm run -s gen-module-graph >/dev/null
  local matrix=docs/event-producer-consumer catalog=docs/persistence-catalog graph=docs/module-graph
  node "$here/zh-rows.ts" "$matrix.md" "$matrix.zh.md"
  node "$here/zh-sites.ts" "$catalog.md" "$catalog.zh.md"
  # The module graph's diagram and table are the same in both languages: the zh side takes the English side's change.
  if ! git diff --quiet HEAD^ -- "$graph.md"; then
    git show "HEAD^:$graph.zh.md" > "$graph.zh.md"
    git diff HEAD^ -- "$graph.md" | sed "s#$graph.md#$graph.zh.md#g" | git apply
  fi
  local doc
  for doc in "$matrix" "$catalog" "$graph"; do
    if ! git diff --quiet HEAD^ -- "$doc.md" "$doc.zh.md"; then
      pnpm run -s verify-translation-pairing --write "$doc" >/dev/null
    fi
  done
  git add -A docs packages/extensions/tool-cordis/src/api-catalog.ts
  git diff --cached --quiet || git commit -q --amend --no-edit --no-verify
  echo "catalogs: $(git log -1 --format=%s): $(git show --stat --format= HEAD | tail -1)"
}

sync() { # DIR
  git -C "$1" rev-parse -q --verify base >/dev/null || die "$1 is not a series.sh checkout"
  [ -z "$(git -C "$1" status --porcelain)" ] || die "$1 has uncommitted changes"
  local log
  log=$(mktemp)
  git -C "$1" -c core.editor=true rebase -q --committer-date-is-author-date base \
    --exec "bash '$here/series.sh' sync-commit" >"$log" 2>&1 || { cat "$log" >&2; rm -f "$log"; die "sync stopped in $1 (see above)"; }
  rm -f "$log"
}

case "${1:-}" in
  checkout)
    [ $# -eq 2 ] || die 'usage: series.sh checkout DIR'
    snapshot "$2"
    # shellcheck disable=SC2046
    git -C "$2" am -q --committer-date-is-author-date $(step_patches)
    echo "series.sh: $(git -C "$2" rev-list --count base..HEAD) patches applied in $2; edit, commit, then: series.sh export $2"
    ;;
  sync-commit) sync_commit ;;
  catalogs-commit) catalogs_commit ;;
  catalogs)
    [ $# -eq 2 ] || die 'usage: series.sh catalogs DIR'
    git -C "$2" rev-parse -q --verify base >/dev/null || die "$2 is not a series.sh checkout"
    [ -d "$2/node_modules" ] || die "$2 is not installed: catalogs needs the whole monorepo, installed (pnpm install)"
    [ -z "$(git -C "$2" status --porcelain)" ] || die "$2 has uncommitted changes"
    cd "$2"
    # DSH's pinned pnpm checks the install before `pnpm run`; without CI it asks on a terminal the rebase does not have.
    export CI=true
    status=0
    GIT_SEQUENCE_EDITOR="sed -i -E '/^pick [0-9a-f]+ docs: /a exec bash $here/series.sh catalogs-commit'" \
      git -c core.editor=true rebase -q -i --committer-date-is-author-date base || status=$?
    # A bilingual-pair record (two blob hashes) conflicts whenever two steps regenerate the same pair: it is derived,
    # so take either side and re-record it; any other conflict stops here.
    while [ $status -ne 0 ] && [ -d "$(git rev-parse --git-path rebase-merge)" ]; do
      conflicted=$(git diff --name-only --diff-filter=U)
      [ -n "$conflicted" ] && ! grep -qv '\.i18n\.yaml$' <<<"$conflicted" \
        || die "catalogs stopped in $2 on ${conflicted:-a failed exec}: resolve, then git rebase --continue"
      for record in $conflicted; do
        git checkout -q --theirs -- "$record"
        pnpm run -s verify-translation-pairing --write "${record%.i18n.yaml}" >/dev/null
        git add "$record"
      done
      status=0
      GIT_EDITOR=true git -c core.editor=true rebase --continue >/dev/null || status=$?
    done
    [ $status -eq 0 ] || die "catalogs failed in $2 (rebase status $status)"
    ;;
  sync)
    [ $# -eq 2 ] || die 'usage: series.sh sync DIR'
    sync "$2"
    ;;
  export)
    [ $# -eq 2 ] || die 'usage: series.sh export DIR'
    sync "$2"
    # The series carries one author and one date: the identity of the machine that made a commit never leaves it.
    foreign=$(git -C "$2" log --format='%h %an <%ae>' base..HEAD | grep -vF " $GIT_AUTHOR_NAME <$GIT_AUTHOR_EMAIL>" || true)
    [ -z "$foreign" ] || die "commits by another author than the series': $foreign"
    [ "$(git -C "$2" log --format=%aI base..HEAD | sort -u | wc -l)" -le 1 ] || die "the series' commits carry more than one author date"
    commits=$(git -C "$2" rev-list --reverse base..HEAD)
    base=base
    for entry in "${STEPS[@]}"; do
      dir=$here/${entry%%|*}; note=${entry##*|}; rfc=${entry#*|}; rfc=${rfc%%|*}
      end=''
      if [ -z "$rfc" ]; then
        end=$(head -n "$note" <<<"$commits" | tail -n 1)
        [ "$(grep -c . <<<"$commits")" -ge "$note" ] || die "fewer than $note commits after $base for ${entry%%|*}"
      fi
      for c in $commits; do
        [ -z "$end" ] || break
        if git -C "$2" diff-tree --no-commit-id --name-only --diff-filter=A -r "$c" | grep -qxF "$note"; then end=$c; break; fi
      done
      [ -n "$end" ] || die "no commit after $base adds $note: every step ends with the docs commit that adds its note"
      rm -rf "$dir"
      git -C "$2" format-patch -q --zero-commit --no-signature -o "$dir" "$base..$end"
      for p in "$dir"/*.patch; do echo "${p#"$root"/}"; done
      commits=$(git -C "$2" rev-list --reverse "$end..HEAD")
      base=$end
    done
    [ -z "$commits" ] || die "commits after the last step's docs commit: $(git -C "$2" log --format=%s "$base..HEAD" | tr '\n' ';')"
    ;;
  apply)
    [ $# -ge 2 ] || die 'usage: series.sh apply DIR [--steps N] [PATH...]'
    dir=$2
    shift 2
    n=${#STEPS[@]}
    if [ "${1:-}" = --steps ]; then n=$2; shift 2; fi
    snapshot "$dir"
    # shellcheck disable=SC2046
    cat $(step_patches "$n") > "$dir.series.patch"
    git -C "$dir" apply --check "$dir.series.patch" || die "the first $n steps do not apply to $DSH_CHECKOUT"
    git -C "$dir" apply "$dir.series.patch"
    git -C "$dir" add -A
    git -C "$dir" commit -q --no-verify -m "agent/context seam series, steps 1-$n"
    git -C "$dir" diff base -- "$@"
    ;;
  check)
    [ $# -eq 1 ] || die 'usage: series.sh check'
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    "$0" checkout "$tmp/dsh" >/dev/null
    before=$(git -C "$tmp/dsh" rev-parse HEAD)
    sync "$tmp/dsh"
    if [ "$(git -C "$tmp/dsh" rev-parse HEAD)" != "$before" ]; then
      git -C "$tmp/dsh" diff --stat "$before" HEAD >&2
      git -C "$tmp/dsh" diff "$before" HEAD | head -60 >&2 || true
      die 'drift: the series differs from what the workspace modules and rfcs/ generate; run checkout, sync, export'
    fi
    echo "series.sh: no drift: $(generated | wc -l) generated files and $(printf '%s\n' "${STEPS[@]}" | grep -cv '^[^|]*||') Agent Notes equal what the workspace generates"
    ;;
  base) echo "$BASE" ;;
  *) die 'usage: series.sh checkout DIR | sync DIR | catalogs DIR | export DIR | apply DIR [--steps N] [PATH...] | check | base' ;;
esac
