/**
 * `dsh-seam simulate`: replay a recorded session's surface request by request under other `agent/context`
 * listeners, through the host's own normalizer (`normalizeOffer`) and required set (`NodeIndex.required`), without a
 * model. The surface comes from the same `LogAnalyzer` pass `verify` and `inspect` make.
 * @module @dsh-seam/cli/simulate
 */

import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { Agent, ContextNode, ContextSelection } from '@deepseek-ai/dsh-agent'
import type { Message, ToolSchema } from '@deepseek-ai/dsh-llm'
import type { SessionEvent, SessionHeader } from '@deepseek-ai/dsh-session'
import type { NodeIndex } from '@dsh-seam/agent-context'
import { AgentContextError, describeFailure, isUserInput, normalizeOffer } from '@dsh-seam/agent-context'
import { priceRequest } from '@dsh-seam/compaction-effective-projection'
import type { LogAnalysis, RequestSummary, RequestView, TokenPricer } from './analyze.ts'
import { LogAnalyzer } from './analyze.ts'
import type { SentRequest } from './figures.ts'
import { percentile, sharedPrefix, TurnClock } from './figures.ts'

/** The `agent/context` payload a policy's listener receives, as the host builds it. */
export interface PolicyPayload {
  readonly agent: Agent
  readonly turn: number
  readonly step: number
  readonly generation: number
  readonly nodes: readonly ContextNode[]
  readonly requiredSeqs: readonly number[]
  readonly system: string
  readonly tools: readonly ToolSchema[]
  readonly signal: AbortSignal
}

/** An `agent/context` waterfall listener, as DSH types it (the host also accepts a synchronous result). */
export type PolicyListener = (payload: PolicyPayload, next: () => Promise<ContextSelection>) => Promise<ContextSelection>

/** What a policy is built with, once per agent. */
export interface PolicyHost {
  /** The agent; in `simulate`, a read-only view of the log (`id`, `options`, `session.seq`, `session.events`). */
  readonly agent: Agent
  /** DSH's token meter (`ctx.tokenMeter`). */
  readonly meter: TokenPricer
}

/** A user turn and the earlier turns whose user input it needs (a recall probe). */
export interface RecallProbe {
  readonly turn: number
  readonly refersTo: readonly number[]
}

/**
 * What a policy module exports: the listener factory a plugin mounts with `agent.ctx.on('agent/context', ...)`, an
 * optional name, and optional recall probes for a log of a given number of turns.
 */
export interface ContextPolicy {
  readonly name?: string
  readonly createListener: (host: PolicyHost) => PolicyListener
  readonly probes?: (turns: number) => readonly RecallProbe[]
}

/** Why a policy cannot be simulated. */
export type PolicyErrorCode =
  /** No module at the path or specifier. */
  | 'policy-not-found'
  /** The module does not load, or exports no `createListener` function. */
  | 'invalid-policy'
  /** The listener touched the live agent (its context, tools, or the session beyond reading its log). */
  | 'live-agent'
  /** The listener threw or rejected. */
  | 'listener-failed'
  /**
   * The listener's result is not a `ContextSelection` (an object with an `include` array of numbers and an optional
   * string `revision`), or the host's normalizer refused it (`AgentContextError`).
   */
  | 'invalid-selection'

/** A policy that cannot be simulated, named by its module and, once replay started, the request. */
export class PolicyError extends Error {
  override readonly name = 'PolicyError'

  constructor(readonly code: PolicyErrorCode, readonly policy: string, message: string, options?: ErrorOptions) {
    super(`policy ${policy}: ${message}`, options)
  }
}

/** A policy to simulate, loaded. */
export interface LoadedPolicy {
  readonly name: string
  readonly policy: ContextPolicy
}

/**
 * Import a policy module: a file path (relative to the working directory) or a package specifier.
 * @param module - the path or specifier given to `--policy`.
 * @returns the policy, named by its `name` export or the module.
 * @throws {PolicyError} `policy-not-found`, `invalid-policy`.
 */
export async function loadPolicy(module: string): Promise<LoadedPolicy> {
  const path = resolve(module)
  const target = existsSync(path) ? pathToFileURL(path).href : module
  let loaded: Partial<ContextPolicy>
  try {
    loaded = await import(target) as Partial<ContextPolicy>
  } catch (error: unknown) {
    const code = (error as { code?: unknown }).code
    if (code === 'ERR_MODULE_NOT_FOUND' && target === module) throw new PolicyError('policy-not-found', module, 'no such file or package', { cause: error })
    throw new PolicyError('invalid-policy', module, `does not load: ${describeFailure(error)}`, { cause: error })
  }
  if (typeof loaded.createListener !== 'function') throw new PolicyError('invalid-policy', module, 'exports no createListener function (see dsh-seam --help)')
  if (loaded.probes !== undefined && typeof loaded.probes !== 'function') throw new PolicyError('invalid-policy', module, 'exports probes that is not a function of the turn count')
  const name = typeof loaded.name === 'string' && loaded.name.length > 0 ? loaded.name : module
  return { name, policy: loaded as ContextPolicy }
}

/** Figures of one policy (or the recorded selection) over the whole log. */
export interface PolicyFigures {
  readonly name: string
  readonly requests: number
  /** Requests that sent less than the surface. */
  readonly projected: number
  /** Estimated tokens sent (`priceRequest`, DSH token meter): sum, peak and 95th percentile. */
  readonly tokens: { readonly sum: number; readonly peak: number; readonly p95: number }
  /** Tokens in the prefix shared with the previous request, over the tokens of every request but the first. */
  readonly prefixReuse: number
  /** Nodes the host added to what the listener chose (required set, whole units, opening); undefined when recorded. */
  readonly hostAdditions?: number
  /** Per probe: whether the probe turn's first request sent every user input of the turns it refers to. */
  readonly recall: readonly boolean[]
}

/** One request a policy makes, as the host would send it. */
export interface SimulatedRequest {
  readonly turn: number
  readonly step: number
  /** Seqs sent, in surface order. */
  readonly include: readonly number[]
  readonly messages: readonly Message[]
  readonly tokens: number
}

/** What `simulate` computes. */
export interface Simulation {
  readonly analysis: LogAnalysis
  readonly probes: readonly RecallProbe[]
  /** The recorded selection first, then each policy in the order given. */
  readonly figures: readonly PolicyFigures[]
  /** Per policy, in the order given: every request. Kept only when asked (`keepRequests`). */
  readonly requests: readonly (readonly SimulatedRequest[])[]
}

/** How far a simulation got, for progress lines. */
type SimulationProgress = (events: number, total: number) => void

/** Agent members a listener may read in `simulate`: the log, never the live agent. */
const READABLE_AGENT = new Set(['id', 'options', 'session'])
const READABLE_SESSION = new Set(['id', 'seq', 'events', 'header'])

/**
 * A read-only stand-in for the agent over the log before one request: `id`, `options` (provider and model from the
 * request header), `session.id`, `session.header`, `session.seq` and `session.events` (the log before the request).
 * Reading anything else (the agent's context, its tools, `session.append`, `followUp`, ...) is recorded in `touched`
 * and throws.
 */
function logAgent(header: SessionHeader, events: readonly SessionEvent[], at: { seq: number; options: object }, touched: string[]): Agent {
  const refuse = (name: string): never => {
    touched.push(name)
    throw new Error(`simulate replays a log: ${name} is the live agent's`)
  }
  let before: { seq: number; events: readonly SessionEvent[] } | undefined
  const session = new Proxy({}, {
    get(_, key) {
      if (typeof key === 'symbol') return undefined
      if (!READABLE_SESSION.has(key)) return refuse(`agent.session.${key}`)
      if (key === 'seq') return at.seq
      if (key === 'events') {
        if (before?.seq !== at.seq) before = { seq: at.seq, events: Object.freeze(events.slice(0, at.seq)) }
        return before.events
      }
      return key === 'id' ? header.id : header
    },
    set: (_, key) => refuse(`agent.session.${String(key)}`),
  })
  return new Proxy({}, {
    get(_, key) {
      if (typeof key === 'symbol' || key === 'then') return undefined
      if (!READABLE_AGENT.has(key)) return refuse(`agent.${key}`)
      if (key === 'id') return header.id
      return key === 'options' ? at.options : session
    },
    set: (_, key) => refuse(`agent.${String(key)}`),
  }) as Agent
}

/** One policy's run: its listener and the requests it made so far. */
interface PolicyRun {
  readonly name: string
  readonly listener: PolicyListener | undefined
  readonly agent: Agent | undefined
  readonly touched: string[]
  previous: SentRequest | undefined
  readonly tokens: number[]
  reused: number
  projected: number
  additions: number
  readonly recall: boolean[]
  readonly requests: SimulatedRequest[] | undefined
}

/** The nodes of the current surface generation as the host offers them, grown as the surface appends. */
class OfferedNodes {
  private index: NodeIndex | undefined
  private nodes: ContextNode[] = []

  of(index: NodeIndex): readonly ContextNode[] {
    if (index !== this.index) {
      this.index = index
      this.nodes = []
    }
    for (let at = this.nodes.length; at < index.length; at++) this.nodes.push(Object.freeze({ seq: index.seqs[at] as number, message: index.messages[at] as Message }))
    return this.nodes
  }
}

/** The options of a simulation. */
export interface SimulateOptions {
  readonly pricer: TokenPricer
  /** Keep every simulated request (for comparing with a live run). */
  readonly keepRequests?: boolean
  readonly progress?: SimulationProgress
}

/**
 * Replay a log's requests under each policy. Each request costs what the policies read and send: the offered nodes
 * grow with the surface, the required set and normalization cost what is chosen.
 * @param header - the log's header.
 * @param events - its events in seq order.
 * @param policies - the policies, loaded.
 * @param options - token estimates, whether to keep requests, progress.
 * @returns the recorded selection's figures and each policy's; the log's analysis (its first violation stops replay).
 * @throws {PolicyError} `live-agent`, `listener-failed`, `invalid-selection`, naming the policy and the request.
 */
export async function simulate(header: SessionHeader, events: readonly SessionEvent[], policies: readonly LoadedPolicy[], options: SimulateOptions): Promise<Simulation> {
  const { pricer } = options
  const at = { seq: 0, options: {} as object }
  const runs: PolicyRun[] = [{ name: 'recorded', listener: undefined, agent: undefined, touched: [] as string[] }, ...policies.map(({ name, policy }) => {
    const touched: string[] = []
    const agent = logAgent(header, events, at, touched)
    let listener: PolicyListener
    try {
      listener = policy.createListener({ agent, meter: pricer })
    } catch (error: unknown) {
      throw touchedOr(name, touched, 'createListener', error)
    }
    if (touched.length > 0) throw touchedOr(name, touched, 'createListener', undefined)
    return { name, listener, agent, touched }
  })].map(run => ({ ...run, previous: undefined, tokens: [], reused: 0, projected: 0, additions: 0, recall: [], requests: options.keepRequests === true && run.listener !== undefined ? [] : undefined }))
  const turns = new TurnClock()
  let views: { summary: RequestSummary; view: RequestView } | undefined
  const analyzer = new LogAnalyzer(pricer, (summary, view) => { views = { summary, view } })
  const turnCount = events.reduce((count, event) => event.type === 'turn/start' ? count + 1 : count, 0)
  const probes = policies.flatMap(({ policy }) => policy.probes?.(turnCount) ?? [])
  const probeAt = new Map<number, number[]>()
  probes.forEach((probe, i) => probeAt.set(probe.turn, [...probeAt.get(probe.turn) ?? [], i]))
  const offered = new OfferedNodes()
  let probedTurn = 0
  for (const event of events) {
    analyzer.push(event)
    turns.push(event)
    options.progress?.(event.seq + 1, events.length)
    if (analyzer.violation !== undefined) break
    if (views === undefined) continue
    const { summary, view } = views
    views = undefined
    const probing = summary.turn !== probedTurn ? probeAt.get(summary.turn) : undefined
    probedTurn = summary.turn
    at.seq = summary.seq
    at.options = Object.freeze({ provider: view.request.header?.config.provider, model: view.request.header?.config.model })
    for (const run of runs) {
      const sent = run.listener === undefined ? recorded(view, summary) : await project(run, view, offered, { header, events, pricer })
      const request = { header: view.request.header, messages: sent.messages }
      const prefix = sharedPrefix(pricer, run.previous, request)
      if (run.previous !== undefined) run.reused += prefix.tokens
      run.previous = request
      run.tokens.push(sent.tokens)
      if (sent.positions.length < view.index.length) run.projected++
      run.requests?.push({ turn: summary.turn, step: summary.step, include: sent.positions.map(p => view.index.seqs[p] as number), messages: sent.messages, tokens: sent.tokens })
      for (const i of probing ?? []) run.recall[i] = recalled(view.index, sent.positions, (probes[i] as RecallProbe).refersTo, turns)
    }
  }
  const figures = runs.map((run): PolicyFigures => {
    const later = run.tokens.slice(1).reduce((a, b) => a + b, 0)
    return {
      name: run.name,
      requests: run.tokens.length,
      projected: run.projected,
      tokens: { sum: run.tokens.reduce((a, b) => a + b, 0), peak: Math.max(0, ...run.tokens), p95: percentile(run.tokens, 0.95) },
      prefixReuse: later === 0 ? 1 : run.reused / later,
      ...run.listener === undefined ? {} : { hostAdditions: run.additions },
      recall: probes.map((_, i) => run.recall[i] ?? false),
    }
  })
  return { analysis: analyzer.analysis, probes, figures, requests: runs.filter(run => run.requests !== undefined).map(run => run.requests as SimulatedRequest[]) }
}

/** What one request sends: positions in the surface index, messages, tokens. */
interface Sent {
  readonly positions: readonly number[]
  readonly messages: readonly Message[]
  readonly tokens: number
}

function recorded(view: RequestView, summary: RequestSummary): Sent {
  return { positions: view.included, messages: view.request.messages, tokens: summary.tokens }
}

function touchedOr(policy: string, touched: readonly string[], where: string, error: unknown): PolicyError {
  if (touched.length > 0) {
    return new PolicyError('live-agent', policy, `its ${where} touched ${[...new Set(touched)].join(', ')}: a listener that calls the agent or its tools cannot be replayed from a log`, { cause: error })
  }
  return new PolicyError('listener-failed', policy, `${where} failed: ${describeFailure(error)}`, { cause: error })
}

/**
 * A policy module's listener result as the host's type: the module is loaded from a file, so its result is checked
 * here, at the file boundary, before the host's normalizer reads it.
 */
function policySelection(policy: string, where: string, result: unknown): ContextSelection {
  let selection: ContextSelection | undefined
  try {
    selection = readSelection(result)
  } catch (error: unknown) {
    throw new PolicyError('invalid-selection', policy, `${where} returned a result that cannot be read: ${describeFailure(error)}`, { cause: error })
  }
  if (selection === undefined) {
    throw new PolicyError('invalid-selection', policy, `${where} returned ${describeFailure(result)}, not { include: number[], revision?: string }`)
  }
  return selection
}

/** A copy of `result` if it has the shape of a selection; reading it may throw (a module's getter). */
function readSelection(result: unknown): ContextSelection | undefined {
  if (typeof result !== 'object' || result === null) return undefined
  const { include, revision } = result as { include?: unknown; revision?: unknown }
  if (!Array.isArray(include) || !include.every(seq => typeof seq === 'number')) return undefined
  if (revision !== undefined && typeof revision !== 'string') return undefined
  return { include: [...include], ...revision === undefined ? {} : { revision } }
}

/** Run one policy's listener on a request's surface and normalize its result as the host does. */
async function project(run: PolicyRun, view: RequestView, offered: OfferedNodes, log: { header: SessionHeader; events: readonly SessionEvent[]; pricer: TokenPricer }): Promise<Sent> {
  const { index, request } = view
  const where = `listener at turn ${request.turn} step ${request.step} (seq ${request.seq})`
  const requiredSeqs = Object.freeze(index.requiredSeqs())
  let everything: ContextSelection | undefined
  const payload: PolicyPayload = {
    agent: run.agent as Agent,
    turn: request.turn,
    step: request.step,
    generation: request.generation,
    nodes: offered.of(index),
    requiredSeqs,
    system: request.header?.system ?? '',
    tools: request.header?.tools ?? [],
    signal: new AbortController().signal,
  }
  let result: unknown
  try {
    result = await (run.listener as PolicyListener)(payload, () => Promise.resolve(everything ??= Object.freeze({ include: Object.freeze(index.seqs.slice()) })))
  } catch (error: unknown) {
    throw touchedOr(run.name, run.touched, where, error)
  }
  if (run.touched.length > 0) throw touchedOr(run.name, run.touched, where, undefined)
  const selection = everything !== undefined && result === everything ? everything : policySelection(run.name, where, result)
  let positions: readonly number[]
  try {
    positions = selection === everything ? [...index.seqs.keys()] : normalizeOffer(String(log.header.id), () => log.events.slice(0, request.seq), index, requiredSeqs, selection).positions
  } catch (error: unknown) {
    if (!(error instanceof AgentContextError)) throw error
    throw new PolicyError('invalid-selection', run.name, `${where}: ${error.message}`, { cause: error })
  }
  if (selection !== everything) {
    const chosen = new Set<number>()
    for (const seq of selection.include) if (index.position.has(seq)) chosen.add(seq)
    run.additions += Math.max(0, positions.length - chosen.size)
  }
  const messages = positions.length === index.length ? index.messages.slice() : positions.map(p => index.messages[p] as Message)
  return { positions, messages, tokens: priceRequest(log.pricer, { header: request.header, messages }) }
}

/**
 * Whether a request sent every user input of the referred turns (a turn with none counts as not sent).
 * @param index - the request's surface.
 * @param positions - the positions it sent, ascending.
 * @param refersTo - the turns the probe needs.
 * @param turns - where each turn starts.
 * @returns true when each referred turn has user input on the surface and all of it was sent.
 */
function recalled(index: NodeIndex, positions: readonly number[], refersTo: readonly number[], turns: TurnClock): boolean {
  const sent = new Set(positions)
  return refersTo.every(turn => {
    let found = false
    for (let at = 0; at < index.length; at++) {
      const message = index.messages[at] as Message
      if (message.source.kind !== 'user' || !isUserInput(message) || turns.turnOf(index.seqs[at] as number) !== turn) continue
      if (!sent.has(at)) return false
      found = true
    }
    return found
  })
}
