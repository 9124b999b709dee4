/**
 * Per-request figures shared by `report` and `simulate`: the prefix a request shares with the previous one (where the
 * provider's cached prefix breaks), a node's category and source label, and percentiles.
 * @module @dsh-seam/cli/figures
 */

import type { Message } from '@deepseek-ai/dsh-llm'
import type { EpochHeader, SessionEvent } from '@deepseek-ai/dsh-session'
import { isUserInput, standingSource } from '@dsh-seam/agent-context'
import { promptTokens } from '@dsh-seam/compaction-effective-projection'
import type { TokenPricer } from './analyze.ts'

/** What a request is made of: the categories of the anchor plugin's composition bars. */
export type NodeCategory = 'user' | 'assistant' | 'tool' | 'snapshot' | 'plugin'

/** Categories in the order the composition lists them, after the request envelope (`header`). */
export const CATEGORIES: readonly NodeCategory[] = ['user', 'assistant', 'tool', 'snapshot', 'plugin']

/**
 * @param message - a node's message.
 * @returns its category: standing context (`standingSource`: instructions, catalogs, runtime-context snapshots), the user's input, the model's reply, a tool
 * result, or another plugin message (a compaction summary, a reminder).
 */
export function categoryOf(message: Message): NodeCategory {
  if (standingSource(message) !== undefined) return 'snapshot'
  const { source } = message
  if (source.kind === 'model' || message.role === 'assistant') return 'assistant'
  if (source.kind === 'tool' || !isUserInput(message)) return 'tool'
  return source.kind === 'plugin' ? 'plugin' : 'user'
}

/**
 * @param message - a node's message.
 * @returns who wrote it: `user`, `model <provider>/<model>`, `tool <call id>`, `plugin <name> [<form>]`.
 */
export function sourceLabel(message: Message): string {
  const { source } = message
  switch (source.kind) {
    case 'model': return `model ${source.provider}/${source.model}`
    case 'tool': return `tool ${source.callId}`
    case 'plugin': return `plugin ${source.plugin}${source.form === undefined ? '' : ` [${source.form}]`}`
    default: return source.kind
  }
}

/**
 * A message's whole text as the model is sent it: text and reasoning blocks, tool calls as `→ name(args)`, tool results
 * as `[result <call id>] …`, other blocks by type, one block per line. Unescaped: a terminal or a page escapes it.
 * @param message - a node's message.
 * @returns its text.
 */
export function textOf(message: Message): string {
  return message.content.map(block => {
    if (block.type === 'text' || block.type === 'reasoning') return block.text
    if (block.type === 'tool-call') return `→ ${block.name}(${block.arguments})`
    if (block.type === 'tool-result') return `[result ${block.toolCallId}] ${block.content.map(part => part.type === 'text' ? part.text : `[${part.type}]`).join(' ')}`
    return `[${block.type}]`
  }).join('\n')
}

/** A request as the provider receives it: its envelope and messages. */
export interface SentRequest {
  readonly header: Pick<EpochHeader, 'system' | 'tools'> | undefined
  readonly messages: readonly Message[]
}

/** Where a request's prefix shared with the previous request ends. */
export interface SharedPrefix {
  /** Leading messages identical to the previous request's; 0 when the envelope differs. */
  readonly messages: number
  /** Tokens of the shared prefix: the envelope and those messages (DSH token meter). */
  readonly tokens: number
  /**
   * Whether the previous request's messages do not all carry over: the cache breaks at message `messages`. A request
   * that only appends to the previous one does not break it.
   */
  readonly breaks: boolean
}

function sameHeader(a: SentRequest['header'], b: SentRequest['header']): boolean {
  return a === b || (a?.system === b?.system && JSON.stringify(a?.tools ?? []) === JSON.stringify(b?.tools ?? []))
}

/**
 * The prefix `current` shares with `previous`, as a provider's prompt cache sees it: the envelope when equal, then each
 * leading message equal (messages of one log are shared objects; an equal copy also counts). Costs what `current`
 * sends.
 * @param pricer - token estimates.
 * @param previous - the previous request of the session, if any.
 * @param current - this request.
 * @returns the shared prefix; nothing is shared with no previous request.
 */
export function sharedPrefix(pricer: TokenPricer, previous: SentRequest | undefined, current: SentRequest): SharedPrefix {
  if (previous === undefined) return { messages: 0, tokens: 0, breaks: false }
  if (!sameHeader(previous.header, current.header)) return { messages: 0, tokens: 0, breaks: true }
  let tokens = pricer.estimateHeader(current.header)
  let k = 0
  for (; k < current.messages.length && k < previous.messages.length; k++) {
    const [mine, theirs] = [current.messages[k] as Message, previous.messages[k] as Message]
    if (mine !== theirs && JSON.stringify(mine) !== JSON.stringify(theirs)) break
    tokens += pricer.estimateMessage(mine)
  }
  return { messages: k, tokens, breaks: k < previous.messages.length }
}

/**
 * @param values - any numbers.
 * @param p - the percentile, in (0, 1].
 * @returns the nearest-rank percentile; 0 for no values.
 */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length, Math.max(1, Math.ceil(p * sorted.length))) - 1] as number
}

/** The turn of any seq of a log fed in order: the turn of the newest `turn/start` before it. */
export class TurnClock {
  private readonly starts: number[] = []
  private readonly turns: number[] = []

  /** @param event - the log's next event. */
  push(event: SessionEvent): void {
    if (event.type !== 'turn/start') return
    this.starts.push(event.seq)
    this.turns.push(event.data.turn)
  }

  /**
   * @param seq - a seq of the events pushed so far.
   * @returns its turn; 0 before the first turn.
   */
  turnOf(seq: number): number {
    let [lo, hi, turn] = [0, this.starts.length - 1, 0]
    while (lo <= hi) {
      const mid = (lo + hi) >> 1
      if ((this.starts[mid] as number) < seq) {
        turn = this.turns[mid] as number
        lo = mid + 1
      } else hi = mid - 1
    }
    return turn
  }
}

/**
 * Largest token count `report` and `simulate` take from a log (provider usage, a context window): a billion tokens,
 * far above any model's window. A larger or non-integer figure in a log is not a count the page can draw.
 */
const MAX_LOGGED_TOKENS = 1_000_000_000

/** A token count as a log states it: a non-negative integer up to {@link MAX_LOGGED_TOKENS}, else undefined. */
function loggedCount(value: unknown): number | undefined {
  return Number.isSafeInteger(value) && (value as number) >= 0 && (value as number) <= MAX_LOGGED_TOKENS ? value as number : undefined
}

/**
 * The one reader of the numbers `report` and `simulate` take from a log's usage and request context: the prompt a
 * provider reported (`promptTokens` of an `assistant/message`'s usage) and the context window of a `request/context`.
 * `verify` accepts any value there (DSH's fold does not read them), so each is checked here and a value that is not a
 * count (null, a string, `1e308`, a fraction) is left out, never drawn.
 * @param event - a log event.
 * @returns what the event reports, when it is a readable count.
 */
export function loggedTokens(event: SessionEvent): { readonly prompt?: number; readonly window?: number; readonly unreadable: boolean } {
  if (event.type === 'request/context') {
    const window = loggedCount((event.data as { contextWindow?: unknown }).contextWindow)
    return window === undefined || window === 0 ? { unreadable: (event.data as { contextWindow?: unknown }).contextWindow !== undefined } : { window, unreadable: false }
  }
  if (event.type !== 'assistant/message') return { unreadable: false }
  const usage = (event.data as { usage?: unknown }).usage
  if (usage === undefined) return { unreadable: false }
  const { inputTokens, cacheReadTokens = 0, cacheWriteTokens = 0 } = (typeof usage === 'object' && usage !== null ? usage : {}) as Record<string, unknown>
  const parts = [inputTokens, cacheReadTokens, cacheWriteTokens].map(loggedCount)
  if (parts.some(part => part === undefined)) return { unreadable: true }
  const prompt = loggedCount(promptTokens({ inputTokens: parts[0] as number, outputTokens: 0, cacheReadTokens: parts[1] as number, cacheWriteTokens: parts[2] as number }))
  return prompt === undefined ? { unreadable: true } : { prompt, unreadable: false }
}
