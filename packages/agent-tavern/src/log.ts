/**
 * What AgentTavern reads back from the durable session log: the story transcript (every user message and assistant
 * reply, whether or not a projection or compaction left it out of later requests), searched and read by range. Pure
 * folds over events, so what the history tools return is rebuilt from the log.
 * @module @dsh-seam/agent-tavern/log
 */

import type { ContentBlock, Message } from '@deepseek-ai/dsh-llm'
import type { SessionEvent } from '@deepseek-ai/dsh-session'
import { isStoryLine } from './host-log.ts'
import { relevance, snippet, terms } from './lexical.ts'

/** One utterance of the story as the log records it. */
export interface TranscriptEntry {
  readonly seq: number
  readonly turn: number
  readonly role: 'user' | 'assistant'
  readonly text: string
}

/** One `tavern_history_search` hit. */
interface HistoryHit {
  readonly seq: number
  readonly turn: number
  readonly role: 'user' | 'assistant'
  /** Share of the query's terms the entry contains, in (0, 1]. */
  readonly score: number
  readonly snippet: string
}

/**
 * The model-facing text of content blocks: text and reasoning verbatim, tool calls as `name arguments`, tool results
 * by their content.
 * @param blocks - content blocks.
 * @returns the texts joined by newlines.
 */
export function contentText(blocks: readonly ContentBlock[]): string {
  return blocks.flatMap((block): string[] => {
    switch (block.type) {
      case 'text':
      case 'reasoning':
        return [block.text]
      case 'tool-call':
        return [`${block.name} ${block.arguments}`]
      case 'tool-result':
        return [contentText(block.content)]
      default:
        // Merge-extensible block union (images, files, …): no text to match.
        return []
    }
  }).join('\n')
}

/**
 * @param message - any message.
 * @returns its model-facing text ({@link contentText}).
 */
export function messageText(message: Message): string {
  return contentText(message.content)
}

/**
 * The story transcript: `user/message` events that are story lines ({@link isStoryLine}: the user's, and imported
 * history) and the text of `assistant/message` events, in log order.
 * @param events - a session log.
 * @returns one entry per utterance with text.
 */
export function transcript(events: readonly SessionEvent[]): TranscriptEntry[] {
  const entries: TranscriptEntry[] = []
  let turn = 0
  for (const event of events) {
    if (event.type === 'turn/start') turn = event.data.turn
    else if (event.type === 'user/message' && isStoryLine(event.data)) push('user', event.seq, event.data.content)
    else if (event.type === 'assistant/message') push('assistant', event.seq, event.data.message.content.filter(block => block.type === 'text'))
  }
  return entries

  function push(role: TranscriptEntry['role'], seq: number, content: readonly ContentBlock[]): void {
    const text = contentText(content).trim()
    if (text.length > 0) entries.push({ seq, turn, role, text })
  }
}

/** A `tavern_history_search` result. */
export interface HistorySearch {
  readonly hits: readonly HistoryHit[]
  /** Whether matching entries were left out by the limit. */
  readonly truncated: boolean
  /** Entries searched. */
  readonly sourceCount: number
}

/**
 * Search the transcript lexically.
 * @param entries - the transcript.
 * @param query - the search text.
 * @param options - at most `limit` hits, snippets of `snippetChars`, entries of turns before `beforeTurn` only.
 * @returns hits by score, then oldest first (where a fact entered the story).
 */
export function searchHistory(
  entries: readonly TranscriptEntry[],
  query: string,
  options: { readonly limit: number; readonly snippetChars: number; readonly beforeTurn: number },
): HistorySearch {
  const wanted = terms(query)
  const sources = entries.filter(entry => entry.turn < options.beforeTurn)
  const matched = sources
    .map(entry => ({ entry, score: relevance(wanted, new Set(terms(entry.text))) }))
    .filter(({ score }) => score > 0)
    .sort((a, b) => b.score - a.score || a.entry.seq - b.entry.seq)
  const hits = matched.slice(0, options.limit).map(({ entry, score }) => ({
    seq: entry.seq,
    turn: entry.turn,
    role: entry.role,
    score: Math.round(score * 1000) / 1000,
    snippet: snippet(entry.text, wanted, options.snippetChars),
  }))
  return { hits, truncated: matched.length > hits.length, sourceCount: sources.length }
}

/** An inclusive range of the transcript, by seq or by turn. */
export type HistoryRange =
  | { readonly by: 'seq'; readonly from: number; readonly to: number }
  | { readonly by: 'turn'; readonly from: number; readonly to: number }

/**
 * The exact text of a transcript range, cut at `maxChars` in total.
 * @param entries - the transcript.
 * @param range - seqs or turns, inclusive.
 * @param maxChars - the most characters returned.
 * @returns the entries in order, and whether later entries or text were cut.
 */
export function readHistory(entries: readonly TranscriptEntry[], range: HistoryRange, maxChars: number): { entries: TranscriptEntry[]; truncated: boolean } {
  const key = (entry: TranscriptEntry): number => range.by === 'seq' ? entry.seq : entry.turn
  const out: TranscriptEntry[] = []
  let left = maxChars
  for (const entry of entries) {
    if (key(entry) < range.from || key(entry) > range.to) continue
    if (left <= 0) return { entries: out, truncated: true }
    const text = entry.text.length > left ? `${entry.text.slice(0, left)}…` : entry.text
    out.push(text === entry.text ? entry : { ...entry, text })
    left -= entry.text.length
  }
  return { entries: out, truncated: left < 0 }
}
