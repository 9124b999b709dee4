# The Python SDK's keyless smoke and its expected outputs (scripts/smoke-python-runtime.py, every scenario), sourced
# by scripts/source-checkout.sh (uses its WORK, trees, step, timed, check, dsh, die) after the tests: DSH's AGENTS.md
# has agent-loop and SessionEventMap changes update both SDKs' expected outputs, and only DSH's python-runtime CI job
# runs this one. The runtime is DSH's node carrier (its dev-only `DSH_RUNTIME_MODE=node` launch): the closure
# scripts/build-exe-for-python-sdk.ts deploys, from the tree's own build, without the pkg step that downloads a Node
# binary. The Python package is read from the tree's python/sdk/src; its one dependency, pydantic >= 2.12, must be
# installed for python3.

# The tree's build script up to its deploy: its pack and sync lines cut out, in an edited copy beside it (the copy
# imports its siblings). Fails when the script no longer has those lines.
stage_node_carrier() { # tree
  local script=$WORK/$1/scripts/build-exe-for-python-sdk.ts copy=$WORK/$1/scripts/.stage-node-carrier.ts
  local cut='^  (for \(const target of cli\.targets\) products\.push|pipeline\.printProducts|await pipeline\.syncToPythonRuntime)'
  [ "$(grep -cE "$cut" "$script")" -eq 3 ] || { echo "$script: its pack and sync lines are not the expected three"; return 1; }
  grep -vE "$cut" "$script" > "$copy"
  local status=0
  dsh "$1" pnpm exec tsx scripts/.stage-node-carrier.ts --skip-build --targets=node24-linux-x64 || status=$?
  rm -f "$copy"
  return $status
}

python_smoke() { # tree
  local dir=$WORK/python-sdk/$1 carrier=$WORK/$1/python/sdk-runtime/src/deepseek_harness_runtime/runtime/node
  mkdir -p "$dir"
  stage_node_carrier "$1" > "$dir/stage.log" 2>&1 || { tail -20 "$dir/stage.log"; return 1; }
  printf '#!/bin/sh\nexec %s %s "$@"\n' "$(command -v node)" \
    "$carrier/node_modules/@deepseek-ai/dsh-sdk-jsonrpc-demo/lib/packaged-bin.js" > "$dir/runtime"
  chmod +x "$dir/runtime"
  (cd "$WORK/$1" && PATH=$DSH_PATH DSH_RUNTIME_MODE=node \
    PYTHONPATH="$WORK/$1/python/sdk/src:$WORK/$1/python/sdk-runtime/src" \
    timeout 900 python3 scripts/smoke-python-runtime.py --scenario all --exe "$dir/runtime") > "$dir/smoke.log" 2>&1 \
    || { tail -30 "$dir/smoke.log"; return 1; }
  tail -1 "$dir/smoke.log"
}

if python3 -c 'import pydantic, sys; sys.exit(tuple(map(int, pydantic.VERSION.split(".")[:2])) < (2, 12))' 2>/dev/null; then
  for tree in "${trees[@]}"; do
    step "the Python SDK smoke and its expected outputs ($tree)"
    status=0
    timed "python sdk smoke ($tree)" python_smoke "$tree" || status=$?
    check "$tree: the Python SDK smoke, every scenario, against its expected outputs" $status
  done
else
  check 'the Python SDK smoke: python3 has no pydantic >= 2.12 (python/sdk needs it)' 1
fi
