/** Shared assertions of the seam tests: log-rebuilt requests and canonical JSON for stock/patched comparison. */

import type { Agent } from '@deepseek-ai/dsh-agent'
import type { GenerateOptions } from '@deepseek-ai/dsh-llm'
import type { SessionEvent } from '@deepseek-ai/dsh-session'
import type { BootedLoop } from '@dsh-seam/loop-testkit'
import { rebuildRequestsByPrefix } from '@dsh-seam/loop-testkit'
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



/** Text of a request message, for readable assertions. */
export function textOf(message: GenerateOptions['messages'][number]): string {
  return message.content.map(block => block.type === 'text' ? block.text : block.type).join('|')
}

/**
 * Cancel a turn while an `agent/context` listener is running: `enter()` is what the listener calls once inside;
 * `cancelInside` sends `text`, waits for that call, cancels the turn and waits until the agent is idle.
 */
export function listenerLatch(): { enter: () => void; cancelInside: (loop: BootedLoop, agent: Agent, text: string) => Promise<void> } {
  let enter!: () => void
  const inside = new Promise<void>(resolve => { enter = resolve })
  return {
    enter,
    async cancelInside(loop, agent, text) {
      agent.followup(loop.user(text))
      await inside
      agent.cancel({ kind: 'user' })
      await agent.whenIdle()
    },
  }
}

/** A promise that settles once `signal` aborts. */
export function aborted(signal: AbortSignal): Promise<void> {
  return new Promise(resolve => signal.addEventListener('abort', () => resolve(), { once: true }))
}

/**
 * Assert what makes a request answerable (RFC 0001 invariant 2) on what the adapter received: it opens with user input,
 * carries the turn's input (and the newest runtime context, when given), and orphans no tool call or result.
 * @param request - a request as the adapter received it.
 * @param turnInput - the text of the turn's user message.
 * @param context - text the newest runtime-context snapshot ends with.
 */
export function expectAnswerable(request: GenerateOptions, turnInput: string, context?: string): void {
  const texts = request.messages.map(textOf)
  expect(request.messages[0]?.role).toBe('user')
  expect(request.messages[0]?.content.some(block => block.type === 'tool-result')).toBe(false)
  expect(texts.some(text => text.includes(turnInput))).toBe(true)
  if (context !== undefined) expect(texts.some(text => text.endsWith(context))).toBe(true)
  const calls = new Set<string>()
  for (const message of request.messages) {
    for (const block of message.content) {
      if (block.type === 'tool-call') calls.add(block.id)
      if (block.type === 'tool-result') expect(calls.delete(block.toolCallId)).toBe(true)
    }
  }
  expect([...calls]).toEqual([])
}
