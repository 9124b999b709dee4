/**
 * fast-check drives random `agent/context` listener behaviour through the real loop: valid selections (any subset,
 * duplicates, any order, with or without a revision) and refused ones within the listener's type (NaN, fractions,
 * negatives and other numbers that are no seq, seqs of other events or of nothing, revisions that break the revision
 * rule, throws, rejected promises) and writes to the offered node list, which is the host's own (read-only by type). No request that breaks an invariant may reach the
 * adapter, and every log must verify.
 */

import type { ContextNode, ContextSelection } from '@deepseek-ai/dsh-agent'
import type { SessionEvent } from '@deepseek-ai/dsh-session'
import type { AgentContextErrorCode } from '@dsh-seam/agent-context'
import { bootLoop, conversationReply, conversationTurn, patchedDsh } from '@dsh-seam/loop-testkit'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { expectAgentVerifies, verifyEvents } from './support.ts'

type Behaviour =
  | { readonly kind: 'select'; readonly picks: readonly number[]; readonly revision: string }
  | { readonly kind: 'not-seq'; readonly seq: number }
  | { readonly kind: 'foreign-seq'; readonly beyond: number }
  | { readonly kind: 'event-seq' }
  | { readonly kind: 'revision'; readonly value: string }
  | { readonly kind: 'throw' | 'reject' | 'mutate' }

const behaviourArb: fc.Arbitrary<Behaviour> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('select' as const), picks: fc.array(fc.nat(), { maxLength: 12 }), revision: fc.string({ maxLength: 40 }) }) },
  { weight: 2, arbitrary: fc.oneof(fc.constantFrom(NaN, -1, Infinity, -Infinity, Number.MAX_SAFE_INTEGER + 2), fc.double({ noInteger: true })).map(seq => ({ kind: 'not-seq' as const, seq })) },
  { weight: 1, arbitrary: fc.nat({ max: 1_000 }).map(beyond => ({ kind: 'foreign-seq' as const, beyond })) },
  { weight: 1, arbitrary: fc.constant({ kind: 'event-seq' as const }) },
  { weight: 1, arbitrary: fc.constantFrom('x'.repeat(201), '🌊'.repeat(101), 'é'.repeat(201)).map(value => ({ kind: 'revision' as const, value })) },
  { weight: 2, arbitrary: fc.constantFrom({ kind: 'throw' as const }, { kind: 'reject' as const }, { kind: 'mutate' as const }) },
)

/** The error codes a behaviour must end its step with; empty for a valid selection. */
function expectedCodes(behaviour: Behaviour): readonly AgentContextErrorCode[] {
  switch (behaviour.kind) {
    case 'select': return []
    case 'not-seq':
    case 'foreign-seq':
    case 'event-seq': return ['unknown-seq']
    case 'revision': return ['invalid-revision']
    case 'throw':
    case 'reject': return ['listener-failed']
    case 'mutate': return []
  }
}

async function act(
  behaviour: Behaviour,
  nodes: readonly ContextNode[],
  events: readonly SessionEvent[],
  next: () => Promise<ContextSelection>,
): Promise<ContextSelection | number> {
  const all = await next()
  switch (behaviour.kind) {
    case 'select': return { include: behaviour.picks.map(i => nodes[i % nodes.length]!.seq), revision: behaviour.revision }
    case 'not-seq': return { include: [...all.include, behaviour.seq], revision: 'not-seq' }
    case 'foreign-seq': return { include: [...all.include, events.length + behaviour.beyond], revision: 'foreign-seq' }
    case 'event-seq': return { include: [events.findLast(event => event.type === 'step/start')!.seq], revision: 'event-seq' }
    case 'revision': return { include: all.include, revision: behaviour.value }
    case 'throw': throw new Error('listener bug')
    case 'reject': return Promise.reject(new Error('listener rejected'))
    case 'mutate': {
      // The offered lists are the host's own, read-only by type only: a write changes later offers, never a request.
      (nodes as ContextNode[]).push(nodes[0]!)
      return all
    }
  }
}

describe('fuzzed agent/context listeners on the real loop', () => {
  it('never let an invariant-breaking request reach the adapter, and every log verifies', async () => {
    const dsh = await patchedDsh()
    await fc.assert(fc.asyncProperty(fc.array(behaviourArb, { minLength: 1, maxLength: 8 }), fc.integer({ min: 2, max: 5 }), async (behaviours, turns) => {
      const loop = await bootLoop(dsh, { fallback: conversationReply() })
      const agent = loop.create('fuzz')
      const expected: (readonly AgentContextErrorCode[])[] = []
      agent.ctx.on('agent/context', async ({ nodes }, next) => {
        const behaviour = behaviours[expected.length % behaviours.length]!
        expected.push(expectedCodes(behaviour))
        return act(behaviour, nodes, agent.session.events, next) as Promise<ContextSelection>
      })
      for (let turn = 1; turn <= turns; turn++) await loop.say(agent, conversationTurn(turn))

      const refused = expected.filter(codes => codes.length > 0)
      expect(loop.errors).toHaveLength(refused.length)
      loop.errors.forEach(({ error }, i) => {
        expect((error as Error).name).toBe('AgentContextError')
        expect(refused[i]).toContain((error as { code: AgentContextErrorCode }).code)
      })
      expect(await expectAgentVerifies(loop, agent)).toBe(expected.length - refused.length)
      expect((await verifyEvents(JSON.parse(JSON.stringify(agent.session.events)) as SessionEvent[])).violation).toBeUndefined()
    }), { numRuns: 200 })
  })
})
