# The pnpm a DeepSeek Harness checkout pins (its package.json `packageManager`), installed from the registry, for
# scripts/source-checkout.sh and scripts/series-checks.sh (both source this file).
#
#   pinned_pnpm PACKAGE_JSON TOOLS
#
# installs it into the folder TOOLS and sets PINNED_PNPM (the `pnpm@<version>` spec) and PINNED_PNPM_BIN (the folder to
# put first on PATH); it returns 1, naming the field, when `packageManager` is not `pnpm@<version>`.
pinned_pnpm() {
  PINNED_PNPM=$(node -e 'console.log(require(process.argv[1]).packageManager ?? "")' "$1") || return 1
  case $PINNED_PNPM in
    pnpm@[0-9]*) ;;
    *) echo "$1: packageManager is '$PINNED_PNPM', not pnpm@<version>" >&2; return 1 ;;
  esac
  mkdir -p "$2"
  echo '{"name":"dsh-checkout-tools","private":true}' > "$2/package.json"
  (cd "$2" && npm install --no-audit --no-fund --loglevel=error "${PINNED_PNPM%%+*}") >&2 || return 1
  PINNED_PNPM_BIN=$2/node_modules/.bin
}
