/**
 * What AgentTavern reads back from the durable session log: the story transcript (every user message and assistant
 * reply, whether or not a projection or compaction left it out of later requests) and the memory notes the model
 * wrote with `memory_write`. Pure folds over events; the tools and the context snapshots are built on them, so
 * everything the model sees from AgentTavern is rebuilt from the log.
 * @module @dsh-context/agent-tavern/log
 */

import type { ContentBlock, Message } from '@deepseek-ai/dsh-llm'
import type { SessionEvent } from '@deepseek-ai/dsh-session'
import { relevance, snippet, terms } from './lexical.ts'

/** One utterance of the story as the log records it. */
export interface TranscriptEntry {
  readonly seq: number
  readonly turn: number
  readonly role: 'user' | 'assistant'
  readonly text: string
}

/** One `tavern_history_search` hit. */
export interface HistoryHit {
  readonly seq: number
  readonly turn: number
  readonly role: 'user' | 'assistant'
  /** Share of the query's terms the entry contains, in (0, 1]. */
  readonly score: number
  readonly snippet: string
}

/** A note the model kept with `memory_write`. */
export interface MemoryNote {
  /** The `memory_write` call id. */
  readonly id: string
  readonly text: string
  readonly tags: readonly string[]
  readonly importance: number
  /** Seq of the `tool/call` event that wrote it. */
  readonly seq: number
  readonly turn: number
}

/** One `memory_search` hit. */
export interface MemoryHit extends MemoryNote {
  /** `relevance * 100 + importance * 10 + freshness`, freshness in [0, 1] by write order. */
  readonly score: number
}

/** The tool name whose successful calls are memory notes. */
export const MEMORY_WRITE = 'memory_write'

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
 * The story transcript: user-sourced `user/message` events and the text of `assistant/message` events, in log order.
 * @param events - a session log.
 * @returns one entry per utterance with text.
 */
export function transcript(events: readonly SessionEvent[]): TranscriptEntry[] {
  const entries: TranscriptEntry[] = []
  let turn = 0
  for (const event of events) {
    if (event.type === 'turn/start') turn = event.data.turn
    else if (event.type === 'user/message' && event.data.source.kind === 'user') push('user', event.seq, event.data.content)
    else if (event.type === 'assistant/message') push('assistant', event.seq, event.data.message.content.filter(block => block.type === 'text'))
  }
  return entries

  function push(role: TranscriptEntry['role'], seq: number, content: readonly ContentBlock[]): void {
    const text = contentText(content).trim()
    if (text.length > 0) entries.push({ seq, turn, role, text })
  }
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
): HistoryHit[] {
  const wanted = terms(query)
  return entries
    .filter(entry => entry.turn < options.beforeTurn)
    .map(entry => ({ entry, score: relevance(wanted, new Set(terms(entry.text))) }))
    .filter(({ score }) => score > 0)
    .sort((a, b) => b.score - a.score || a.entry.seq - b.entry.seq)
    .slice(0, options.limit)
    .map(({ entry, score }) => ({
      seq: entry.seq,
      turn: entry.turn,
      role: entry.role,
      score: Math.round(score * 1000) / 1000,
      snippet: snippet(entry.text, wanted, options.snippetChars),
    }))
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

function noteFrom(call: SessionEvent<'tool/call'>): MemoryNote | undefined {
  let args: unknown
  try {
    args = JSON.parse(call.data.arguments)
  } catch {
    // A call whose arguments are not JSON never executed successfully, so it wrote no note.
    return undefined
  }
  if (typeof args !== 'object' || args === null) return undefined
  const { text, tags, importance } = args as { text?: unknown; tags?: unknown; importance?: unknown }
  if (typeof text !== 'string') return undefined
  return {
    id: call.data.callId,
    text,
    tags: Array.isArray(tags) ? tags.filter((tag): tag is string => typeof tag === 'string') : [],
    importance: typeof importance === 'number' ? importance : DEFAULT_IMPORTANCE,
    seq: call.seq,
    turn: call.data.turn,
  }
}

/** Importance of a note written without one. */
export const DEFAULT_IMPORTANCE = 0.5

function failed(result: SessionEvent<'tool/result'>): boolean {
  return result.data.error !== undefined || result.data.message.content.some(block => block.isError === true)
}

/**
 * The memory notes: every `memory_write` call whose `tool/result` is not an error, in write order.
 * @param events - a session log.
 * @returns the notes.
 */
export function memoryNotes(events: readonly SessionEvent[]): MemoryNote[] {
  const calls = new Map<string, SessionEvent<'tool/call'>>()
  const notes: MemoryNote[] = []
  for (const event of events) {
    if (event.type === 'tool/call' && event.data.name === MEMORY_WRITE) calls.set(event.data.callId, event)
    if (event.type !== 'tool/result' || failed(event)) continue
    const call = calls.get(event.data.message.source.callId)
    const note = call === undefined ? undefined : noteFrom(call)
    if (note !== undefined) notes.push(note)
  }
  return notes
}

/**
 * Search memory notes: lexical relevance first, then importance and freshness.
 * @param notes - notes in write order.
 * @param query - the search text.
 * @param limit - the most hits.
 * @returns hits with relevance above 0, best first.
 */
export function searchMemory(notes: readonly MemoryNote[], query: string, limit: number): MemoryHit[] {
  const wanted = terms(query)
  const scale = Math.max(1, notes.length - 1)
  return notes
    .map((note, i) => ({ note, match: relevance(wanted, new Set(terms(`${note.text} ${note.tags.join(' ')}`))), freshness: i / scale }))
    .filter(({ match }) => match > 0)
    .map(({ note, match, freshness }) => ({ ...note, score: Math.round((match * 100 + note.importance * 10 + freshness) * 1000) / 1000 }))
    .sort((a, b) => b.score - a.score || b.seq - a.seq)
    .slice(0, limit)
}
