/**
 * `dsh-seam simulate`: replay a recorded session's surface request by request under other `agent/context`
 * listeners, through the host's own normalizer (`normalizeOffer`) and required set (`NodeIndex.required`), without a
 * model. The surface comes from the same `LogAnalyzer` pass `verify` and `inspect` make.
 * @module @dsh-seam/cli/simulate
 */

import type { Agent, ContextNode, ContextSelection } from '@deepseek-ai/dsh-agent'
import type { Message, ToolSchema } from '@deepseek-ai/dsh-llm'
import type { SessionEvent, SessionHeader } from '@deepseek-ai/dsh-session'
import type { NodeIndex } from '@dsh-seam/agent-context'
import { AgentContextError, isUserInput, normalizeOffer } from '@dsh-seam/agent-context'
import { priceRequest } from '@dsh-seam/compaction-effective-projection'
import type { LogAnalysis, RequestSummary, RequestView, TokenPricer } from './analyze.ts'
import { excludedRuns, LogAnalyzer } from './analyze.ts'
import type { ReportModel } from './report.ts'
import { ReportBuilder } from './report.ts'
import type { SentRequest } from './figures.ts'
import { loggedTokens, percentile, sharedPrefix, textOf, TurnClock } from './figures.ts'
import type { LoadedPolicy } from './policy-host.ts'
import { PolicyError } from './policy-host.ts'
import type { OfferMessage } from './policy-worker.ts'

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

/**
 * A recall probe: a user turn, the earlier turns whose user input it needs, and optionally the fact it asks for (text
 * that must be in something the turn's requests send: a user line, a reply, a tool result, a compaction summary).
 */
export interface RecallProbe {
  readonly turn: number
  readonly refersTo: readonly number[]
  readonly fact?: string
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
  readonly inputSent: readonly boolean[]
  /**
   * Per probe: whether a request of the probe turn sent its fact (in any message: user input, replies, tool calls and
   * results, summaries); undefined for a probe without a fact.
   */
  readonly factSent: readonly (boolean | undefined)[]
  /** Requests whose estimated tokens exceed the context window the log records; undefined when it records none. */
  readonly overflows?: number
  /** Reasons the policy gave for the nodes it left out, with how many times (request × node) each was given. */
  readonly reasons: readonly { readonly reason: string; readonly count: number }[]
}

/** One request a policy makes, as the host would send it. */
export interface SimulatedRequest {
  readonly turn: number
  readonly step: number
  /** Seqs sent, in surface order. */
  readonly include: readonly number[]
  readonly messages: readonly Message[]
  readonly tokens: number
  /** Why the policy left out a seq, where it said (`reasons` in its result). */
  readonly reasons: ReadonlyMap<number, string>
}

/** What `simulate` computes. */
export interface Simulation {
  readonly analysis: LogAnalysis
  readonly probes: readonly RecallProbe[]
  /** The newest context window the log records (`request/context`), when it records one. */
  readonly contextWindow?: number
  /** The recorded selection first, then each policy in the order given. */
  readonly figures: readonly PolicyFigures[]
  /** Per policy, in the order given: every request. Kept only when asked (`keepRequests`). */
  readonly requests: readonly (readonly SimulatedRequest[])[]
  /** The recorded run's report model with each policy as a variant, when asked (`report`). */
  readonly report?: ReportModel
}

/** How far a simulation got, for progress lines. */
type SimulationProgress = (events: number, total: number) => void

/** One policy's run and the requests it made so far. */
interface PolicyRun {
  readonly name: string
  readonly policy: LoadedPolicy | undefined
  previous: SentRequest | undefined
  readonly tokens: number[]
  reused: number
  projected: number
  additions: number
  overflows: number
  readonly inputSent: boolean[]
  readonly factSent: boolean[]
  readonly reasons: Map<string, number>
  readonly requests: SimulatedRequest[] | undefined
}

/** What each policy's worker has been sent of the log and of the offered nodes, so each request sends what is new. */
class OfferStream {
  private index: NodeIndex | undefined
  private offered = 0
  private events = 0

  constructor(private readonly log: readonly SessionEvent[]) {}

  offer(view: RequestView, where: string, options: OfferMessage['options']): OfferMessage {
    const { index, request } = view
    const reset = index !== this.index
    if (reset) {
      this.index = index
      this.offered = 0
    }
    const added: { seq: number; message: Message }[] = []
    for (let at = this.offered; at < index.length; at++) added.push({ seq: index.seqs[at] as number, message: index.messages[at] as Message })
    this.offered = index.length
    const events = this.log.slice(this.events, request.seq)
    this.events = Math.max(this.events, request.seq)
    return {
      type: 'request', where, events, reset, added, seq: request.seq, options,
      turn: request.turn, step: request.step, generation: request.generation,
      requiredSeqs: index.requiredSeqs(), system: request.header?.system ?? '', tools: request.header?.tools ?? [],
    }
  }
}

/** The options of a simulation. */
export interface SimulateOptions {
  readonly pricer: TokenPricer
  /** Keep every simulated request (for comparing with a live run). */
  readonly keepRequests?: boolean
  /** Build the report model of the recorded run with each policy's requests beside it (`simulate --report`). */
  readonly report?: { readonly file: string }
  readonly progress?: SimulationProgress
}

/** The first rejection of settled calls, in policy order, else their values. */
function firstFailure<T>(results: readonly PromiseSettledResult<T>[]): T[] {
  const failed = results.find(result => result.status === 'rejected')
  if (failed !== undefined) throw failed.reason
  return results.map(result => (result as PromiseFulfilledResult<T>).value)
}

/**
 * Replay a log's requests under each policy, each in its own worker (every policy is sent its own copy of the offer).
 * Each request costs what the policies read and send: the offered nodes grow with the surface, the required set and
 * normalization cost what is chosen. The policies are closed when it returns or throws.
 * @param header - the log's header.
 * @param events - its events in seq order.
 * @param policies - the policies, loaded ({@link loadPolicy}).
 * @param options - token estimates, whether to keep requests, progress.
 * @returns the recorded selection's figures and each policy's; the log's analysis (its first violation stops replay).
 * @throws {PolicyError} `live-agent`, `listener-failed`, `listener-timeout`, `policy-exited`, `invalid-selection`,
 * `invalid-policy` (its probes), naming the policy and the request.
 */
export async function simulate(header: SessionHeader, events: readonly SessionEvent[], policies: readonly LoadedPolicy[], options: SimulateOptions): Promise<Simulation> {
  try {
    return await replay(header, events, policies, options)
  } finally {
    await Promise.all(policies.map(policy => policy.close()))
  }
}

async function replay(header: SessionHeader, events: readonly SessionEvent[], policies: readonly LoadedPolicy[], options: SimulateOptions): Promise<Simulation> {
  const { pricer } = options
  firstFailure(await Promise.allSettled(policies.map(policy => policy.call({ type: 'start', header }, 'createListener'))))
  const turnCount = events.reduce((count, event) => event.type === 'turn/start' ? count + 1 : count, 0)
  const probes = firstFailure(await Promise.allSettled(policies.map(policy => policy.call({ type: 'probes', turns: turnCount }, `probes(${turnCount})`))))
    .flatMap(reply => reply.type === 'probes' ? reply.probes : [])
  const runs: PolicyRun[] = [undefined, ...policies].map(policy => ({
    name: policy?.name ?? 'recorded', policy, previous: undefined, tokens: [], reused: 0, projected: 0, additions: 0, overflows: 0,
    inputSent: [], factSent: [], reasons: new Map(), requests: options.keepRequests === true && policy !== undefined ? [] : undefined,
  }))
  const turns = new TurnClock()
  let views: { summary: RequestSummary; view: RequestView } | undefined
  const analyzer = new LogAnalyzer(pricer, (summary, view) => { views = { summary, view } })
  const probeAt = new Map<number, number[]>()
  probes.forEach((probe, i) => probeAt.set(probe.turn, [...probeAt.get(probe.turn) ?? [], i]))
  const stream = new OfferStream(events)
  const builders = options.report === undefined ? undefined : runs.map(() => new ReportBuilder(pricer))
  let contextWindow: number | undefined
  let probedTurn = 0
  for (const event of events) {
    analyzer.push(event)
    turns.push(event)
    contextWindow = loggedTokens(event).window ?? contextWindow
    for (const builder of builders ?? []) builder.push(event)
    options.progress?.(event.seq + 1, events.length)
    if (analyzer.violation !== undefined) break
    if (views === undefined) continue
    const { summary, view } = views
    views = undefined
    const probing = probeAt.get(summary.turn)
    const first = summary.turn !== probedTurn
    probedTurn = summary.turn
    const where = `listener at turn ${summary.turn} step ${summary.step} (seq ${summary.seq})`
    const offer = stream.offer(view, where, { provider: view.request.header?.config.provider, model: view.request.header?.config.model })
    const sent = firstFailure(await Promise.allSettled(runs.map(run => run.policy === undefined ? Promise.resolve(recorded(view, summary)) : project(run, view, offer, { header, events, pricer }))))
    runs.forEach((run, r) => {
      const request = sent[r] as Sent
      const prefix = sharedPrefix(pricer, run.previous, { header: view.request.header, messages: request.messages })
      if (run.previous !== undefined) run.reused += prefix.tokens
      run.previous = { header: view.request.header, messages: request.messages }
      run.tokens.push(request.tokens)
      if (request.positions.length < view.index.length) run.projected++
      if (contextWindow !== undefined && request.tokens > contextWindow) run.overflows++
      for (const reason of request.reasons.values()) run.reasons.set(reason, (run.reasons.get(reason) ?? 0) + 1)
      builders?.[r]?.observe(run.policy === undefined ? summary : policySummary(summary, view, request), { ...view, included: request.positions, request: { ...view.request, messages: request.messages as Message[] } }, request.reasons)
      run.requests?.push({ turn: summary.turn, step: summary.step, include: request.positions.map(p => view.index.seqs[p] as number), messages: request.messages, tokens: request.tokens, reasons: request.reasons })
      for (const i of probing ?? []) {
        const probe = probes[i] as RecallProbe
        if (first) run.inputSent[i] = inputSent(view.index, request.positions, probe.refersTo, turns)
        if (probe.fact !== undefined) run.factSent[i] ||= factSent(request.messages, probe.fact)
      }
    })
  }
  const figures = runs.map((run): PolicyFigures => {
    const later = run.tokens.slice(1).reduce((a, b) => a + b, 0)
    return {
      name: run.name,
      requests: run.tokens.length,
      projected: run.projected,
      tokens: { sum: run.tokens.reduce((a, b) => a + b, 0), peak: Math.max(0, ...run.tokens), p95: percentile(run.tokens, 0.95) },
      prefixReuse: later === 0 ? 1 : run.reused / later,
      ...run.policy === undefined ? {} : { hostAdditions: run.additions },
      inputSent: probes.map((_, i) => run.inputSent[i] ?? false),
      factSent: probes.map((probe, i) => probe.fact === undefined ? undefined : run.factSent[i] ?? false),
      ...contextWindow === undefined ? {} : { overflows: run.overflows },
      reasons: [...run.reasons].map(([reason, count]) => ({ reason, count })).sort((a, b) => b.count - a.count || (a.reason < b.reason ? -1 : 1)),
    }
  })
  const models = builders?.map(builder => builder.model(options.report?.file ?? '', String(header.id), events.length))
  const report = models === undefined ? undefined : { ...models[0] as ReportModel, variants: models.slice(1).map((model, i) => ({ name: (runs[i + 1] as PolicyRun).name, requests: model.requests })) }
  return {
    analysis: analyzer.analysis, probes, figures, ...contextWindow === undefined ? {} : { contextWindow }, ...report === undefined ? {} : { report },
    requests: runs.filter(run => run.requests !== undefined).map(run => run.requests as SimulatedRequest[]),
  }
}

/** What one request sends: positions in the surface index, messages, tokens, and the policy's revision and reasons for what it left out. */
interface Sent {
  readonly positions: readonly number[]
  readonly messages: readonly Message[]
  readonly tokens: number
  readonly revision?: string
  readonly reasons: ReadonlyMap<number, string>
}

/** A policy's request as `inspect` would summarize it, had the policy been recorded. */
function policySummary(summary: RequestSummary, view: RequestView, sent: Sent): RequestSummary {
  const { projectionSeq: _, revision: __, ...rest } = summary
  return {
    ...rest,
    includedNodes: sent.positions.length,
    excluded: excludedRuns(view.index, sent.positions),
    tokens: sent.tokens,
    ...sent.positions.length < view.index.length ? { projectionSeq: summary.seq } : {},
    ...sent.revision === undefined ? {} : { revision: sent.revision },
  }
}

const NO_REASONS: ReadonlyMap<number, string> = new Map()

function recorded(view: RequestView, summary: RequestSummary): Sent {
  return { positions: view.included, messages: view.request.messages, tokens: summary.tokens, reasons: NO_REASONS }
}

/** Offer one request to a policy's worker and normalize its selection as the host does. */
async function project(run: PolicyRun, view: RequestView, offer: OfferMessage, log: { header: SessionHeader; events: readonly SessionEvent[]; pricer: TokenPricer }): Promise<Sent> {
  const { index, request } = view
  const reply = await (run.policy as LoadedPolicy).call(offer, offer.where)
  if (reply.type !== 'selection') throw new PolicyError('listener-failed', run.name, `${offer.where} answered ${reply.type}, not a selection`)
  let positions: readonly number[]
  try {
    positions = reply.everything ? [...index.seqs.keys()] : normalizeOffer(log.header.id, () => log.events.slice(0, request.seq), index, offer.requiredSeqs, reply.selection).positions
  } catch (error: unknown) {
    if (!(error instanceof AgentContextError)) throw error
    throw new PolicyError('invalid-selection', run.name, `${offer.where}: ${error.message}`, { cause: error })
  }
  const reasons = new Map<number, string>()
  if (!reply.everything) {
    const chosen = new Set<number>()
    for (const seq of reply.selection.include) if (index.position.has(seq)) chosen.add(seq)
    run.additions += Math.max(0, positions.length - chosen.size)
    const sent = new Set(positions.map(p => index.seqs[p] as number))
    for (const [seq, reason] of reply.reasons) if (index.position.has(seq) && !sent.has(seq)) reasons.set(seq, reason)
  }
  const messages = positions.length === index.length ? index.messages.slice() : positions.map(p => index.messages[p] as Message)
  const revision = reply.everything ? undefined : reply.selection.revision
  return { positions, messages, tokens: priceRequest(log.pricer, { header: request.header, messages }), ...revision === undefined ? {} : { revision }, reasons }
}

/** Case-folded, compatibility-normalized text: a fact matches whatever case or width it was written in. */
function fold(text: string): string {
  return text.normalize('NFKC').toLocaleLowerCase('en-US')
}

/**
 * @param messages - a request's messages.
 * @param fact - the text a probe asks for.
 * @returns whether any message holds the fact in its text as sent ({@link textOf}: user input, replies, tool calls
 * and results, summaries), whatever its case or width.
 */
function factSent(messages: readonly Message[], fact: string): boolean {
  const wanted = fold(fact)
  return messages.some(message => fold(textOf(message)).includes(wanted))
}

/**
 * Whether a request sent every user input of the referred turns (a turn with none counts as not sent).
 * @param index - the request's surface.
 * @param positions - the positions it sent, ascending.
 * @param refersTo - the turns the probe needs.
 * @param turns - where each turn starts.
 * @returns true when each referred turn has user input on the surface and all of it was sent.
 */
function inputSent(index: NodeIndex, positions: readonly number[], refersTo: readonly number[], turns: TurnClock): boolean {
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
