/**
 * What the demo measures about one session, from its log and the requests the provider received: per-request tokens
 * (DSH token meter), prefix reuse, the replay verdict of every request, compactions, and the recall probes.
 * @module @dsh-seam/agent-tavern-demo/metrics
 */

import type { GenerateOptions, Message, TokenUsage } from '@deepseek-ai/dsh-llm'
import type { SessionEvent } from '@deepseek-ai/dsh-session'
import type { ReplayedRequest } from '@dsh-seam/agent-context'
import { diffRequest } from '@dsh-seam/agent-context'
import { contentText, TOOL_NAMES } from '@dsh-seam/agent-tavern'
import type { RequestPricer } from '@dsh-seam/compaction-effective-projection'
import { priceRequest, promptTokens, requestEnvelope } from '@dsh-seam/compaction-effective-projection'
import type { StoryTurn } from './story.ts'

/** One loop request. */
export interface RequestRow {
  readonly turn: number
  readonly step: number
  /** Request tokens: header plus messages. */
  readonly tokens: number
  /** Tokens of its prefix identical to the previous request's (header and leading messages); 0 for the first. */
  readonly reused: number
  /** Messages sent, and message-bearing surface nodes at the time. */
  readonly sent: number
  readonly surface: number
  /** Undefined when the request is rebuilt from the log exactly, else the first difference. */
  readonly diff: string | undefined
  /** Prompt tokens the provider reported for it (`promptTokens` of its usage), when it reported usage. */
  readonly provider?: number
}

/** One recall probe, judged from the log. */
export interface ProbeRow {
  readonly turn: number
  readonly plantTurn: number
  readonly expect: string
  /** The model called `tavern_history_search` in the probe turn. */
  readonly searched: boolean
  /** The tool's logged result contains the expected words. */
  readonly found: boolean
  /** The turn's final reply contains them. */
  readonly answered: boolean
  /** The request that asked the tool already carried them outside tool results (false: the projection left them out). */
  readonly inRequest: boolean
  /** The text of the turn's final reply. */
  readonly reply: string
}

function sameHeader(a: GenerateOptions, b: GenerateOptions): boolean {
  return a.system === b.system && JSON.stringify(a.tools ?? []) === JSON.stringify(b.tools ?? [])
}

/**
 * Tokens of `current` identical to the start of `previous`: the header when equal, then each leading message equal
 * by JSON, up to the first difference.
 * @param meter - the token meter.
 * @param previous - the previous request.
 * @param current - this request.
 * @returns reused tokens.
 */
function reusedPrefix(meter: RequestPricer, previous: GenerateOptions, current: GenerateOptions): number {
  if (!sameHeader(previous, current)) return 0
  let reused = meter.estimateHeader(requestEnvelope(current.system, current.tools))
  for (let i = 0; i < current.messages.length; i++) {
    const message = current.messages[i] as Message
    if (JSON.stringify(message) !== JSON.stringify(previous.messages[i])) break
    reused += meter.estimateMessage(message)
  }
  return reused
}

/**
 * Rows for the loop's requests, checked against their replay from the log.
 * @param meter - the token meter.
 * @param sent - the loop requests the provider received, in order.
 * @param replayed - `replayRequests` of the session log.
 * @returns one row per sent request; a request without a replay counterpart gets a `diff` saying so.
 */
export function requestRows(meter: RequestPricer, sent: readonly GenerateOptions[], replayed: readonly ReplayedRequest[]): RequestRow[] {
  return sent.map((request, i) => {
    const replay = replayed[i]
    const previous = sent[i - 1]
    return {
      turn: replay?.turn ?? 0,
      step: replay?.step ?? 0,
      tokens: priceRequest(meter, { header: requestEnvelope(request.system, request.tools), messages: request.messages }),
      reused: previous === undefined ? 0 : reusedPrefix(meter, previous, request),
      sent: request.messages.length,
      surface: replay?.surfaceNodes ?? 0,
      diff: replay === undefined ? `request ${i + 1} has no counterpart in the log (it records ${replayed.length})` : diffRequest(replay, request),
    }
  })
}

/**
 * The share of request tokens identical to the previous request's prefix, over every request but the first.
 * @param rows - request rows.
 * @returns a value in [0, 1]; 1 for fewer than two requests.
 */
export function prefixReuse(rows: readonly RequestRow[]): number {
  const later = rows.slice(1)
  const total = later.reduce((sum, row) => sum + row.tokens, 0)
  return total === 0 ? 1 : later.reduce((sum, row) => sum + row.reused, 0) / total
}

function turnEvents(events: readonly SessionEvent[], turn: number): SessionEvent[] {
  const start = events.findIndex(event => event.type === 'turn/start' && event.data.turn === turn)
  if (start === -1) return []
  const end = events.findIndex((event, i) => i > start && event.type === 'turn/end')
  return events.slice(start, end === -1 ? undefined : end + 1)
}

/**
 * Judge the recall probes from the log.
 * @param script - the story the session ran.
 * @param events - the session log.
 * @param replayed - its replayed requests.
 * @returns one row per probe turn.
 */
export function probeRows(script: readonly StoryTurn[], events: readonly SessionEvent[], replayed: readonly ReplayedRequest[]): ProbeRow[] {
  const rows: ProbeRow[] = []
  script.forEach((turn, i) => {
    if (turn.kind !== 'probe') return
    const number = i + 1
    const inTurn = turnEvents(events, number)
    const calls = new Set(inTurn.flatMap(event => event.type === 'tool/call' && event.data.name === TOOL_NAMES.historySearch ? [event.data.callId as string] : []))
    const results = inTurn.flatMap(event => event.type === 'tool/result' && calls.has(event.data.message.source.callId) ? [contentText(event.data.message.content)] : [])
    const replies = inTurn.flatMap(event => event.type === 'assistant/message' ? [contentText(event.data.message.content.filter(block => block.type === 'text'))] : [])
    const asking = replayed.find(request => request.turn === number)
    const has = (text: string | undefined): boolean => text !== undefined && text.toLowerCase().includes(turn.expect.toLowerCase())
    rows.push({
      turn: number,
      plantTurn: turn.plantTurn,
      expect: turn.expect,
      searched: calls.size > 0,
      found: results.some(has),
      answered: has(replies.at(-1)),
      inRequest: asking?.messages.some(message => message.source.kind !== 'tool' && has(contentText(message.content))) ?? false,
      reply: replies.at(-1) ?? '',
    })
  })
  return rows
}

/**
 * The provider usage of each request row, read from the log: the `usage` of the `assistant/message` that answered the
 * request's turn and step (the last one, when a step was retried).
 * @param events - the session log.
 * @param rows - request rows of that log.
 * @returns one entry per row; undefined where the provider reported no usage.
 */
export function providerUsage(events: readonly SessionEvent[], rows: readonly Pick<RequestRow, 'turn' | 'step'>[]): (TokenUsage | undefined)[] {
  const usage = new Map<string, TokenUsage>()
  for (const event of events) {
    if (event.type === 'assistant/message' && event.data.usage !== undefined) usage.set(`${event.data.turn}.${event.data.step}`, event.data.usage)
  }
  return rows.map(row => usage.get(`${row.turn}.${row.step}`))
}

/**
 * Request rows with the prompt tokens the provider reported for each, read from the log ({@link providerUsage}).
 * @param events - the session log.
 * @param rows - request rows of that log.
 * @returns the rows, each with `provider` where usage was reported.
 */
export function withProviderTokens(events: readonly SessionEvent[], rows: readonly RequestRow[]): RequestRow[] {
  const usage = providerUsage(events, rows)
  return rows.map((row, i) => {
    const reported = usage[i]
    return reported === undefined ? row : { ...row, provider: promptTokens(reported) }
  })
}
