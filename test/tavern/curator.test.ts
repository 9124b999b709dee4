/**
 * No hidden model calls in `agent-managed`, and AgentTavern's compaction curator (`TavernCompactionCurator`, a
 * subclass of projection-aware compaction): the mode runs only on a compaction engine that replaces a compacted span
 * with a reference (`summary: 'reference'`) or on the curator, the one place a model may summarize the story (per
 * agent, with `curator.summarizer`); the curator's usage-anchored gate (AgentTavern proposal 0006); and the host's
 * overflow recovery without a model: the replacement names the span and how to fetch it, and `tavern_history_read`
 * returns it word for word.
 */

import type { Agent } from '@deepseek-ai/dsh-agent'
import type { GenerateOptions, StreamChunk } from '@deepseek-ai/dsh-llm'
import { AgentTavern, contentText, contextModeOf, contextModeRefusal, ROLEPLAY_CHECKPOINT, TAVERN_REFERENCE_HINT, TavernCompactionCurator } from '@dsh-seam/agent-tavern'
import { ProjectionAwareCompactionEngine } from '@dsh-seam/compaction-effective-projection'
import type { BootedLoop, BootOptions } from '@dsh-seam/loop-testkit'
import { failureReply } from '@dsh-seam/loop-testkit'
import { describe, expect, it } from 'vitest'
import { requestPrice } from '../../packages/compaction-effective-projection/scenarios/last-turns.ts'
import { expectRebuiltFromLog, loopRequests, MIRA, SMALL_POLICY, tavernAgent, tavernLoop, toolModel } from './support.ts'

const MODEL_SUMMARIES: BootOptions = { plugins: [[ProjectionAwareCompactionEngine, { measure: 'projection' }]] }

describe('agent-managed and model summaries', () => {
  it('is refused closed on an engine that summarizes with a model, saying why', async () => {
    const loop = await tavernLoop(MODEL_SUMMARIES)
    await expect(tavernAgent(loop, 'hidden-summarizer', 'agent-managed')).rejects.toMatchObject({ code: 'architecture-conflict', reason: 'hidden-summarizer', missing: [], message: expect.stringContaining('summary: reference') })
  })

  it('is refused on such an engine even with curator.summarizer: model summaries go only through the explicit curator', async () => {
    const loop = await tavernLoop(MODEL_SUMMARIES)
    const agent = loop.create('not-a-curator')
    await expect(agent.ctx.plugin(AgentTavern, { character: MIRA, contextMode: 'agent-managed', policy: SMALL_POLICY, curator: { summarizer: true } } as never)).rejects.toMatchObject({ code: 'architecture-conflict', reason: 'hidden-summarizer' })
  })

  it('runs on the curator with curator.summarizer', async () => {
    const loop = await tavernLoop(CURATOR)
    const agent = loop.create('curated')
    await agent.ctx.plugin(AgentTavern, { character: MIRA, contextMode: 'agent-managed', policy: SMALL_POLICY, curator: { summarizer: true } } as never)
    expect(contextModeOf(agent)).toBe('agent-managed')
    expect(contextModeRefusal(agent)).toBeUndefined()
  })
})

/** The curator with model summaries engine-wide: what an agent gets is the curator's per-agent decision. */
const CURATOR: BootOptions = { plugins: [[TavernCompactionCurator, { measure: 'projection', summary: 'model' }]] }

/** The summarization requests the provider received, and the instruction each ended with. */
function summaryInstructions(loop: BootedLoop): string[] {
  return loop.adapter.requests.filter(request => !loop.dsh.llm.isAgentLoopRequest(request)).map(request => contentText(request.messages.at(-1)!.content))
}

async function compactedNow(loop: BootedLoop, agent: Agent): Promise<string> {
  for (let i = 1; i <= 4; i++) await loop.say(agent, `The tide turns at the salt mill (${i}).`)
  const result = await loop.ctx.compaction.compactNow(agent, AbortSignal.timeout(30_000))
  expect(result).not.toBeNull()
  const summary = agent.session.events.findLast(event => event.type === 'compaction/summary')!
  return contentText((agent.session.events.find(event => event.seq === summary.seq + 1)!.data as { content: never }).content)
}

describe('the curator: a summary mode per agent', () => {
  it('gives a managed agent the reference, a curated one a roleplay checkpoint, and an agent AgentTavern does not serve the engine\'s summary', async () => {
    const loop = await tavernLoop(CURATOR)
    const managed = await tavernAgent(loop, 'managed', 'agent-managed')
    const reference = await compactedNow(loop, managed)
    expect(reference).toMatch(/Earlier conversation \(session seqs \d+-\d+, \d+ messages\) is not shown here/)
    expect(reference).toContain('tavern_history_read')
    expect(summaryInstructions(loop)).toEqual([])

    const curated = await tavernAgent(loop, 'curated', 'agent-managed', SMALL_POLICY, { curator: { summarizer: true } })
    const native = await tavernAgent(loop, 'native', 'dsh-native')
    const plain = loop.create('plain')
    for (const agent of [curated, native, plain]) await compactedNow(loop, agent)
    const [curatedAsked, nativeAsked, plainAsked] = summaryInstructions(loop)
    expect([curatedAsked, nativeAsked]).toEqual([ROLEPLAY_CHECKPOINT, ROLEPLAY_CHECKPOINT])
    expect(plainAsked).not.toBe(ROLEPLAY_CHECKPOINT)
    expect(plainAsked).toMatch(/summar/i)
    expect(loop.errors).toEqual([])
  })
})

/** The chunks of `reply` with its usage replaced: `ratio` times the meter's price of the request, or none. */
function reporting(loop: () => BootedLoop, ratio: number | undefined) {
  return (request: GenerateOptions, index: number): StreamChunk[] => {
    const chunks = toolModel(request, index).filter(chunk => chunk.type !== 'usage')
    if (ratio === undefined) return chunks
    const finish = chunks.findIndex(chunk => chunk.type === 'finish')
    const usage = { inputTokens: Math.round(ratio * requestPrice(loop().ctx.tokenMeter, request)), outputTokens: 20 }
    return [...chunks.slice(0, finish), { type: 'usage', usage }, ...chunks.slice(finish)]
  }
}

const WINDOW = 12_000

/**
 * A `dsh-native` AgentTavern session on an engine, long turns until the newest request is priced at `stopAt` of the
 * window (or a compaction ran).
 * @returns the compactions, the warnings, and the newest request's price as a share of the window.
 */
async function pressured(engine: unknown, config: object, usageRatio: number | undefined, stopAt: number, sessions = 1): Promise<{ compactions: number; warnings: string[]; share: number }> {
  const booted: { loop?: BootedLoop } = {}
  const loop = booted.loop = await tavernLoop({ contextWindow: WINDOW, fallback: reporting(() => booted.loop!, usageRatio), plugins: [[engine, { measure: 'projection', summary: 'reference', ...config }]] })
  const warnings: string[] = []
  loop.ctx.logger.exporter({ levels: { default: 3 }, export: message => message.type === 'warn' && warnings.push(String(message.args[0])) })
  let compactions = 0
  let share = 0
  for (let s = 0; s < sessions; s++) {
    share = 0
    const agent = await tavernAgent(loop, `pressured-${s}`, 'dsh-native')
    for (let i = 1; i <= 60 && share < stopAt && compactions === 0; i++) {
      await loop.say(agent, `Crossing ${i}: ${'The grey water folds under the hull and the ropes creak in the cold. '.repeat(10)}`)
      share = requestPrice(loop.ctx.tokenMeter, loopRequests(loop).at(-1)!) / WINDOW
      compactions += agent.session.events.filter(event => event.type === 'compaction/summary').length
    }
  }
  expect(loop.errors).toEqual([])
  return { compactions, warnings, share }
}

describe('the curator: usage-anchored gate (proposal 0006)', () => {
  it('blocks pressure the heuristic over-prices: the provider reports 30% of the estimate, so nothing compacts where the engine alone does', async () => {
    const engine = await pressured(ProjectionAwareCompactionEngine, { thresholdRatio: 0.8 }, 0.3, 0.95)
    expect(engine.compactions).toBeGreaterThan(0)
    const curator = await pressured(TavernCompactionCurator, { thresholdRatio: 0.8 }, 0.3, 0.95)
    expect(curator.compactions).toBe(0)
    expect(curator.share).toBeGreaterThanOrEqual(0.8)
  })

  it('compacts once the provider\'s usage reaches 0.7 of the window, where the engine\'s own threshold (0.95) is not reached', async () => {
    const engine = await pressured(ProjectionAwareCompactionEngine, { thresholdRatio: 0.95 }, 1, 0.85)
    expect(engine.compactions).toBe(0)
    expect(engine.share).toBeGreaterThanOrEqual(0.85)
    const curator = await pressured(TavernCompactionCurator, { thresholdRatio: 0.95 }, 1, 0.85)
    expect(curator.compactions).toBeGreaterThan(0)
  })

  it('without a usage sample lets the engine decide, warning once per session and reason', async () => {
    const { warnings } = await pressured(TavernCompactionCurator, {}, undefined, 0.5, 2)
    expect(warnings).toEqual([0, 1].map(s => expect.stringMatching(new RegExp(`^usage gate of session pressured-${s} unanchored \\(no provider usage sample yet\\)`))))
  })

  it('refuses a ratio outside (0, 1]', async () => {
    await expect(tavernLoop({ plugins: [[TavernCompactionCurator, { usageThresholdRatio: 1.5 }]] })).rejects.toMatchObject({ code: 'invalid-config' })
  })
})

describe('overflow recovery without a curator', () => {
  it('replaces the span with a reference naming its seqs and the history tools, calls no model, and the span reads back exactly', async () => {
    let failed = -1
    const loop = await tavernLoop({
      fallback: (request: GenerateOptions, index: number) => {
        const asked = request.messages.findLast(message => message.source.kind === 'user')
        if (failed < 0 && asked !== undefined && contentText(asked.content).includes('(12)')) {
          failed = index
          return failureReply({ code: 'CONTEXT_WINDOW_EXCEEDED', message: 'prompt is too long' })
        }
        return toolModel(request, index)
      },
    })
    const agent = await tavernAgent(loop, 'reference-recovery', 'agent-managed')
    for (let i = 1; i <= 14; i++) await loop.say(agent, `I row past the salt mill and count the herons (${i}). ${'The reeds bend in the wind and the water runs grey under the hull. '.repeat(12)}`)
    expect(loop.errors.map(error => String(error.error))).toEqual([])
    expect(failed).toBeGreaterThan(0)
    expect(loop.adapter.requests.every(request => loop.dsh.llm.isAgentLoopRequest(request))).toBe(true)
    const summary = agent.session.events.find(event => event.type === 'compaction/summary')
    expect(summary).toBeDefined()
    const replacement = agent.session.events.find(event => event.seq === summary!.seq + 1)!
    const text = contentText((replacement.data as { content: never }).content)
    const [, start, end] = /session seqs (\d+)-(\d+)/.exec(text) ?? []
    expect(text).toContain(TAVERN_REFERENCE_HINT.replace('{start}', start!).replace('{end}', end!))
    expect((summary!.data as { shadowedSeqs: number[] }).shadowedSeqs).toEqual(expect.arrayContaining([Number(start), Number(end)]))

    await loop.say(agent, `CALL tavern_history_read {"fromSeq":${start},"toSeq":${end}}`)
    const read = JSON.parse(contentText(agent.session.events.findLast(event => event.type === 'tool/result')!.data.message.content)) as { entries: { seq: number; text: string }[] }
    const shadowed = new Set((summary!.data as { shadowedSeqs: number[] }).shadowedSeqs)
    const original = agent.session.events.filter(event => shadowed.has(event.seq) && event.type === 'user/message' && event.data.source.kind === 'user')
    expect(original.length).toBeGreaterThan(0)
    expect(read.entries.filter(entry => entry.text.startsWith('I row past'))).toEqual(original.map(event => expect.objectContaining({ seq: event.seq, text: contentText((event.data as { content: never }).content).trim() })))
    expectRebuiltFromLog(loopRequests(loop), agent)
  })
})
