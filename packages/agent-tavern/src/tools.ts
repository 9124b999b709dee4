/**
 * AgentTavern's model-facing tools. Each reads the agent's durable session log or the config, so what a tool returns
 * is rebuilt from the log: `tavern_history_*` read the transcript (including nodes the projection or a compaction left
 * out of requests), `memory_*` the memory the logged memory calls fold into, `tavern_lore_search` the lore.
 * @module @dsh-seam/agent-tavern/tools
 */

import type { ContentBlock } from '@deepseek-ai/dsh-llm'
import type { Session, SessionEvent } from '@deepseek-ai/dsh-session'
import type { ToolDefinition } from '@deepseek-ai/dsh-tools'
import type { ParameterSchemaSpec } from '@deepseek-ai/dsh-tools'
import { defineTool } from '@deepseek-ai/dsh-tools'
import type { Config } from './config.ts'
import { logOf } from './host-log.ts'
import type { HistoryRange } from './log.ts'
import { readHistory, searchHistory, transcript } from './log.ts'
import { searchLore } from './lore.ts'
import type { MemoryRecord } from './memory.ts'
import { currentScene, isActive, logTime, MEMORY_SCOPES, MEMORY_TOOLS, memoryRecords, searchMemory } from './memory.ts'

/** Tool names, as the model calls them. */
export const TOOL_NAMES = {
  historySearch: 'tavern_history_search',
  historyRead: 'tavern_history_read',
  loreSearch: 'tavern_lore_search',
  sceneGet: 'tavern_scene_get',
  memoryWrite: MEMORY_TOOLS.write,
  memorySearch: MEMORY_TOOLS.search,
  memoryRead: MEMORY_TOOLS.read,
  memoryUpdate: MEMORY_TOOLS.update,
  memoryForget: MEMORY_TOOLS.forget,
} as const

const json = (_args: unknown, value: unknown): ContentBlock[] => [{ type: 'text', text: JSON.stringify(value) }]

const ROLE = { type: 'string', enum: ['user', 'assistant'], required: true } as const
const INTEGER = { type: 'integer', required: true } as const
const LIMIT = { type: 'integer', description: 'Most hits to return (capped by the deployment).' } as const
const ID = { type: 'string', required: true, description: 'The memory id memory_write returned.' } as const
const UNIT = { type: 'number', description: 'From 0 to 1.' } as const
const SCOPE = { type: 'string', enum: [...MEMORY_SCOPES], description: 'Where the memory applies; default chat.' } as const
const EXPIRES = { type: 'string', description: 'ISO 8601 time after which the memory no longer applies.' } as const
/** The memory fields a write sets and an update may change, besides the text. */
const FIELDS = {
  tags: { type: 'array', items: { type: 'string' } },
  scope: SCOPE,
  importance: UNIT,
  confidence: UNIT,
  expiresAt: EXPIRES,
} as const
const RECORD = {
  id: { type: 'string', required: true },
  text: { type: 'string', required: true },
  tags: { type: 'array', required: true, items: { type: 'string' } },
  scope: { type: 'string', required: true },
  importance: { type: 'number', required: true },
  confidence: { type: 'number', required: true },
  turn: INTEGER,
  createdAt: { type: 'string', required: true },
  updatedAt: { type: 'string', required: true },
  expiresAt: { type: 'string' },
  revision: { type: 'string', required: true },
} as const
const REVISION = { type: 'string', required: true, description: 'The revision memory_read, memory_search or the last change returned.' } as const
/** What a write or an update returns: the id and the record's new revision. */
const CHANGED = { id: { type: 'string', required: true }, revision: { type: 'string', required: true } } as const

/** A closed object schema. */
function record<const P extends ParameterSchemaSpec>(properties: P): { type: 'object'; additionalProperties: false; properties: P } {
  return { type: 'object', additionalProperties: false, properties }
}

/** A required array of closed objects. */
function listOf<const P extends ParameterSchemaSpec>(properties: P): { type: 'array'; required: true; items: { type: 'object'; additionalProperties: false; properties: P } } {
  return { type: 'array', required: true, items: record(properties) }
}

function currentTurn(session: Session): number {
  return logOf(session).findLast(event => event.type === 'turn/start')?.data.turn ?? 0
}

/** Reject importance or confidence outside [0, 1] and an unparsable expiry. */
function checkFields(args: { importance?: number; confidence?: number; expiresAt?: string }): void {
  for (const name of ['importance', 'confidence'] as const) {
    const value = args[name]
    if (value !== undefined && !(value >= 0 && value <= 1)) throw new Error(`${name} ${value} is not between 0 and 1`)
  }
  if (args.expiresAt !== undefined && Number.isNaN(Date.parse(args.expiresAt))) throw new Error(`expiresAt ${JSON.stringify(args.expiresAt)} is not an ISO 8601 time`)
}

/** The active record with an id, else a model-readable error naming why not. */
function activeRecord(session: Session, id: string): MemoryRecord {
  const record = memoryRecords(logOf(session)).get(id)
  if (record === undefined) throw new Error(`no memory has id ${JSON.stringify(id)}`)
  if (record.forgottenAt !== undefined) throw new Error(`memory ${JSON.stringify(id)} was forgotten`)
  if (!isActive(record, logTime(logOf(session)))) throw new Error(`memory ${JSON.stringify(id)} expired`)
  return record
}

/** The active record with an id at the revision a change names, else a model-readable error. */
function currentRecord(session: Session, id: string, revision: string): MemoryRecord {
  const record = activeRecord(session, id)
  if (record.revision !== revision) throw new Error(`memory ${JSON.stringify(id)} changed: it is at revision ${record.revision}, not ${JSON.stringify(revision)}; read it again with memory_read`)
  return record
}

/**
 * The id and revision a record will have once this call succeeds: the fold of the log with the call's result.
 * @param session - the session.
 * @param id - the record.
 * @param callId - the running call.
 */
function changed(session: Session, id: string, callId: string): { id: string; revision: string } {
  const succeeded = { type: 'tool/result', data: { message: { source: { callId }, content: [] } } } as unknown as SessionEvent
  return { id, revision: (memoryRecords([...logOf(session), succeeded]).get(id) as MemoryRecord).revision }
}

const iso = (at: number): string => new Date(at).toISOString()

/** A record as the memory tools return it. */
function recordView(record: MemoryRecord): { id: string; text: string; tags: string[]; scope: string; importance: number; confidence: number; turn: number; createdAt: string; updatedAt: string; expiresAt?: string; revision: string } {
  const { id, text, tags, scope, importance, confidence, turn, createdAt, updatedAt, expiresAt, revision } = record
  return { id, text, tags: [...tags], scope, importance, confidence, turn, createdAt: iso(createdAt), updatedAt: iso(updatedAt), ...expiresAt === undefined ? {} : { expiresAt: iso(expiresAt) }, revision }
}

function rangeOf(args: { fromSeq?: number; toSeq?: number; fromTurn?: number; toTurn?: number }): HistoryRange {
  const bySeq = args.fromSeq !== undefined || args.toSeq !== undefined
  const byTurn = args.fromTurn !== undefined || args.toTurn !== undefined
  if (bySeq === byTurn) throw new Error('give a seq range (fromSeq/toSeq) or a turn range (fromTurn/toTurn), exactly one of them')
  const [from, to] = bySeq ? [args.fromSeq ?? args.toSeq, args.toSeq ?? args.fromSeq] : [args.fromTurn ?? args.toTurn, args.toTurn ?? args.fromTurn]
  if ((from as number) > (to as number)) throw new Error(`range start ${from} is after its end ${to}`)
  return { by: bySeq ? 'seq' : 'turn', from: from as number, to: to as number }
}

/**
 * The AgentTavern tools for one agent's session.
 * @param session - the agent's session; every call reads its log.
 * @param config - result limits, the world-info entries and the opening scene.
 * @returns registry-ready definitions.
 */
export function tavernTools(session: Session, config: Pick<Config, 'tools' | 'lore' | 'scene'>): ToolDefinition[] {
  const { tools: limits, lore: { entries: lore } } = config
  const cap = (limit: number | undefined): number => Math.min(limit ?? limits.searchLimit, limits.searchLimit)
  return [
    defineTool({
      name: TOOL_NAMES.historySearch,
      description: 'Search the whole story so far, including parts no longer in this conversation. Returns the best matching user messages and replies (seq, turn, role, snippet); read one exactly with tavern_history_read.',
      parameters: {
        query: { type: 'string', required: true, description: 'Words to look for: names, objects, places.' },
        limit: LIMIT,
      },
      output: {
        schema: record({
          hits: listOf({ seq: INTEGER, turn: INTEGER, role: ROLE, score: { type: 'number', required: true }, snippet: { type: 'string', required: true } }),
          truncated: { type: 'boolean', required: true, description: 'More entries matched than were returned.' },
          sourceCount: { type: 'integer', required: true, description: 'Story entries searched.' },
        }),
        render: json,
      },
      isConcurrencySafe: () => true,
      execute(args) {
        const found = searchHistory(transcript(logOf(session)), args.query, { limit: cap(args.limit), snippetChars: limits.snippetChars, beforeTurn: currentTurn(session) })
        return Promise.resolve({ hits: found.hits.map(hit => ({ ...hit })), truncated: found.truncated, sourceCount: found.sourceCount })
      },
    }),
    defineTool({
      name: TOOL_NAMES.historyRead,
      description: 'Read the exact text of the story by seq range or by turn range (inclusive), e.g. a hit of tavern_history_search.',
      parameters: {
        fromSeq: { type: 'integer' },
        toSeq: { type: 'integer' },
        fromTurn: { type: 'integer' },
        toTurn: { type: 'integer' },
      },
      output: {
        schema: record({
          entries: listOf({ seq: INTEGER, turn: INTEGER, role: ROLE, text: { type: 'string', required: true } }),
          truncated: { type: 'boolean', required: true },
        }),
        render: json,
      },
      isConcurrencySafe: () => true,
      execute(args) {
        const read = readHistory(transcript(logOf(session)), rangeOf(args), limits.readMaxChars)
        return Promise.resolve({ entries: read.entries.map(entry => ({ ...entry })), truncated: read.truncated })
      },
    }),
    defineTool({
      name: TOOL_NAMES.loreSearch,
      description: 'Search the world info (people, places, factions, items) by name or keyword.',
      parameters: {
        query: { type: 'string', required: true },
        limit: LIMIT,
      },
      output: {
        schema: record({
          hits: listOf({ name: { type: 'string', required: true }, keywords: { type: 'array', required: true, items: { type: 'string' } }, text: { type: 'string', required: true } }),
          truncated: { type: 'boolean', required: true },
          sourceCount: { type: 'integer', required: true },
        }),
        render: json,
      },
      isConcurrencySafe: () => true,
      execute(args) {
        const found = searchLore(lore, args.query, cap(args.limit))
        return Promise.resolve({ hits: found.hits.map(entry => ({ name: entry.name, keywords: [...entry.keywords], text: entry.text })), truncated: found.truncated, sourceCount: found.sourceCount })
      },
    }),
    defineTool({
      name: TOOL_NAMES.sceneGet,
      description: 'Read the current scene: the newest "scene" memory, else the opening scene.',
      parameters: {},
      output: {
        schema: record({ scene: { type: 'string', required: true }, memoryId: { type: 'string', description: 'The scene memory, when one holds it.' } }),
        render: json,
      },
      isConcurrencySafe: () => true,
      execute() {
        const { text, id } = currentScene(logOf(session), config.scene)
        return Promise.resolve({ scene: text, ...id === undefined ? {} : { memoryId: id } })
      },
    }),
    defineTool({
      name: TOOL_NAMES.memoryWrite,
      description: 'Keep a memory about the story (a fact, a promise, the current scene). Tag "fact" memories appear in the facts context; the newest "scene" memory is the current scene.',
      parameters: { text: { type: 'string', required: true }, ...FIELDS },
      output: { schema: record(CHANGED), render: json },
      async execute(args, exec) {
        checkFields(args)
        if (args.text.trim().length === 0) throw new Error('text is empty')
        return changed(session, String(exec.callId), String(exec.callId))
      },
    }),
    defineTool({
      name: TOOL_NAMES.memorySearch,
      description: 'Search the kept memories. Scored by match, importance, confidence and freshness.',
      parameters: {
        query: { type: 'string', required: true },
        scope: SCOPE,
        tags: { type: 'array', items: { type: 'string' }, description: 'Only memories carrying all of these tags.' },
        limit: LIMIT,
      },
      output: {
        schema: record({
          hits: listOf({ ...RECORD, score: { type: 'number', required: true }, truncated: { type: 'boolean', required: true } }),
          truncated: { type: 'boolean', required: true, description: 'Matching memories were left out or cut.' },
          sourceCount: { type: 'integer', required: true, description: 'Active memories searched.' },
        }),
        render: json,
      },
      isConcurrencySafe: () => true,
      execute(args) {
        const found = searchMemory(memoryRecords(logOf(session)).values(), {
          query: args.query,
          limit: cap(args.limit),
          maxChars: limits.readMaxChars,
          now: logTime(logOf(session)),
          ...args.scope === undefined ? {} : { scope: args.scope },
          ...args.tags === undefined ? {} : { tags: args.tags },
        })
        return Promise.resolve({
          hits: found.hits.map(hit => ({ ...recordView(hit.record), score: hit.score, truncated: hit.truncated })),
          truncated: found.truncated,
          sourceCount: found.sourceCount,
        })
      },
    }),
    defineTool({
      name: TOOL_NAMES.memoryRead,
      description: 'Read one memory by id.',
      parameters: { id: ID },
      output: { schema: record(RECORD), render: json },
      isConcurrencySafe: () => true,
      async execute(args) {
        return recordView(activeRecord(session, args.id))
      },
    }),
    defineTool({
      name: TOOL_NAMES.memoryUpdate,
      description: 'Correct a memory: give its id, the revision you last read, and the fields that change. A memory changed since that revision is refused: read it again first.',
      parameters: { id: ID, revision: REVISION, text: { type: 'string' }, ...FIELDS },
      output: { schema: record(CHANGED), render: json },
      async execute(args, exec) {
        checkFields(args)
        currentRecord(session, args.id, args.revision)
        return changed(session, args.id, String(exec.callId))
      },
    }),
    defineTool({
      name: TOOL_NAMES.memoryForget,
      description: 'Forget a memory that no longer holds: give its id and the revision you last read. It stays in the story log, marked forgotten.',
      parameters: { id: ID, revision: REVISION },
      output: { schema: record({ id: { type: 'string', required: true }, forgotten: { type: 'boolean', required: true } }), render: json },
      async execute(args) {
        currentRecord(session, args.id, args.revision)
        return { id: args.id, forgotten: true }
      },
    }),
  ]
}
