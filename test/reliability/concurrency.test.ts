/**
 * Fifty agents in one context, each with its own agent-scoped `agent/context` listener and its own projection, run
 * their turns concurrently on one shared scripted adapter.
 */

import type { Agent } from '@deepseek-ai/dsh-agent'
import { deriveEventMessage } from '@deepseek-ai/dsh-session'
import { bootLoop, conversationReply, conversationTurn, patchedDsh } from '@dsh-seam/loop-testkit'
import { projectionEvents } from '@dsh-seam/agent-context'
import { describe, expect, it } from 'vitest'
import { expectAgentVerifies } from './support.ts'

const AGENTS = 50
const ROUNDS = 6

describe('concurrent agents', () => {
  it('each listener sees only its own agent\'s nodes, and every request of every agent verifies', async () => {
    const loop = await bootLoop(await patchedDsh(), { fallback: conversationReply() })
    const agents: Agent[] = []
    const foreign: string[] = []
    const calls = new Map<Agent, number>()
    let inFlight = 0
    let overlap = 0
    for (let i = 0; i < AGENTS; i++) {
      const agent = loop.create(`agent-${i}`)
      const keep = i % 7 + 1
      agent.ctx.on('agent/context', async ({ agent: subject, nodes }, next) => {
        calls.set(agent, (calls.get(agent) ?? 0) + 1)
        if (subject !== agent) foreign.push(`agent-${i} was offered agent ${String(subject.id)}`)
        const events = agent.session.events
        for (const node of nodes) {
          const source = events[node.seq]
          if (source === undefined || deriveEventMessage(source) !== node.message) foreign.push(`agent-${i} was offered seq ${node.seq}, not a node of its session`)
        }
        overlap = Math.max(overlap, ++inFlight)
        await new Promise(resolve => setTimeout(resolve, i % 3))
        inFlight -= 1
        await next()
        return { include: nodes.slice(-keep).map(node => node.seq), revision: `agent-${i}` }
      })
      agents.push(agent)
    }
    for (let round = 1; round <= ROUNDS; round++) await Promise.all(agents.map(agent => loop.say(agent, conversationTurn(round))))

    expect(loop.errors).toEqual([])
    expect(foreign).toEqual([])
    expect(overlap).toBeGreaterThan(AGENTS / 2)
    let requests = 0
    for (const [i, agent] of agents.entries()) {
      const sent = await expectAgentVerifies(loop, agent)
      expect(calls.get(agent)).toBe(sent)
      expect(new Set(projectionEvents(agent.session.events).map(event => event.data.revision))).toEqual(new Set([`agent-${i}`]))
      requests += sent
    }
    expect(requests).toBe(loop.adapter.requests.length)
  })
})
