# AgentTavern in DSH's real headless CLI, sourced by scripts/source-checkout.sh (uses its WORK, here, root, trees,
# TURNS, WINDOW, step, timed, check). Each run boots the built `apps/cli/lib/bin.js --profile headless` of one
# checkout, offline, against its own loopback server (mock-deepseek.mjs), with the plugins bundled against that
# checkout (bundle-plugins.mjs) and inserted by `--patch` overlays rendered from this folder's *.patch.yml.

source "$here/mock.sh"

TASK='Turn 1: The ferry waits at the Grey Estuary landing at dawn. Who is there?'

# The replacement text AgentTavern asks projection-aware compaction for (its one home: TAVERN_REFERENCE_HINT).
HINT=$(cd "$root" && node -e "import('@dsh-seam/agent-tavern').then(m => console.log(m.TAVERN_REFERENCE_HINT))")

render_overlay() { # template, out, plugins-dir, mode, warnings file
  sed -e "s|@PLUGINS@|file://$3|g; s|@MODE@|$4|g; s|@TURNS@|$TURNS|g; s|@WINDOW@|$WINDOW|g; s|@HINT@|$HINT|g; s|@WARNINGS@|$5|g" "$here/$1.patch.yml" > "$2"
}

cli_run() { # tree, label, mode, overlay...: one headless session; leaves $WORK/cli/<label>/{stdout,stderr,status,requests.jsonl}
  local tree=$1 label=$2 mode=$3 dir=$WORK/cli/$2 status=0
  shift 3
  mkdir -p "$dir/home"
  local args=()
  for overlay in "$@"; do
    render_overlay "$overlay" "$dir/$overlay.yml" "$WORK/plugins-$tree" "$mode" "$dir/warnings.log"
    args+=(--patch "$dir/$overlay.yml")
  done
  start_mock "$dir/requests.jsonl" "$dir/mock.out"
  [ -n "$MOCK_PORT" ] || { stop_mock; die "the loopback server did not start: $(cat "$dir/mock.out")"; }
  (cd "$dir" && DSH_HOME="$dir/home" DEEPSEEK_BASE_URL="http://127.0.0.1:$MOCK_PORT/v1" DEEPSEEK_API_KEY=fake \
    timeout 900 node "$WORK/$tree/apps/cli/lib/bin.js" --profile headless "${args[@]}" "$TASK") \
    > "$dir/stdout" 2> "$dir/stderr" || status=$?
  stop_mock
  echo $status > "$dir/status"
  touch "$dir/requests.jsonl"
  echo "$label: dsh --profile headless ${args[*]//$dir\//} -> exit $status, $(grep -c '"kind":"\(tool-call\|reply\)"' "$dir/requests.jsonl") chat requests"
}

session_of() { find "$WORK/cli/$1/home/sessions" -name session.jsonl.zstd 2>/dev/null | head -1; }
stat_of() { node -e 'console.log(JSON.parse(process.argv[1])[process.argv[2]] ?? 0)' "$1" "$2"; } # json, key

verify_run() { # label, min-projections: verify the session with dsh-seam, show its inspect table; the verify status
  local label=$1 file stats status=0
  file=$(session_of "$label")
  [ -n "$file" ] || { echo "$label: no session.jsonl.zstd persisted"; return 1; }
  stats=$(node "$root/scripts/consumer-smoke/session-stats.mjs" --reader "$root/packages/dsh-agent-context/lib/index.js" "$file")
  echo "$label: ${file#"$WORK"/}: $stats"
  (cd "$root" && pnpm exec dsh-seam verify "$file") || status=$?
  (cd "$root" && pnpm exec dsh-seam inspect "$file") > "$WORK/cli/$label/inspect.txt" 2>&1 || status=$?
  head -3 "$WORK/cli/$label/inspect.txt"
  echo '  ...'
  tail -6 "$WORK/cli/$label/inspect.txt"
  return $status
}

step 'AgentTavern in the real headless CLI'
for tree in "${trees[@]}"; do
  timed "bundle plugins ($tree)" env PATH="$DSH_PATH" node "$here/bundle-plugins.mjs" "$WORK/$tree" "$WORK/plugins-$tree"
done

if [ "${GATES[patched.build]}" -eq 0 ]; then
  timed 'cli: patched agent-managed' cli_run patched patched-managed agent-managed compaction tavern
  status=0
  verify_run patched-managed || status=$?
  stats=$(node "$root/scripts/consumer-smoke/session-stats.mjs" --reader "$root/packages/dsh-agent-context/lib/index.js" "$(session_of patched-managed)" 2>/dev/null || echo '{}')
  turns=$(stat_of "$stats" turns 2>/dev/null || echo 0)
  echo "patched-managed requests as the loopback server received them (n kind turn messages roles):"
  node -e 'for (const l of require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").filter(Boolean)) { const r = JSON.parse(l); if (r.kind !== "title") console.log(`  ${String(r.n).padStart(3)} ${r.kind.padEnd(9)} ${String(r.turn).padStart(3)} ${String(r.messages).padStart(4)} ${r.roles}`) }' "$WORK/cli/patched-managed/requests.jsonl" | tail -12
  check "patched CLI, agent-managed: exit 0, >= 20 completed turns (got ${turns:-0}) with tool calls" \
    "$( [ "$(cat "$WORK/cli/patched-managed/status")" -eq 0 ] && [ "${turns:-0}" -ge 20 ] && [ "$(stat_of "$stats" toolCalls)" -ge 20 ] && echo 0 || echo 1)"
  check 'patched CLI, agent-managed: dsh-seam verify rebuilds every request from session.jsonl.zstd' $status
  projected=$(grep -oE '[0-9]+ projected' "$WORK/cli/patched-managed/inspect.txt" | grep -oE '[0-9]+' || echo 0)
  check "patched CLI, agent-managed: dsh-seam inspect shows projected requests ($projected)" "$( [ "${projected:-0}" -gt 0 ] && echo 0 || echo 1)"
else
  check 'patched CLI, agent-managed (not run: the patched build failed)' 1
fi

if $baseline; then
  timed 'cli: unpatched agent-managed' cli_run unpatched unpatched-managed agent-managed tavern
  sed 's/^/  stderr: /' "$WORK/cli/unpatched-managed/stderr" | head -5
  # On a build without the seam AgentTavern refuses activating agent-managed closed (mode-unavailable): the mount
  # throws its typed conflict, the turn fails, and nothing is projected or written by AgentTavern.
  stats=$(node "$root/scripts/consumer-smoke/session-stats.mjs" --reader "$root/packages/dsh-agent-context/lib/index.js" "$(session_of unpatched-managed)" 2>/dev/null || echo '{}')
  refusal=$(grep -o 'cannot activate agent-managed (mode-unavailable)' "$WORK/cli/unpatched-managed/stderr" 2>/dev/null | head -1 || true)
  echo "  refusal: ${refusal:-none}"
  refused=1
  if [ "$(cat "$WORK/cli/unpatched-managed/status")" -ne 0 ] && [ -n "$refusal" ] \
    && [ "$(stat_of "$stats" projections)" -eq 0 ] && [ "$(stat_of "$stats" tavernEvents)" -eq 0 ]; then refused=0; fi
  check "unpatched CLI, agent-managed: AgentTavern refuses the activation closed (mode-unavailable), exit $(cat "$WORK/cli/unpatched-managed/status"), nothing projected" $refused

  timed 'cli: unpatched dsh-native' cli_run unpatched unpatched-native dsh-native tavern
  status=0
  verify_run unpatched-native || status=$?
  stats=$(node "$root/scripts/consumer-smoke/session-stats.mjs" --reader "$root/packages/dsh-agent-context/lib/index.js" "$(session_of unpatched-native)" 2>/dev/null || echo '{}')
  turns=$(stat_of "$stats" turns 2>/dev/null || echo 0)
  check "unpatched CLI, dsh-native: exit 0, ${turns:-0} completed turns, log verifies, no projection" \
    "$( [ "$(cat "$WORK/cli/unpatched-native/status")" -eq 0 ] && [ "${turns:-0}" -ge 20 ] && [ $status -eq 0 ] && [ "$(stat_of "$stats" projections)" -eq 0 ] && echo 0 || echo 1)"
fi
