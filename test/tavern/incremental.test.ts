/**
 * The managed listener keeps its view of the offer (descriptions, tool units, positions, the newest node of each
 * standing source) as the surface grows. On a real patched AgentLoop, every request's selection must equal the one a
 * from-scratch view and index of the same offer yield, state carried alike, over generated sessions with tool calls,
 * memory notes, scene changes, reminders and pressure compactions (a replaced surface).
 */

import type { Agent } from '@deepseek-ai/dsh-agent'
import { sessionEventAt } from '@dsh-seam/agent-context'
import { lastSelection } from '@dsh-seam/agent-tavern'
import { calibrationFactor, requestEnvelope, UsageCalibration } from '@dsh-seam/compaction-effective-projection'
import type { BootedLoop } from '@dsh-seam/loop-testkit'
import fc from 'fast-check'
import { isDeepStrictEqual } from 'node:util'
import { describe, expect, it } from 'vitest'
import { resolveConfig } from '../../packages/agent-tavern/src/config.ts'
import { isUserSource } from '../../packages/agent-tavern/src/host-log.ts'
import { OfferView } from '../../packages/agent-tavern/src/listener.ts'
import type { PolicySelection } from '../../packages/agent-tavern/src/policy.ts'
import { policyIndex, selectContext } from '../../packages/agent-tavern/src/policy.ts'
import { MIRA, SMALL_POLICY, tavernAgent, tavernLoop } from './support.ts'

const WINDOW = 20_000
/** A script line that runs `compactNow` instead of a turn: the next offer is a replaced surface. */
const COMPACT = 'COMPACT'

const line = fc.oneof(
  fc.constantFrom('I walk along the reed bank, counting gulls.', 'The fog thickens over the harbor bell.', 'Do you remember the brass key?'),
  fc.constant('CALL memory_write {"text":"the ford floods at high water","tags":["fact"],"importance":0.9}'),
  fc.constant('CALL tavern_history_search {"query":"gulls key"}'),
  fc.constant('CALL tavern_scene_get {}'),
  fc.constantFrom('(The scene changes: the reed maze on the eastern shore.)', '(The scene changes: the lantern quay at dusk.)'),
  fc.string({ unit: fc.constantFrom('rope ', 'heron ', 'skiff ', 'lantern ', '417 '), minLength: 1, maxLength: 30 }),
  fc.constant(COMPACT),
)

/** A manual compaction of a surface too small to summarize is skipped; any other failure is the test's. */
function tooSmall(error: unknown): void {
  if ((error as { code?: unknown }).code !== 'summary') throw error
}

/** What a session exercised: requests, boundary advances after the first request, and offers of a replaced surface. */
interface Seen {
  requests: number
  advances: number
  replaced: number
}

/**
 * Run a session, rebuilding every request's view, index and selection from scratch beside the listener's own, and
 * add what it exercised to `seen`.
 * @returns the requests where the two differ (empty when none).
 */
async function compare(loop: BootedLoop, agent: Agent, lines: readonly string[], seen: Seen): Promise<string[]> {
  const { policy } = resolveConfig({ character: MIRA, policy: SMALL_POLICY })
  const meter = loop.ctx.tokenMeter
  const calibration = new UsageCalibration(meter)
  const kept = new OfferView(meter)
  const diverged: string[] = []
  let requests = 0
  let scratch: PolicySelection | undefined
  let generation: number | undefined
  // The agent's one `agent/context` listener is AgentTavern's; the comparison watches what the host shows after it.
  agent.ctx.on('agent/context-selected', (payload) => {
    calibration.follow(agent.session.seq, sessionEventAt(agent.session))
    const incremental = kept.of(payload.nodes)
    const { nodes, units } = new OfferView(meter).of(payload.nodes)
    const fresh = { nodes, units, index: policyIndex(nodes), seqs: payload.nodes.map(node => node.seq) }
    if (!isDeepStrictEqual({ ...incremental }, fresh)) diverged.push(`request ${requests}: the offer view`)
    const current = agent.session.surface.replaceGeneration
    if (generation !== undefined && current !== generation) seen.replaced++
    generation = current
    const asked = payload.nodes.findLast(node => isUserSource(node.message.source))
    scratch = selectContext({
      nodes,
      requiredSeqs: payload.requiredSeqs,
      units,
      query: asked === undefined ? [] : nodes.find(node => node.seq === asked.seq)?.terms ?? [],
      headerTokens: meter.estimateHeader(requestEnvelope(payload.system, payload.tools)),
      contextWindow: WINDOW,
      calibration: calibrationFactor(calibration.sample),
    }, policy, scratch?.state)
    if (!isDeepStrictEqual(lastSelection(agent), scratch)) diverged.push(`request ${requests}: the selection`)
    if (requests > 0 && scratch?.advanced === true) seen.advances++
    requests++
  })
  for (const said of lines) {
    if (said !== COMPACT) await loop.say(agent, said)
    else await loop.ctx.compaction.compactNow(agent, AbortSignal.timeout(30_000)).catch(tooSmall)
  }
  expect(loop.errors).toEqual([])
  seen.requests += requests
  return diverged
}

describe('agent-managed incremental state', () => {
  it('selects what a from-scratch view and index select, request by request, as a session grows', async () => {
    const seen: Seen = { requests: 0, advances: 0, replaced: 0 }
    await fc.assert(fc.asyncProperty(fc.array(line, { minLength: 20, maxLength: 45 }), async lines => {
      const loop = await tavernLoop({ contextWindow: WINDOW })
      const agent = await tavernAgent(loop, 'incremental', 'agent-managed', SMALL_POLICY, { anchorEvery: 3 })
      expect(await compare(loop, agent, lines, seen)).toEqual([])
    }), { numRuns: 8 })
    expect(seen.requests).toBeGreaterThan(8 * 20)
    expect(seen.advances).toBeGreaterThan(0)
    expect(seen.replaced).toBeGreaterThan(0)
  }, 240_000)
})
