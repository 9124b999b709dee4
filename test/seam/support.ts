/** Shared assertions of the seam tests: log-rebuilt requests and canonical JSON for stock/patched comparison. */

import type { Agent } from '@deepseek-ai/dsh-agent'
import type { GenerateOptions } from '@deepseek-ai/dsh-llm'
import type { SessionEvent } from '@deepseek-ai/dsh-session'
import type { BootedLoop } from '@dsh-context/loop-testkit'
import { rebuildRequestsByPrefix } from '@dsh-context/loop-testkit'
import { expect } from 'vitest'

/** The adapter requests one agent made. */
export function requestsOf(loop: BootedLoop, agent: Agent): GenerateOptions[] {
  return loop.adapter.requests.filter(request => request.sessionId === agent.id)
}

/**
 * Assert that every request the adapter received for `agent` equals the request rebuilt from the agent's log
 * (DSH's prefix method plus the `request/projection` fold), and return how many there were.
 */
export function expectRequestsRebuiltFromLog(loop: BootedLoop, agent: Agent, events: readonly SessionEvent[] = agent.session.events): number {
  const sent = requestsOf(loop, agent)
  const rebuilt = rebuildRequestsByPrefix(loop.dsh, events)
  expect(rebuilt.map(r => JSON.stringify(r.messages))).toEqual(sent.map(r => JSON.stringify(r.messages)))
  expect(rebuilt.map(r => r.header?.system)).toEqual(sent.map(r => r.system))
  return sent.length
}


/** JSON with wall-clock times dropped and generated ids replaced by their order of first appearance. */
export function canonicalJson(value: unknown): string {
  const ids = new Map<string, string>()
  return JSON.stringify(value, (key, v: unknown) => {
    if (key === 'time' && typeof v === 'number') return undefined
    if (key === 'id' && typeof v === 'string' && /^[0-9a-f-]{36}$/.test(v)) {
      if (!ids.has(v)) ids.set(v, `id-${ids.size}`)
      return ids.get(v)
    }
    return v
  })
}

/** Text of a request message, for readable assertions. */
export function textOf(message: GenerateOptions['messages'][number]): string {
  return message.content.map(block => block.type === 'text' ? block.text : block.type).join('|')
}
