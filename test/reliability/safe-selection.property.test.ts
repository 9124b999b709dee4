/**
 * Property through the real rc.8 loop (RFC 0001 invariants 2, 5, 6): random `agent/context` listeners — subsets, empty,
 * everything, stale pins, duplicates, synchronous or not — over conversations with tool chains across steps,
 * runtime-context changes and compactions. Every request the adapter receives opens with user input, carries the
 * turn's input and the newest runtime context, orphans no tool call or result, and rebuilds from the log.
 */

import type { Agent, ContextSelection } from '@deepseek-ai/dsh-agent'
import type { GenerateOptions, Message } from '@deepseek-ai/dsh-llm'
import { diffRequest, replayRequests } from '@dsh-seam/agent-context'
import { bootLoop, patchedDsh, textReply, toolCallReply } from '@dsh-seam/loop-testkit'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { isSummarization } from '../../packages/compaction-effective-projection/scenarios/last-turns.ts'
import { expectAnswerable } from '../seam/support.ts'

const dsh = await patchedDsh()

type Policy =
  | { kind: 'subset'; keep: boolean[] }
  | { kind: 'empty' }
  | { kind: 'everything' }
  | { kind: 'pin-first'; tail: number }
  | { kind: 'duplicates'; tail: number }
  | { kind: 'last'; count: number }

interface Plan {
  policy: Policy
  sync: boolean
  callsNext: boolean
  turns: { tools: number; clock: boolean; compactAfter: boolean }[]
}

const policyArb: fc.Arbitrary<Policy> = fc.oneof(
  fc.array(fc.boolean(), { minLength: 1, maxLength: 40 }).map((keep): Policy => ({ kind: 'subset', keep })),
  fc.constant<Policy>({ kind: 'empty' }),
  fc.constant<Policy>({ kind: 'everything' }),
  fc.integer({ min: 0, max: 3 }).map((tail): Policy => ({ kind: 'pin-first', tail })),
  fc.integer({ min: 1, max: 4 }).map((tail): Policy => ({ kind: 'duplicates', tail })),
  fc.integer({ min: 1, max: 6 }).map((count): Policy => ({ kind: 'last', count })),
)

const planArb: fc.Arbitrary<Plan> = fc.record({
  policy: policyArb,
  sync: fc.boolean(),
  callsNext: fc.boolean(),
  turns: fc.array(fc.record({ tools: fc.integer({ min: 0, max: 2 }), clock: fc.boolean(), compactAfter: fc.boolean() }), { minLength: 2, maxLength: 6 }),
})

function choose(policy: Policy, nodes: readonly { seq: number }[], state: { pinned?: number }): number[] {
  const seqs = nodes.map(node => node.seq)
  switch (policy.kind) {
    case 'subset': return seqs.filter((_, i) => policy.keep[i % policy.keep.length])
    case 'empty': return []
    case 'everything': return seqs
    case 'pin-first':
      state.pinned ??= seqs[0] as number
      return [state.pinned, ...seqs.slice(seqs.length - policy.tail)]
    case 'duplicates': {
      const tail = seqs.slice(-policy.tail)
      return [...tail, ...tail.reverse(), ...tail]
    }
    case 'last': return seqs.slice(-policy.count)
  }
}

function install(agent: Agent, plan: Plan): void {
  const state: { pinned?: number } = {}
  const revision = `${plan.policy.kind}${plan.sync ? '-sync' : ''}`
  if (plan.sync) {
    agent.ctx.on('agent/context', (({ nodes }: { nodes: readonly { seq: number }[] }) =>
      ({ include: choose(plan.policy, nodes, state), revision })) as never)
  } else {
    agent.ctx.on('agent/context', async ({ nodes }, next): Promise<ContextSelection> => {
      if (plan.callsNext) await next()
      return { include: choose(plan.policy, nodes, state), revision }
    })
  }
}

const text = (message: Message): string => message.content.map(block =>
  block.type === 'text' ? block.text : block.type === 'tool-result' ? block.content.map(part => part.type === 'text' ? part.text : '').join('') : '').join('')

/** The tool chain of a turn: `tools` calls in consecutive steps, then a text answer. */
function reply(request: GenerateOptions, index: number): ReturnType<typeof textReply> {
  if (isSummarization(request)) return textReply('SUMMARY')
  const turnInput = [...request.messages].reverse().find(m => m.role === 'user' && !m.content.some(b => b.type === 'tool-result') && text(m).startsWith('turn '))
  const wanted = Number(/tools=(\d)/.exec(turnInput === undefined ? '' : text(turnInput))?.[1] ?? 0)
  const last = request.messages.at(-1)
  const steps = last?.content.some(b => b.type === 'tool-result') === true ? Number(/step (\d)/.exec(text(last))?.[1] ?? 0) : 0
  if (steps < wanted) return toolCallReply([{ id: `call-${index}`, name: 'echo', args: { text: `step ${steps + 1}` } }])
  return textReply(`answer ${index}: ${'a reply long enough to be worth compacting. '.repeat(8)}`)
}

describe('safe selection through the real loop', () => {
  it('every request is answerable and rebuilds from the log, whatever the listener returns', async () => {
    await fc.assert(fc.asyncProperty(planArb, async plan => {
      const loop = await bootLoop(dsh, {
        fallback: reply,
        plugins: [[dsh.compactionBasic.default, { auto: false }]],
      })
      const agent = loop.create('property')
      let clock = 0
      agent.ctx.systemPrompt.context({ name: 'clock', order: 0, text: () => `clock=${clock}` })
      install(agent, plan)
      const expectations: { input: string; clock: string }[] = []
      for (const [i, turn] of plan.turns.entries()) {
        if (turn.clock) clock++
        const input = `turn ${i + 1} tools=${turn.tools} ${'user words worth a summary. '.repeat(12)}`
        const before = loop.adapter.requests.length
        await loop.say(agent, input)
        for (let k = before; k < loop.adapter.requests.length; k++) expectations.push({ input, clock: `clock=${clock}` })
        if (turn.compactAfter) {
          await loop.ctx.compaction.compactNow(agent, AbortSignal.timeout(30_000))
          while (expectations.length < loop.adapter.requests.length) expectations.push({ input: '', clock: '' })
        }
      }
      expect(loop.errors.map(e => String(e.error))).toEqual([])
      const all = loop.adapter.requests
      const sent = all.filter(request => !isSummarization(request))
      all.forEach((request, i) => {
        if (isSummarization(request)) return
        const { input, clock } = expectations[i] as { input: string; clock: string }
        expectAnswerable(request, input, clock)
      })
      const replayed = replayRequests(agent.session.events)
      expect(replayed).toHaveLength(sent.length)
      expect(replayed.map((request, i) => diffRequest(request, sent[i] as GenerateOptions))).toEqual(sent.map(() => undefined))
    }), { numRuns: 40 })
  })
})
