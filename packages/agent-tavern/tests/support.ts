/**
 * Logs in DSH's event form for the unit tests, built the way the loop appends a turn: user message, a context
 * snapshot, tool calls with their results, a reply.
 */

import type { SessionEvent } from '@deepseek-ai/dsh-session'

/** One tool call of a turn. */
interface CallSpec {
  readonly name: string
  readonly args: unknown
  readonly error?: boolean
}

/** One turn of a test log. */
export interface TurnSpec {
  readonly user: string
  readonly reply: string
  readonly write?: { readonly args: string; readonly error?: boolean }
  readonly calls?: readonly CallSpec[]
  /** Epoch milliseconds of the turn's events (default 0). */
  readonly time?: number
}

/**
 * @param turns - the turns.
 * @returns the log.
 */
export function log(turns: readonly TurnSpec[]): SessionEvent[] {
  const events: Record<string, unknown>[] = []
  let time = 0
  const push = (type: string, data: unknown): void => { events.push({ type, seq: events.length, time, data }) }
  turns.forEach(({ user, reply, write, calls = [], time: at = 0 }, i) => {
    time = at
    const turn = i + 1
    push('turn/start', { turn })
    push('user/message', { id: `u${turn}`, role: 'user', content: [{ type: 'text', text: user }], source: { kind: 'user' } })
    push('user/message', { id: `c${turn}`, role: 'user', content: [{ type: 'text', text: 'Current scene: a context snapshot' }], source: { kind: 'plugin', plugin: 'x' } })
    const all = [...write === undefined ? [] : [{ name: 'memory_write', args: write.args, error: write.error }], ...calls]
    all.forEach((call, j) => {
      const callId = `call-${turn}${j === 0 ? '' : `.${j}`}`
      const args = typeof call.args === 'string' ? call.args : JSON.stringify(call.args)
      push('assistant/message', { turn, step: 1, message: { id: `a${turn}w${j}`, role: 'assistant', content: [{ type: 'tool-call', id: callId, name: call.name, arguments: args }], source: { kind: 'model', provider: 'p', model: 'm' } } })
      push('tool/call', { turn, step: 1, callId, name: call.name, arguments: args })
      push('tool/result', { turn, step: 1, message: { id: `r${turn}.${j}`, role: 'user', content: [{ type: 'tool-result', toolCallId: callId, content: [{ type: 'text', text: '{}' }], isError: call.error === true }], source: { kind: 'tool', callId } } })
    })
    push('assistant/message', { turn, step: all.length === 0 ? 1 : 2, message: { id: `a${turn}`, role: 'assistant', content: [{ type: 'text', text: reply }], source: { kind: 'model', provider: 'p', model: 'm' } } })
    push('turn/end', { turn, reason: { kind: 'completed' } })
  })
  return events as unknown as SessionEvent[]
}
