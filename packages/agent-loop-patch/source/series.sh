#!/usr/bin/env bash
# The upstream patch series in this folder: numbered `git format-patch` files against the DeepSeek Harness
# repository at 0.1.0-rc.8, repo-relative paths, each upstream file touched by exactly one patch.
#
#   series.sh checkout DIR     copy the rc.8 snapshot to DIR, commit it (tag rc.8) and `git am` the series;
#                              edit and commit there, then export
#   series.sh export DIR       write DIR's commits after rc.8 back as the series; the Agent Note in the last
#                              commit is refreshed from rfcs/0001-agent-context-seam.md first
#   series.sh apply DIR [PATH...]
#                              copy the snapshot to DIR, `git apply --check` then apply the whole series, commit
#                              it, and print `git diff rc.8 -- PATH...` (a single repo-relative diff)
#
# Env: DSH_SRC, the unmodified rc.8 snapshot (default ../shared/dsh-src/0.1.0-rc.8 beside the repository).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
DSH_SRC=${DSH_SRC:-$root/../shared/dsh-src/0.1.0-rc.8}
NOTE=.agents/notes/proposed/architecture/2026-11-29-agent-context-seam.md
RFC=$root/rfcs/0001-agent-context-seam.md
export GIT_AUTHOR_NAME='dsh-context maintainers' GIT_AUTHOR_EMAIL='maintainers@dsh-context.invalid'
export GIT_COMMITTER_NAME=$GIT_AUTHOR_NAME GIT_COMMITTER_EMAIL=$GIT_AUTHOR_EMAIL
# Fixed base date: the exported files do not change when nothing but the clock moved.
export GIT_COMMITTER_DATE='2026-11-29T00:00:00Z'

die() { echo "series.sh: $*" >&2; exit 1; }

snapshot() { # DIR: a git repository holding the untouched snapshot, tagged rc.8
  [ -f "$DSH_SRC/package.json" ] || die "no DSH snapshot at $DSH_SRC (set DSH_SRC)"
  [ ! -e "$1" ] || die "$1 exists; pass a new directory"
  mkdir -p "$1"
  cp -R "$DSH_SRC/." "$1/"
  chmod -R u+w "$1"
  git -C "$1" init -q
  git -C "$1" add -A
  GIT_AUTHOR_DATE=$GIT_COMMITTER_DATE git -C "$1" commit -q --no-verify -m 'DeepSeek Harness 0.1.0-rc.8 snapshot'
  git -C "$1" tag rc.8
}

patches() { ls "$here"/[0-9][0-9][0-9][0-9]-*.patch 2>/dev/null || die "no patches in $here"; }

case "${1:-}" in
  checkout)
    [ $# -eq 2 ] || die 'usage: series.sh checkout DIR'
    snapshot "$2"
    # shellcheck disable=SC2046
    git -C "$2" am -q --committer-date-is-author-date $(patches)
    echo "series.sh: $(git -C "$2" rev-list --count rc.8..HEAD) patches applied in $2; edit, commit, then: series.sh export $2"
    ;;
  export)
    [ $# -eq 2 ] && git -C "$2" rev-parse -q --verify rc.8 >/dev/null || die 'usage: series.sh export DIR (a series.sh checkout)'
    [ -z "$(git -C "$2" status --porcelain)" ] || die "$2 has uncommitted changes"
    if ! cmp -s "$RFC" "$2/$NOTE"; then
      git -C "$2" log -1 --format=%s | grep -q '^docs' || die "the last commit must be the docs commit that carries $NOTE"
      mkdir -p "$(dirname "$2/$NOTE")"
      cp "$RFC" "$2/$NOTE"
      git -C "$2" add "$NOTE"
      git -C "$2" commit -q --amend --no-edit --no-verify
    fi
    rm -f "$here"/[0-9][0-9][0-9][0-9]-*.patch
    git -C "$2" format-patch -q --zero-commit --no-signature -o "$here" rc.8..HEAD
    for p in $(patches); do echo "${p#"$root"/}"; done
    ;;
  apply)
    [ $# -ge 2 ] || die 'usage: series.sh apply DIR [PATH...]'
    dir=$2
    shift 2
    snapshot "$dir"
    # shellcheck disable=SC2046
    cat $(patches) > "$dir.series.patch"
    git -C "$dir" apply --check "$dir.series.patch" || die "the series does not apply to $DSH_SRC"
    git -C "$dir" apply "$dir.series.patch"
    git -C "$dir" add -A
    git -C "$dir" commit -q --no-verify -m 'agent/context seam series'
    git -C "$dir" diff rc.8 -- "$@"
    ;;
  *) die 'usage: series.sh checkout DIR | export DIR | apply DIR [PATH...]' ;;
esac
