#!/usr/bin/env bash
# Checks of the compiled npm patches (patches/) against DeepSeek Harness 0.1.0-rc.8, the one consistent npm set, with
# the rc.8 source for DSH's own suites. The source series is checked on its own base by scripts/series-checks.sh.
#  (c) DSH's own suites (agent-loop, session, compaction-basic) pass on the unpatched rc.8 npm packages and on the
#      same packages patched with patches/ (scripts/dsh-suites.mjs npm)
#  (d) the compiled session event list is what DSH's generator renders for rc.8's declared events plus
#      request/projection
#  (e) log-format compatibility: stock rc.8 on a log with request/projection events, before and after marking them
#      ignorable
# Usage: scripts/upstream-checks.sh [CHECKOUT]   CHECKOUT (or DSH_NPM_CHECKOUT, then DSH_CHECKOUT): a git clone, folder
# or `git archive` tarball of DSH at tag dsh-v0.1.0-rc.8; it is only read (scripts/dsh-source.mjs copies it). Env:
# UPSTREAM_WORK (default $TMPDIR/dsh-seam-upstream, emptied first).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[ $# -le 1 ] || { echo 'usage: scripts/upstream-checks.sh [CHECKOUT]' >&2; exit 2; }
# Checked, and absolute, before the toolchain runs this script again from the repository root.
NPM_VERSION=0.1.0-rc.8
checkout=$(node "$root/scripts/dsh-source.mjs" path --need "$NPM_VERSION" "${@:-${DSH_NPM_CHECKOUT:-${DSH_CHECKOUT:-}}}") || exit 2
if [ -z "${DSH_SEAM_TOOLCHAIN:-}" ]; then
  DSH_SEAM_TOOLCHAIN=1 exec sh "$root/scripts/toolchain.sh" bash "$root/scripts/upstream-checks.sh" "$checkout"
fi
WORK=${UPSTREAM_WORK:-${TMPDIR:-/tmp}/dsh-seam-upstream}
SUITES=$root/scripts/dsh-suites.mjs
rm -rf "$WORK"
mkdir -p "$WORK"
T0=$(date +%s)
step() { printf '\n== %s\n' "$*"; }
# One copy of the checkout; every later copy (series.sh, dsh-suites.mjs) is made from it.
step "copy of $checkout"
echo "DeepSeek Harness $(node "$root/scripts/dsh-source.mjs" export "$checkout" "$WORK/checkout")"
export DSH_CHECKOUT=$WORK/checkout

# The stock install is the node_modules each step's run and tsc use; its run counts DSH's suites on the unpatched
# packages.
step "DSH's suites on the unpatched rc.8 npm packages"
node "$SUITES" install "$DSH_CHECKOUT" "$WORK/own-stock"
node "$SUITES" npm "$WORK/own-stock" 'stock rc.8'
step "(c) DSH's suites on the compiled packages patched with patches/"
node "$SUITES" install --patches "$root/patches" "$DSH_CHECKOUT" "$WORK/own-lib"
node "$SUITES" npm "$WORK/own-lib" 'patched rc.8'

step '(d) the compiled session event list, as scripts/gen-persistence-catalog.ts renders it'
# The generator runs on the rc.8 copy with the stock install's node_modules (typescript among them).
ln -sfn "$WORK/own-stock/node_modules" "$DSH_CHECKOUT/node_modules"
node --input-type=module - "$DSH_CHECKOUT" "$WORK/own-lib/node_modules/@deepseek-ai/dsh-session/lib/index.js" <<'JS'
import { readFileSync } from 'node:fs'
const [tree, compiled] = process.argv.slice(2)
const gen = await import(`${tree}/scripts/gen-persistence-catalog.ts`)
const declared = gen.annotateSurface(gen.collectLogEvents(tree), gen.collectSurfaceEventTypes(tree)).map(e => e.name)
const lib = readFileSync(compiled, 'utf8').match(/const KNOWN_SESSION_EVENT_TYPES = new Set\(\[([^\]]*)\]\)/)
const compiledNames = [...lib[1].matchAll(/"([^"]+)"/g)].map(m => m[1])
const expected = [...declared, 'request/projection'].sort()
const fail = (message) => { console.error(`known-event-types: ${message}`); process.exit(1) }
if (JSON.stringify([...compiledNames].sort()) !== JSON.stringify(expected)) fail(`the compiled list differs from rc.8's declared events plus request/projection: ${compiledNames.join(', ')}`)
if (gen.renderKnownEventTypes(compiledNames.map(name => ({ name }))).length === 0) fail('the generator renders nothing')
console.log(`known-event-types: the compiled list is rc.8's ${declared.length} declared events plus request/projection`)
JS

step '(e) log-format compatibility: stock rc.8 and a log with request/projection events'
node --input-type=module - "$WORK/compat" <<'JS'
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { bootLoop, patchedDsh, requestStarts, stockDsh, textReply } from '@dsh-seam/loop-testkit'
const dir = process.argv[2]
const [patchedRoot, migratedRoot] = [join(dir, 'patched'), join(dir, 'migrated')]
mkdirSync(patchedRoot, { recursive: true })
const patched = await bootLoop(await patchedDsh(), { persistRoot: patchedRoot, fallback: textReply('ok') })
const agent = patched.create('projected')
agent.ctx.on('agent/context', async (_payload, next) => ({ include: (await next()).include.slice(-2), revision: 'last-2' }))
for (const text of ['one', 'two', 'three', 'four']) await patched.say(agent, text)
await patched.ctx.sessions.flush(agent.session)
const sent = patched.adapter.requests.map(r => JSON.stringify(r.messages))
const projections = agent.session.events.filter(e => e.type === 'request/projection').length
await patched.ctx.fiber.dispose()
const resume = async (root) => {
  const loop = await bootLoop(await stockDsh(), { persistRoot: root, fallback: textReply('ok') })
  try {
    const { agent: resumed } = await loop.ctx.agentLoop.resume(loop.ctx, { resumeSessionId: loop.dsh.session.SessionId('projected'), agentOptions: { provider: 'fake', model: 'fake-model' } })
    // DSH's own reconstruction (request-reconstruction.spec.ts): a Session from the prefix before each request.
    const { Session, SessionId } = loop.dsh.session
    const events = resumed.session.events
    const rebuilt = requestStarts(events).map((seq, i) => JSON.stringify(Session.create(SessionId(`prefix-${i}`), structuredClone(events.slice(0, seq))).deriveMessages()))
    await loop.say(resumed, 'five')
    return { resumed: true, differ: rebuilt.filter((m, i) => m !== sent[i]).length, errors: loop.errors.length }
  } catch (error) {
    return { resumed: false, error: `${error.name}: ${error.message.replace(/ \(raw log: .*\)$/, '')}` }
  } finally { await loop.ctx.fiber.dispose() }
}
const refused = await resume(patchedRoot)
console.log(`persisted on the patched build: ${sent.length} requests, ${projections} request/projection events`)
console.log(`stock rc.8 resume: ${refused.resumed ? 'ACCEPTED (unexpected)' : `refused — ${refused.error}`}`)
mkdirSync(migratedRoot, { recursive: true })
let marked = 0
for (const name of readdirSync(patchedRoot, { recursive: true })) {
  const path = join(patchedRoot, name)
  if (!name.endsWith('.jsonl')) continue
  const lines = readFileSync(path, 'utf8').split('\n').map((line) => {
    if (!line.includes('"request/projection"')) return line
    const record = JSON.parse(line)
    if (record.type !== 'request/projection') return line
    marked += 1
    return JSON.stringify({ ...record, ignorable: true })
  })
  mkdirSync(join(migratedRoot, name, '..'), { recursive: true })
  writeFileSync(join(migratedRoot, name), lines.join('\n'))
}
const migrated = await resume(migratedRoot)
console.log(`after marking ${marked} events ignorable: stock rc.8 ${migrated.resumed ? `resumes and continues (${migrated.errors} errors); its log-rebuilt requests differ from what was sent for ${migrated.differ} of ${sent.length} requests` : `still refuses — ${migrated.error}`}`)
if (refused.resumed || marked !== projections) process.exit(1)
JS

printf '\nupstream-checks: all checks passed in %ss\n' $(( $(date +%s) - T0 ))
