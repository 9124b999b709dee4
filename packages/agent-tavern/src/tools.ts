/**
 * AgentTavern's model-facing tools. Each reads the agent's durable session log, so what a tool returns is rebuilt
 * from the log: `tavern_history_*` read the transcript (including nodes the projection or a compaction left out of
 * requests) and `memory_*` the notes earlier `memory_write` calls recorded as tool calls and results.
 * @module @dsh-context/agent-tavern/tools
 */

import type { ContentBlock } from '@deepseek-ai/dsh-llm'
import type { Session } from '@deepseek-ai/dsh-session'
import type { ToolDefinition } from '@deepseek-ai/dsh-tools'
import type { ParameterSchemaSpec } from '@deepseek-ai/dsh-tools'
import { defineTool } from '@deepseek-ai/dsh-tools'
import type { ToolLimits } from './config.ts'
import type { HistoryRange } from './log.ts'
import { MEMORY_WRITE, memoryNotes, readHistory, searchHistory, searchMemory, transcript } from './log.ts'

/** Tool names, as the model calls them. */
export const TOOL_NAMES = {
  historySearch: 'tavern_history_search',
  historyRead: 'tavern_history_read',
  memoryWrite: MEMORY_WRITE,
  memorySearch: 'memory_search',
} as const

const json = (_args: unknown, value: unknown): ContentBlock[] => [{ type: 'text', text: JSON.stringify(value) }]

const ROLE = { type: 'string', enum: ['user', 'assistant'], required: true } as const
const INTEGER = { type: 'integer', required: true } as const
const LIMIT = { type: 'integer', description: 'Most hits to return (capped by the deployment).' } as const

/** A closed object schema. */
function record<const P extends ParameterSchemaSpec>(properties: P): { type: 'object'; additionalProperties: false; properties: P } {
  return { type: 'object', additionalProperties: false, properties }
}

/** A required array of closed objects. */
function listOf<const P extends ParameterSchemaSpec>(properties: P): { type: 'array'; required: true; items: { type: 'object'; additionalProperties: false; properties: P } } {
  return { type: 'array', required: true, items: record(properties) }
}

function currentTurn(session: Session): number {
  return session.events.findLast(event => event.type === 'turn/start')?.data.turn ?? 0
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
 * The four AgentTavern tools for one agent's session.
 * @param session - the agent's session; every call reads its log.
 * @param limits - result limits.
 * @returns registry-ready definitions.
 */
export function tavernTools(session: Session, limits: ToolLimits): ToolDefinition[] {
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
          searched: { type: 'integer', required: true, description: 'Story entries searched.' },
        }),
        render: json,
      },
      isConcurrencySafe: () => true,
      execute(args) {
        const entries = transcript(session.events)
        const hits = searchHistory(entries, args.query, { limit: cap(args.limit), snippetChars: limits.snippetChars, beforeTurn: currentTurn(session) })
        return Promise.resolve({ hits: hits.map(hit => ({ ...hit })), searched: entries.length })
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
        const read = readHistory(transcript(session.events), rangeOf(args), limits.readMaxChars)
        return Promise.resolve({ entries: read.entries.map(entry => ({ ...entry })), truncated: read.truncated })
      },
    }),
    defineTool({
      name: TOOL_NAMES.memoryWrite,
      description: 'Keep a note about the story for later (a fact, a promise, the current scene). Tag "fact" notes appear in the facts context; the newest "scene" note is the current scene.',
      parameters: {
        text: { type: 'string', required: true },
        tags: { type: 'array', items: { type: 'string' } },
        importance: { type: 'number', description: 'From 0 to 1; default 0.5.' },
      },
      output: {
        schema: record({ id: { type: 'string', required: true } }),
        render: json,
      },
      execute(args, exec) {
        if (args.importance !== undefined && !(args.importance >= 0 && args.importance <= 1)) {
          return Promise.reject(new Error(`importance ${args.importance} is not between 0 and 1`))
        }
        return Promise.resolve({ id: String(exec.callId) })
      },
    }),
    defineTool({
      name: TOOL_NAMES.memorySearch,
      description: 'Search the notes kept with memory_write.',
      parameters: {
        query: { type: 'string', required: true },
        limit: LIMIT,
      },
      output: {
        schema: record({
          hits: listOf({
            id: { type: 'string', required: true },
            text: { type: 'string', required: true },
            tags: { type: 'array', required: true, items: { type: 'string' } },
            importance: { type: 'number', required: true },
            turn: INTEGER,
            score: { type: 'number', required: true },
          }),
        }),
        render: json,
      },
      isConcurrencySafe: () => true,
      execute(args) {
        const hits = searchMemory(memoryNotes(session.events), args.query, cap(args.limit))
        return Promise.resolve({ hits: hits.map(({ id, text, tags, importance, turn, score }) => ({ id, text, tags: [...tags], importance, turn, score })) })
      },
    }),
  ]
}
