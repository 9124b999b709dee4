/**
 * No hidden model calls in `agent-managed`: the mode runs only on a compaction engine that replaces a compacted span
 * with a reference (`summary: 'reference'`) unless a curator allows model summaries, and the host's overflow recovery
 * still runs, shrinking the surface without a model: the replacement names the span and how to fetch it, and
 * `tavern_history_read` returns it word for word.
 */

import type { GenerateOptions } from '@deepseek-ai/dsh-llm'
import { AgentTavern, contentText, contextModeOf, contextModeRefusal, TAVERN_REFERENCE_HINT } from '@dsh-seam/agent-tavern'
import { ProjectionAwareCompactionEngine } from '@dsh-seam/compaction-effective-projection'
import type { BootOptions } from '@dsh-seam/loop-testkit'
import { failureReply } from '@dsh-seam/loop-testkit'
import { describe, expect, it } from 'vitest'
import { expectRebuiltFromLog, loopRequests, MIRA, SMALL_POLICY, tavernAgent, tavernLoop, toolModel } from './support.ts'

const MODEL_SUMMARIES: BootOptions = { plugins: [[ProjectionAwareCompactionEngine, { measure: 'projection' }]] }

describe('agent-managed and model summaries', () => {
  it('is refused closed on an engine that summarizes with a model, saying why', async () => {
    const loop = await tavernLoop(MODEL_SUMMARIES)
    await expect(tavernAgent(loop, 'hidden-summarizer', 'agent-managed')).rejects.toMatchObject({ code: 'architecture-conflict', reason: 'hidden-summarizer', missing: [], message: expect.stringContaining('summary: reference') })
  })

  it('runs when a curator allows model summaries (curator.summarizer)', async () => {
    const loop = await tavernLoop(MODEL_SUMMARIES)
    const agent = loop.create('curated')
    await agent.ctx.plugin(AgentTavern, { character: MIRA, contextMode: 'agent-managed', policy: SMALL_POLICY, curator: { summarizer: true } } as never)
    expect(contextModeOf(agent)).toBe('agent-managed')
    expect(contextModeRefusal(agent)).toBeUndefined()
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
