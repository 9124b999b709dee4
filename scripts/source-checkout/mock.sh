# Sourced by the headless CLI runs (source-checkout/cli-runs.sh, consumer-smoke/cli.sh): the loopback
# DeepSeek-compatible server (mock-deepseek.mjs) in the background.
# start_mock <requests.jsonl> <out>: sets MOCK_PID, and MOCK_PORT once the server listens ('' when it did not start in
# 5 s; <out> holds why). stop_mock: stops it.
start_mock() {
  node "$(dirname "${BASH_SOURCE[0]}")/mock-deepseek.mjs" --log "$1" > "$2" 2>&1 &
  MOCK_PID=$!
  MOCK_PORT=''
  for _ in $(seq 50); do
    MOCK_PORT=$(awk '/^port /{ print $2 }' "$2" 2>/dev/null || true)  # the file may not exist yet
    [ -n "$MOCK_PORT" ] && return 0
    sleep 0.1
  done
}
stop_mock() {
  kill "$MOCK_PID" 2>/dev/null || true
  wait "$MOCK_PID" 2>/dev/null || true
}
