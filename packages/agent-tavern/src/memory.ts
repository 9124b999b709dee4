/**
 * AgentTavern's memory, kept as AgentTavern's MemoryStore keeps it (importance, confidence, scope, created, updated,
 * expiry, soft delete) but stored in the durable session log: every record is the fold of the successful
 * `memory_write`, `memory_update` and `memory_forget` calls the log holds, so a replayed or resumed session sees the
 * same memory. Times are the logged events' times; "now" is the newest event's time, never the wall clock.
 * @module @dsh-seam/agent-tavern/memory
 */

import { createHash } from 'node:crypto'
import type { Message } from '@deepseek-ai/dsh-llm'
import type { SessionEvent } from '@deepseek-ai/dsh-session'
import { relevance, terms } from './lexical.ts'

/** The memory tools, as the model calls them. */
export const MEMORY_TOOLS = {
  write: 'memory_write',
  search: 'memory_search',
  read: 'memory_read',
  update: 'memory_update',
  forget: 'memory_forget',
} as const

/** Where a memory applies (AgentTavern's scopes); recorded, and a search filter. */
export const MEMORY_SCOPES = ['turn', 'chat', 'character', 'agent', 'global'] as const
type MemoryScope = typeof MEMORY_SCOPES[number]

/** Defaults of a record written without the field: AgentTavern's MemoryStore's (`normalizeScore`: importance 0, confidence 1). */
const MEMORY_DEFAULTS = { importance: 0, confidence: 1, scope: 'chat' } as const

/** One memory. */
export interface MemoryRecord {
  /** The `memory_write` call id. */
  readonly id: string
  readonly text: string
  readonly tags: readonly string[]
  readonly scope: MemoryScope
  /** In [0, 1]. */
  readonly importance: number
  /** In [0, 1]. */
  readonly confidence: number
  /** Epoch milliseconds of the write and of the newest update. */
  readonly createdAt: number
  readonly updatedAt: number
  /** Epoch milliseconds after which the record is inactive. */
  readonly expiresAt?: number
  /** Epoch milliseconds of the `memory_forget` call; a forgotten record stays in the log, inactive. */
  readonly forgottenAt?: number
  /** Turn of the write. */
  readonly turn: number
  /**
   * The first 16 hex of sha256 over the other fields, as AgentTavern's MemoryStore derives it: it changes with every
   * write, update and forget, and `memory_update` and `memory_forget` must name it.
   */
  readonly revision: string
}

/** One `memory_search` hit. */
interface MemoryHit {
  readonly record: MemoryRecord
  /** `lexical * 100 + importance * 10 + confidence * 5 + freshness`, freshness = 1 / (1 + days since the update). */
  readonly score: number
  /** Whether the hit's text was cut to fit the result's character budget. */
  readonly truncated: boolean
}

/** A `memory_search` result. */
export interface MemorySearch {
  readonly hits: readonly MemoryHit[]
  /** Whether matching records were left out (the limit) or cut (the character budget). */
  readonly truncated: boolean
  /** Active records searched. */
  readonly sourceCount: number
}

/** What a memory search asks. */
export interface MemoryQuery {
  readonly query: string
  readonly limit: number
  /** Most characters of hit text in the result. */
  readonly maxChars: number
  /** Epoch milliseconds the freshness and expiry are judged at. */
  readonly now: number
  readonly scope?: MemoryScope
  /** Records must carry every one of these tags. */
  readonly tags?: readonly string[]
}

const DAY_MS = 86_400_000

/** Arguments of the memory tools as the log records them (validated by the tools before they succeed). */
interface MemoryArgs {
  id?: unknown
  text?: unknown
  tags?: unknown
  scope?: unknown
  importance?: unknown
  confidence?: unknown
  expiresAt?: unknown
  revision?: unknown
}

function parseArgs(text: string): MemoryArgs | undefined {
  try {
    const args = JSON.parse(text) as unknown
    return typeof args === 'object' && args !== null ? args : undefined
  } catch {
    // Arguments that are not JSON never executed successfully, so they changed no record.
    return undefined
  }
}

const unit = (value: unknown): number | undefined => typeof value === 'number' && value >= 0 && value <= 1 ? value : undefined
const stringList = (value: unknown): string[] | undefined => Array.isArray(value) ? value.filter((tag): tag is string => typeof tag === 'string') : undefined
const scopeOf = (value: unknown): MemoryScope | undefined => MEMORY_SCOPES.find(scope => scope === value)
const timeOf = (value: unknown): number | undefined => {
  if (typeof value !== 'string') return undefined
  const at = Date.parse(value)
  return Number.isNaN(at) ? undefined : at
}

/** The record fields an update may change, from its arguments. */
function changes(args: MemoryArgs): Partial<Pick<MemoryRecord, 'text' | 'tags' | 'scope' | 'importance' | 'confidence' | 'expiresAt'>> {
  const text = typeof args.text === 'string' ? args.text : undefined
  const fields = { text, tags: stringList(args.tags), scope: scopeOf(args.scope), importance: unit(args.importance), confidence: unit(args.confidence), expiresAt: timeOf(args.expiresAt) }
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined))
}

/** A record with its {@link MemoryRecord.revision} derived from its other fields. */
function revised(record: Omit<MemoryRecord, 'revision'> & { revision?: string }): MemoryRecord {
  const { revision: _previous, ...fields } = record
  return { ...fields, revision: createHash('sha256').update(JSON.stringify(fields)).digest('hex').slice(0, 16) }
}

/** Whether a change names an active record at its current revision (the tools refuse any other, so the fold does too). */
function current(target: MemoryRecord | undefined, args: MemoryArgs): target is MemoryRecord {
  return target !== undefined && target.forgottenAt === undefined && args.revision === target.revision
}

function failed(result: SessionEvent<'tool/result'>): boolean {
  return result.data.error !== undefined || result.data.message.content.some(block => block.isError === true)
}

/**
 * Fold a log into its memory: each successful write adds a record, each update changes one, each forget marks one
 * forgotten. Calls apply in the order of their results.
 * @param events - a session log.
 * @returns every record by id, forgotten ones included, in write order.
 */
export function memoryRecords(events: readonly SessionEvent[]): Map<string, MemoryRecord> {
  const calls = new Map<string, SessionEvent<'tool/call'>>()
  const records = new Map<string, MemoryRecord>()
  const tools = new Set<string>(Object.values(MEMORY_TOOLS))
  for (const event of events) {
    if (event.type === 'tool/call' && tools.has(event.data.name)) calls.set(event.data.callId, event)
    if (event.type !== 'tool/result' || failed(event)) continue
    const call = calls.get(event.data.message.source.callId)
    const args = call === undefined ? undefined : parseArgs(call.data.arguments)
    if (call === undefined || args === undefined) continue
    const { time } = call
    const target = typeof args.id === 'string' ? records.get(args.id) : undefined
    switch (call.data.name) {
      case MEMORY_TOOLS.write: {
        if (typeof args.text !== 'string') break
        const { text: _text, ...fields } = changes(args)
        records.set(call.data.callId, revised({
          id: call.data.callId,
          text: args.text,
          tags: [],
          scope: MEMORY_DEFAULTS.scope,
          importance: MEMORY_DEFAULTS.importance,
          confidence: MEMORY_DEFAULTS.confidence,
          ...fields,
          createdAt: time,
          updatedAt: time,
          turn: call.data.turn,
        }))
        break
      }
      case MEMORY_TOOLS.update:
        if (current(target, args)) records.set(target.id, revised({ ...target, ...changes(args), updatedAt: time }))
        break
      case MEMORY_TOOLS.forget:
        if (current(target, args)) records.set(target.id, revised({ ...target, forgottenAt: time, updatedAt: time }))
        break
      default:
        // Searches and reads change nothing.
        break
    }
  }
  return records
}

/**
 * @param record - a record.
 * @param now - epoch milliseconds.
 * @returns whether it is neither forgotten nor expired at `now`.
 */
export function isActive(record: MemoryRecord, now: number): boolean {
  return record.forgottenAt === undefined && (record.expiresAt === undefined || record.expiresAt > now)
}

/**
 * The active records of a log, in write order.
 * @param events - a session log.
 * @returns its active memory at the newest event's time.
 */
export function activeMemories(events: readonly SessionEvent[]): MemoryRecord[] {
  const now = logTime(events)
  return [...memoryRecords(events).values()].filter(record => isActive(record, now))
}

/**
 * The current scene: the newest active `scene`-tagged memory, else the configured opening scene.
 * @param events - a session log.
 * @param opening - the config's `scene`.
 * @returns its text, and the memory's id when a memory holds it.
 */
export function currentScene(events: readonly SessionEvent[], opening: string): { text: string; id?: string } {
  const record = activeMemories(events).findLast(memory => memory.tags.includes('scene'))
  return record === undefined ? { text: opening } : { text: record.text, id: record.id }
}

/**
 * The time a log has reached: its newest event's time.
 * @param events - a session log.
 * @returns epoch milliseconds; 0 for an empty log.
 */
export function logTime(events: readonly SessionEvent[]): number {
  return events.at(-1)?.time ?? 0
}

/**
 * AgentTavern's memory score.
 * @param lexical - the query's {@link relevance} to the record's text and tags.
 * @param record - the record.
 * @param now - epoch milliseconds.
 * @returns `lexical * 100 + importance * 10 + confidence * 5 + 1 / (1 + days since the update)`.
 */
export function memoryScore(lexical: number, record: MemoryRecord, now: number): number {
  const freshness = 1 / (1 + Math.max(0, now - record.updatedAt) / DAY_MS)
  return lexical * 100 + record.importance * 10 + record.confidence * 5 + freshness
}

/**
 * Search records as AgentTavern's MemoryStore does: every active one in scope carrying the tags, those sharing no term
 * with the query included (lexical 0), best score first (then the newest update, then the id); hit texts fill
 * `maxChars`, the last one cut.
 * @param records - the memory ({@link memoryRecords}).
 * @param query - what to look for and how much to return.
 * @returns the hits, whether any were left out or cut, and how many records were searched.
 */
export function searchMemory(records: Iterable<MemoryRecord>, query: MemoryQuery): MemorySearch {
  const wanted = terms(query.query)
  const sources = [...records].filter(record => isActive(record, query.now)
    && (query.scope === undefined || record.scope === query.scope)
    && (query.tags ?? []).every(tag => record.tags.includes(tag)))
  const matched = sources
    .map(record => ({ record, lexical: relevance(wanted, new Set(terms(`${record.text} ${record.tags.join(' ')}`))) }))
    .map(({ record, lexical }) => ({ record, score: Math.round(memoryScore(lexical, record, query.now) * 1000) / 1000 }))
    .sort((a, b) => b.score - a.score || b.record.updatedAt - a.record.updatedAt || (a.record.id < b.record.id ? -1 : 1))
  const hits: MemoryHit[] = []
  let left = query.maxChars
  for (const { record, score } of matched.slice(0, query.limit)) {
    if (left <= 0) break
    const truncated = record.text.length > left
    hits.push({ record: truncated ? { ...record, text: `${record.text.slice(0, left)}…` } : record, score, truncated })
    left -= record.text.length
  }
  return { hits, truncated: hits.length < matched.length || hits.some(hit => hit.truncated), sourceCount: sources.length }
}

/**
 * The confidence a message declares for the records it writes or updates: the least of its `memory_write` and
 * `memory_update` calls' `confidence` (the default for a write without one).
 * @param message - a surface message.
 * @returns a value in [0, 1], or undefined when it makes no such call.
 */
export function declaredConfidence(message: Message): number | undefined {
  let confidence: number | undefined
  for (const block of message.content) {
    if (block.type !== 'tool-call' || (block.name !== MEMORY_TOOLS.write && block.name !== MEMORY_TOOLS.update)) continue
    const args = parseArgs(block.arguments)
    const declared = unit(args?.confidence) ?? (block.name === MEMORY_TOOLS.write ? MEMORY_DEFAULTS.confidence : undefined)
    if (declared !== undefined) confidence = Math.min(confidence ?? 1, declared)
  }
  return confidence
}

/**
 * The importance a message declares for the records it writes or updates: the most of its `memory_write` and
 * `memory_update` calls' `importance` (the default for a write without one), else 0.
 * @param message - a surface message.
 * @returns a value in [0, 1].
 */
export function declaredImportance(message: Message): number {
  let importance = 0
  for (const block of message.content) {
    if (block.type !== 'tool-call' || (block.name !== MEMORY_TOOLS.write && block.name !== MEMORY_TOOLS.update)) continue
    const args = parseArgs(block.arguments)
    if (args === undefined) continue
    importance = Math.max(importance, unit(args.importance) ?? (block.name === MEMORY_TOOLS.write ? MEMORY_DEFAULTS.importance : 0))
  }
  return importance
}
