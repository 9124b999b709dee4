/**
 * The DSH bundles of AgentTavern and projection-aware compaction (`dsh plugin --profile <name> add`): what their
 * package manifests declare, and what their rows do on a real loop. The host row mounts AgentTavern on every agent the
 * app creates; the compaction row (`measure: auto`, `summary: reference`, no hint of its own) replaces a compacted
 * span with a reference carrying the hint AgentTavern offers, so the hint's one home stays TAVERN_REFERENCE_HINT.
 * `scripts/consumer-smoke/cli.sh` runs both bundles in the npm `dsh` CLI.
 */

import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Agent } from '@deepseek-ai/dsh-agent'
import { contentText, contextModeOf, contextModeRefusal, TAVERN_REFERENCE_HINT, tavernBindings } from '@dsh-seam/agent-tavern'
import * as TavernHost from '@dsh-seam/agent-tavern/host'
import { offerReferenceHint, ProjectionAwareCompactionEngine } from '@dsh-seam/compaction-effective-projection'
import { bootLoop, patchedDsh, stockDsh } from '@dsh-seam/loop-testkit'
import type { BootedLoop, BootOptions } from '@dsh-seam/loop-testkit'
import { describe, expect, it } from 'vitest'
import { MIRA, SMALL_POLICY, toolModel } from './support.ts'

const root = fileURLToPath(new URL('../..', import.meta.url))

/** The bundle's compaction row, as `packages/compaction-effective-projection/cordis.patch.yml` configures it. */
const BUNDLE_COMPACTION = { measure: 'auto', summary: 'reference' }

async function hostLoop(dsh: Awaited<ReturnType<typeof patchedDsh>>, contextMode: string, compaction: object = BUNDLE_COMPACTION): Promise<BootedLoop> {
  return bootLoop(dsh, {
    contextWindow: 20_000,
    fallback: toolModel,
    plugins: [[ProjectionAwareCompactionEngine, compaction], [TavernHost, { character: MIRA, contextMode, policy: SMALL_POLICY, bindNewSessions: true }]],
  })
}

/** The text of the node that replaced the newest compacted span. */
function replacementText(agent: Agent): string {
  const summary = agent.session.events.findLast(event => event.type === 'compaction/summary')
  expect(summary).toBeDefined()
  const replacement = agent.session.events.find(event => event.seq === summary!.seq + 1)!
  return contentText((replacement.data as { content: never }).content)
}

async function compactedAfterTurns(loop: BootedLoop, id: string): Promise<Agent> {
  const agent = loop.create(id)
  for (let i = 1; i <= 4; i++) await loop.say(agent, `The tide turns at the salt mill (${i}).`)
  const result = await loop.ctx.compaction.compactNow(agent, AbortSignal.timeout(30_000))
  expect(result).not.toBeNull()
  return agent
}

describe('bundle manifests', () => {
  for (const [dir, names] of [['agent-tavern', ['@dsh-seam/agent-tavern/compaction', '@dsh-seam/agent-tavern/host']], ['compaction-effective-projection', ['@dsh-seam/compaction-effective-projection']]] as const) {
    it(`${dir}: dsh.bundle.patch names a packed file whose rows load this package's exports`, () => {
      const manifest = JSON.parse(readFileSync(join(root, 'packages', dir, 'package.json'), 'utf8')) as { name: string; files: string[]; exports: Record<string, unknown>; dsh?: { bundle?: { patch?: string } } }
      const patch = manifest.dsh?.bundle?.patch
      expect(patch).toBe('./cordis.patch.yml')
      expect(manifest.files).toContain('cordis.patch.yml')
      const rows = [...readFileSync(join(root, 'packages', dir, 'cordis.patch.yml'), 'utf8').matchAll(/^ {6}name: '([^']+)'$/gm)].map(match => match[1])
      expect(rows).toEqual(names)
      for (const name of rows) expect(Object.keys(manifest.exports)).toContain(name === manifest.name ? '.' : `.${name!.slice(manifest.name.length)}`)
    })
  }
})

describe('the AgentTavern host row', () => {
  it('binds and mounts AgentTavern on each new top-level session (bindNewSessions), agent-managed on the patched loop with the bundle compaction', async () => {
    const loop = await hostLoop(await patchedDsh(), 'agent-managed')
    const [first, second] = [loop.create('first'), loop.create('second')]
    for (const agent of [first, second]) {
      await loop.say(agent, 'Who waits at the landing?')
      expect(contextModeOf(agent)).toBe('agent-managed')
      expect(contextModeRefusal(agent)).toBeUndefined()
    }
    const request = loop.adapter.requests.at(-1)!
    expect(request.tools?.map(tool => tool.name)).toEqual(expect.arrayContaining(['tavern_history_search', 'tavern_history_read', 'memory_write']))
    expect(loop.errors).toEqual([])
  })

  it('fails the agent\'s steps with AgentTavern\'s error when the mount refuses the config, sending no request', async () => {
    const loop = await hostLoop(await patchedDsh(), 'super-managed')
    const agent = loop.create('misconfigured')
    await loop.say(agent, 'Who waits at the landing?')
    expect(loop.adapter.requests).toEqual([])
    const end = agent.session.events.findLast(event => event.type === 'turn/end')
    expect(JSON.stringify(end?.data)).toContain('contextMode \\"super-managed\\" is not one of')
  })

  it('on the stock loop the same rows boot: activating managed fails closed, the turn fails with the conflict and sends nothing, native runs', async () => {
    const stock = await stockDsh()
    const rows = (contextMode: string): BootOptions => ({
      fallback: toolModel,
      plugins: [[ProjectionAwareCompactionEngine, BUNDLE_COMPACTION], [TavernHost, { character: MIRA, contextMode, bindNewSessions: true }]],
    })
    const loop = await bootLoop(stock, rows('agent-managed'))
    const agent = loop.create('stock')
    await loop.say(agent, 'Who waits at the landing?')
    expect(loop.adapter.requests).toEqual([])
    expect(JSON.stringify(agent.session.events.findLast(event => event.type === 'turn/end')?.data)).toContain('cannot activate agent-managed (mode-unavailable)')
    expect(tavernBindings(loop.ctx).get('stock')).toBeUndefined()
    const native = await bootLoop(stock, rows('dsh-native'))
    const plain = native.create('stock-native')
    await native.say(plain, 'Who waits at the landing?')
    expect(contextModeOf(plain)).toBe('dsh-native')
    expect(native.errors).toEqual([])
  })
})

describe('the reference hint AgentTavern offers', () => {
  it('is the reference of a compaction on the bundle engine, which has no hint of its own (compactNow, no model call)', async () => {
    const loop = await hostLoop(await patchedDsh(), 'dsh-native')
    const text = replacementText(await compactedAfterTurns(loop, 'offered'))
    const [, start, end] = /session seqs (\d+)-(\d+)/.exec(text) ?? []
    expect(text).toContain(TAVERN_REFERENCE_HINT.replace('{start}', start!).replace('{end}', end!))
    expect(loop.adapter.requests.every(request => loop.dsh.llm.isAgentLoopRequest(request))).toBe(true)
  })

  it('gives way to the engine\'s own referenceHint, and is gone once withdrawn', async () => {
    const configured = await hostLoop(await patchedDsh(), 'dsh-native', { ...BUNDLE_COMPACTION, referenceHint: 'Ask the harbour office for {start}-{end}.' })
    const text = replacementText(await compactedAfterTurns(configured, 'configured'))
    expect(text).toMatch(/word for word\. Ask the harbour office for \d+-\d+\.\n/)
    expect(text).not.toContain('tavern_history_read')

    const bare = await bootLoop(await patchedDsh(), { fallback: toolModel, plugins: [[ProjectionAwareCompactionEngine, BUNDLE_COMPACTION]] })
    const agent = bare.create('withdrawn')
    const withdraw = offerReferenceHint(agent.ctx, agent, 'Read {start}-{end} aloud.')
    withdraw()
    for (let i = 1; i <= 4; i++) await bare.say(agent, `The tide turns at the salt mill (${i}).`)
    await bare.ctx.compaction.compactNow(agent, AbortSignal.timeout(30_000))
    expect(replacementText(agent)).toMatch(/the session log keeps it word for word\.\n<\/compacted-summary>$/)
  })
})
