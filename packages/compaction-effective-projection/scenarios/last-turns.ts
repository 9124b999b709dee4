/**
 * The scenario on a real offline loop: an agent whose `agent/context` listener sends only its last turns, on a
 * small context window, under stock compaction or this package's engine. Shared by `test/compaction` and
 * `bin/compaction-counts.mjs`; runs from the built `lib/` of every workspace package.
 * @module @dsh-seam/compaction-effective-projection/scenarios/last-turns
 */

import type { Context } from '@deepseek-ai/cordis'
import type { Agent } from '@deepseek-ai/dsh-agent'
import type { GenerateOptions, StreamChunk } from '@deepseek-ai/dsh-llm'
import type { SessionEvent } from '@deepseek-ai/dsh-session'
import type { BootedLoop, DshModules } from '@dsh-seam/loop-testkit'
import { bootLoop, failureReply, textReply, toolCallReply } from '@dsh-seam/loop-testkit'
import { priceRequest, ProjectionAwareCompactionEngine, requestEnvelope } from '@dsh-seam/compaction-effective-projection'
import type { ProjectionCompactionConfig, RequestPricer } from '@dsh-seam/compaction-effective-projection'

/** Which compaction engine a scenario mounts. */
export type EngineChoice =
  | { readonly kind: 'basic'; readonly config?: Record<string, unknown> }
  | { readonly kind: 'projection-aware'; readonly config?: ProjectionCompactionConfig }

/** A scenario run. */
export interface LastTurnsOptions {
  readonly dsh: DshModules
  readonly engine: EngineChoice
  /** User turns to run. */
  readonly turns: number
  /** Turns the listener keeps (the current one included); no listener when undefined. */
  readonly keepTurns?: number
  /** Route context window (default 2,000). */
  readonly contextWindow?: number
  /** Characters of each user message, or of the one in a given turn (default 120). */
  readonly userChars?: number | ((turn: number) => number)
  /** Characters of each assistant reply, or of the reply in a given turn (default 800). */
  readonly replyChars?: number | ((turn: number) => number)
  /** Provider usage reported with each reply, from the request it answers, the loop's context and the turn; none when undefined. */
  readonly usage?: (request: GenerateOptions, ctx: Context, turn: number) => { inputTokens: number; outputTokens: number }
  /** A turn whose first request the provider rejects with `CONTEXT_WINDOW_EXCEEDED`, once. */
  readonly overflowAt?: number
  /** Every turn divisible by this first calls the `echo` tool, then answers. */
  readonly toolEvery?: number
  /** Mount JSONL persistence under this directory. */
  readonly persistRoot?: string
  /** Session id (default `last-turns`). */
  readonly sessionId?: string
}

/** What a scenario run leaves to assert on. */
export interface LastTurnsRun {
  readonly loop: BootedLoop
  readonly agent: Agent
  /** Successful compactions (`compaction/summary` events). */
  readonly compactions: number
  /** Loop-built requests the adapter received (summarization calls excluded). */
  readonly requests: GenerateOptions[]
  /** Summarization calls the adapter received. */
  readonly summarizations: number
  /** Heuristic tokens of every compacted span (`shadowedTokenCount`), summed. */
  readonly summarizedTokens: number
  /** Compacted nodes that the last-turns listener had already left out of the request of that turn. */
  readonly unsentCompacted: number
}

const SUMMARIZER_MARK = 'acting as a compaction engine'

/**
 * Whether an adapter request is the basic engine's summarization call.
 * @param request - an adapter request.
 * @returns true for a summarization call.
 */
export function isSummarization(request: GenerateOptions): boolean {
  return request.messages.at(-1)?.content.some(block => block.type === 'text' && block.text.includes(SUMMARIZER_MARK)) ?? false
}

export function oldestKeptTurnStart(events: readonly SessionEvent[], turn: number, keepTurns: number): number {
  const oldest = turn - keepTurns + 1
  return events.find(event => event.type === 'turn/start' && (event).data.turn === oldest)?.seq ?? -1
}

/**
 * Send only the nodes logged after the `turn/start` of the oldest kept turn. A compaction checkpoint appended in the
 * current turn counts as current.
 * @param agent - the agent.
 * @param keepTurns - turns kept, the current one included.
 */
export function keepLastTurns(agent: Agent, keepTurns: number): void {
  agent.ctx.on('agent/context', async ({ turn }, next) => {
    const all = await next()
    const from = oldestKeptTurnStart(agent.session.events, turn, keepTurns)
    return { include: all.include.filter(seq => seq > from), revision: `last-${keepTurns}-turns` }
  })
}

function sized(chars: number | ((turn: number) => number), turn: number): number {
  return typeof chars === 'number' ? chars : chars(turn)
}

function text(chars: number, label: string): string {
  return `${label}: ${'lorem ipsum dolor sit amet '.repeat(Math.ceil(chars / 27))}`.slice(0, chars)
}

/** The adapter's replies: a short summary for summarization calls, else a reply sized for the current turn. */
function replies(options: Pick<LastTurnsOptions, 'replyChars' | 'overflowAt' | 'toolEvery' | 'usage'>, state: { turn: number; ctx?: Context }): (request: GenerateOptions) => StreamChunk[] {
  const { replyChars = 800 } = options
  let overflowed = false
  return request => {
    if (isSummarization(request)) return textReply('SUMMARY of the earlier turns')
    if (state.turn === options.overflowAt && !overflowed) {
      overflowed = true
      return failureReply({ code: 'CONTEXT_WINDOW_EXCEEDED', message: 'prompt is too long' })
    }
    const answersTool = request.messages.at(-1)?.content.some(block => block.type === 'tool-result') ?? false
    if (options.toolEvery !== undefined && state.turn % options.toolEvery === 0 && !answersTool) {
      return toolCallReply([{ id: `call-${state.turn}`, name: 'echo', args: { text: text(sized(replyChars, state.turn) / 2, 'echo') } }])
    }
    return textReply(text(sized(replyChars, state.turn), `reply ${state.turn}`), options.usage?.(request, state.ctx as Context, state.turn))
  }
}

/** A booted scenario loop whose adapter answers in the scenario's sizes. */
export interface ScenarioLoop {
  readonly loop: BootedLoop
  /**
   * Send the scenario's user message of each turn in `[from, to]` and wait for each reply.
   * @param agent - the agent.
   * @param from - first turn number.
   * @param to - last turn number.
   */
  converse(agent: Agent, from: number, to: number): Promise<void>
}

/**
 * Boot a loop with the chosen engine (none at the root when omitted) and the scenario's adapter.
 * @param options - modules, engine, sizes, usage, overflow and persistence.
 * @returns the loop and a conversation driver.
 */
export async function bootScenario(
  options: Omit<LastTurnsOptions, 'turns' | 'keepTurns' | 'sessionId' | 'engine'> & { readonly engine?: EngineChoice },
): Promise<ScenarioLoop> {
  const { dsh, engine } = options
  const state: { turn: number; ctx?: Context } = { turn: 0 }
  const loop = await bootLoop(dsh, {
    contextWindow: options.contextWindow ?? 2000,
    plugins: engine === undefined ? [] : [[engine.kind === 'basic' ? dsh.compactionBasic.default : ProjectionAwareCompactionEngine, engine.config ?? {}]],
    fallback: replies(options, state),
    ...options.persistRoot === undefined ? {} : { persistRoot: options.persistRoot },
  })
  state.ctx = loop.ctx
  return {
    loop,
    async converse(agent, from, to) {
      for (state.turn = from; state.turn <= to; state.turn++) {
        await loop.say(agent, text(sized(options.userChars ?? 120, state.turn), `user turn ${state.turn}`))
      }
    },
  }
}

/**
 * Boot a loop with the chosen engine and run the scenario's turns.
 * @param options - modules, engine, turns, listener and sizes.
 * @returns the loop, agent and counts.
 */
export async function runLastTurns(options: LastTurnsOptions): Promise<LastTurnsRun> {
  const { loop, converse } = await bootScenario(options)
  const agent = loop.create(options.sessionId ?? 'last-turns')
  if (options.keepTurns !== undefined) keepLastTurns(agent, options.keepTurns)
  await converse(agent, 1, options.turns)
  return summarize(loop, agent, options.keepTurns)
}

/**
 * Count a loop's compactions and requests for one agent.
 * @param loop - the booted loop.
 * @param agent - the agent.
 * @param keepTurns - the last-turns listener's setting, to count compacted nodes it left out.
 * @returns the counts.
 */
export function summarize(loop: BootedLoop, agent: Agent, keepTurns?: number): LastTurnsRun {
  const { events } = agent.session
  const mine = loop.adapter.requests.filter(request => request.sessionId === agent.id)
  let turn = 0
  let summarizedTokens = 0
  let unsentCompacted = 0
  for (const event of events) {
    if (event.type === 'turn/start') turn = (event).data.turn
    if (event.type !== 'compaction/summary') continue
    const { shadowedSeqs, shadowedTokenCount } = (event).data
    summarizedTokens += shadowedTokenCount
    if (keepTurns === undefined) continue
    const from = oldestKeptTurnStart(events, turn, keepTurns)
    unsentCompacted += shadowedSeqs.filter(seq => seq <= from).length
  }
  return {
    loop,
    agent,
    compactions: events.filter(event => event.type === 'compaction/summary').length,
    requests: mine.filter(request => !isSummarization(request)),
    summarizations: mine.filter(isSummarization).length,
    summarizedTokens,
    unsentCompacted,
  }
}

/**
 * The token meter's price of a request the adapter received: its system prompt and tools plus its messages.
 * @param meter - a patched loop's `ctx.tokenMeter`.
 * @param request - an adapter request.
 * @returns heuristic tokens.
 */
export function requestPrice(meter: RequestPricer, request: GenerateOptions): number {
  return priceRequest(meter, { header: requestEnvelope(request.system, request.tools), messages: request.messages })
}
