/**
 * One pass over a session log that rebuilds every request (`RequestReplay`, which decodes each consumed
 * `request/projection`), reads back which projections miss today's host policy (`policyFinding`), folds the surface beside it with DSH's own incremental
 * `SurfaceManager`, and checks that the two agree, request by request. Every step costs what a request sends or what
 * the log appends, never the whole surface.
 * @module @dsh-seam/cli/analyze
 */

import type { SessionEvent } from '@deepseek-ai/dsh-session'
import { isSurfaceEligibleType } from '@deepseek-ai/dsh-session'
import { SurfaceManager } from '@deepseek-ai/dsh-session/surface'
import type { NodesMark, PolicyFindingCode, ReplayedRequest, ReplayErrorCode } from '@dsh-seam/agent-context'
import { appendedNodes, decodeProjection, describeFailure, NodeIndex, policyFinding, ReplayError, RequestReplay } from '@dsh-seam/agent-context'
import type { RequestPricer } from '@dsh-seam/compaction-effective-projection'
import { priceRequest } from '@dsh-seam/compaction-effective-projection'

/** Token estimates for a request: the DSH token meter's message and request-envelope prices. */
export type TokenPricer = RequestPricer

/** One rebuilt request. */
export interface RequestSummary {
  readonly turn: number
  readonly step: number
  /** Seq of the request's first `assistant/chunk`. */
  readonly seq: number
  /** Message-bearing surface nodes at the request. */
  readonly surfaceNodes: number
  /** Nodes the request sent. */
  readonly includedNodes: number
  /** Surface nodes not sent, as `[first, last]` runs in surface order. */
  readonly excluded: [number, number][]
  /** Estimated tokens of the request: its messages plus system prompt and tool schemas (`priceRequest`). */
  readonly tokens: number
  /** Estimated tokens the whole surface would have cost with the same envelope. */
  readonly surfaceTokens: number
  /** Seq of the `request/projection` the request consumed. */
  readonly projectionSeq?: number
  /** The projection's revision label, as logged (escape it before printing). */
  readonly revision?: string
  /**
   * What the projection left out that today's host would send (a log written under an earlier rule): a warning, not a
   * violation; the request was still rebuilt.
   */
  readonly policy?: { readonly code: PolicyFindingCode; readonly detail: string }
}

/** What is wrong with a log. */
export type LogViolationCode =
  | ReplayErrorCode
  /** An event's seq is not the previous seq plus one (the first event has seq 0). */
  | 'non-contiguous'
  /** DSH's surface fold refuses an event (a replace off the surface, a surface op on an event that bears none). */
  | 'invalid-surface'
  /** `replayRequests` and DSH's surface fold disagree about a request. */
  | 'replay-disagrees'

/** The first event of a log that breaks a host invariant, with the request it belongs to. */
export interface LogViolation {
  readonly code: LogViolationCode
  /** Seq of the event at fault. */
  readonly seq: number
  /** Turn of the request (or the step in progress) the event belongs to; 0 before the first turn. */
  readonly turn: number
  /** Its step; 0 before the first step. */
  readonly step: number
  /** Revision of the projection at fault, when one is. */
  readonly revision?: string
  readonly message: string
}

/**
 * A request with the surface it was sent from, for readers that need more than its summary (`report`, `simulate`).
 * Valid only during the {@link RequestObserver} call: the index keeps growing with the log.
 */
export interface RequestView {
  readonly request: ReplayedRequest
  /** The message-bearing surface nodes at the request, with the open turn. */
  readonly index: NodeIndex
  /** Positions in `index` the request sent, ascending. */
  readonly included: readonly number[]
}

/** Called with each request the analyzer rebuilds and checks, in log order. */
export type RequestObserver = (summary: RequestSummary, view: RequestView) => void

/** The requests of a log, up to its first violation. */
export interface LogAnalysis {
  readonly requests: RequestSummary[]
  readonly violation?: LogViolation
}

/**
 * The message-bearing surface nodes in step with DSH's `SurfaceManager`, indexed by position with the open turn
 * ({@link NodeIndex}): nodes appended since the last sync join the tail, a replace (a new generation) rebuilds. The
 * surface's estimated tokens are kept beside them, so a request costs the nodes appended since the previous one.
 */
class BearingSurface {
  readonly log: SessionEvent[] = []
  readonly manager = new SurfaceManager(this.log)
  index = new NodeIndex()
  tokens = 0
  private turnStart = -1
  private mark: NodesMark | undefined

  constructor(readonly pricer: TokenPricer) {}

  readonly eventAt = (seq: number): SessionEvent => this.log[seq] as SessionEvent

  /**
   * Validate the next event with DSH's fold, as DSH's log reader does: seqs contiguous from 0, surface ops on the
   * surface. The fold commits it on {@link BearingSurface.admit}.
   * @param event - the log's next event.
   */
  validate(event: SessionEvent): void {
    this.manager.validateNext(event)
  }

  /**
   * Fold a validated event. DSH reads only surface-eligible events back from its log (the tool-result checks of a
   * replace), so every other event enters it as `{ type, seq }`: the analysis keeps no log.
   */
  admit(event: SessionEvent): void {
    this.log.push(isSurfaceEligibleType(event.type) ? event : { type: event.type, seq: event.seq } as SessionEvent)
    if (event.type === 'turn/start') {
      this.turnStart = event.seq
      this.index.startTurn(event.seq)
    }
  }

  sync(): void {
    const { added, extends: extending, mark } = appendedNodes(this.manager, this.mark, this.eventAt)
    if (!extending) {
      this.index = NodeIndex.of([], this.turnStart)
      this.tokens = 0
    }
    for (const node of added) {
      this.index.push(node.seq, node.message)
      this.tokens += this.pricer.estimateMessage(node.message)
    }
    this.mark = mark
  }
}

function range(length: number): number[] {
  return Array.from({ length }, (_, i) => i)
}

/** The positions not in `included` (ascending), as `[first, last]` seq runs. */
export function excludedRuns(index: NodeIndex, included: readonly number[]): [number, number][] {
  const runs: [number, number][] = []
  let next = 0
  for (const at of [...included, index.length]) {
    if (at > next) runs.push([index.seqs[next] as number, index.seqs[at - 1] as number])
    next = at + 1
  }
  return runs
}

/** Where the log stands: the step in progress and the projection waiting for its request. */
interface Cursor {
  turn: number
  step: number
  projection: SessionEvent<'request/projection'> | undefined
}

function violation(code: LogViolationCode, seq: number, at: { readonly turn: number; readonly step: number }, revision: unknown, message: string): LogViolation {
  return { code, seq, turn: at.turn, step: at.step, ...typeof revision === 'string' ? { revision } : {}, message }
}

/** Fold one request against the surface DSH's fold says it was sent from. */
function summarize(request: ReplayedRequest, surface: BearingSurface, at: Cursor): { summary: RequestSummary; included: readonly number[] } | LogViolation {
  const { index } = surface
  const { projection } = request
  const projectionSeq = projection === undefined ? undefined : at.projection?.seq
  let included: readonly number[]
  if (projection === undefined) {
    included = range(index.length)
  } else {
    const checked = decodeProjection(index, projection.include)
    if ('violation' in checked) {
      return violation('replay-disagrees', request.seq, request, projection.revision, `request at seq ${request.seq}: its projection holds for replayRequests but not on DSH's surface fold: ${checked.violation.detail}`)
    }
    included = checked.included
  }
  let agrees = request.surfaceNodes === index.length && request.messages.length === included.length
  for (let k = 0; k < included.length && agrees; k++) agrees = request.messages[k] === index.messages[included[k] as number]
  if (!agrees) {
    return violation('replay-disagrees', request.seq, request, projection?.revision, `request at seq ${request.seq}: replayRequests rebuilt ${request.messages.length} of ${request.surfaceNodes} nodes, which DSH's surface fold (${index.length} nodes) does not select`)
  }
  const summary: RequestSummary = {
    turn: request.turn,
    step: request.step,
    seq: request.seq,
    surfaceNodes: index.length,
    includedNodes: included.length,
    excluded: excludedRuns(index, included),
    tokens: priceRequest(surface.pricer, request),
    surfaceTokens: surface.pricer.estimateHeader(request.header) + surface.tokens,
    ...projectionSeq === undefined ? {} : { projectionSeq },
    ...projection?.revision === undefined ? {} : { revision: projection.revision },
  }
  const finding = projection === undefined ? undefined : policyFinding(index, included, projection.revision)
  return { summary: finding === undefined ? summary : { ...summary, policy: finding }, included }
}

/**
 * Rebuilds and checks the requests of a log fed one event at a time, stopping at the first violation in log order.
 * Linear in the log: each request costs what it sends (an unprojected request sends the whole surface), and no event
 * is kept beyond the surface's message-bearing nodes.
 */
export class LogAnalyzer {
  readonly requests: RequestSummary[] = []
  /** The first violation, once found; later events are ignored. */
  violation: LogViolation | undefined
  private readonly replay = new RequestReplay()
  private readonly surface: BearingSurface
  private readonly at: Cursor = { turn: 0, step: 0, projection: undefined }

  /**
   * @param pricer - token estimates.
   * @param observe - called with each request and the surface it was sent from.
   */
  constructor(pricer: TokenPricer, private readonly observe?: RequestObserver) {
    this.surface = new BearingSurface(pricer)
  }

  /** @param event - the log's next event. */
  push(event: SessionEvent): void {
    if (this.violation !== undefined) return
    const { at, surface } = this
    try {
      surface.validate(event)
    } catch (error: unknown) {
      const expected = surface.log.length
      this.violation = event.seq === expected
        ? violation('invalid-surface', event.seq, at, at.projection?.data.revision, `session log event at seq ${event.seq} (${JSON.stringify(event.type)}) is refused by DSH's surface fold: ${describeFailure(error)}`)
        : violation('non-contiguous', event.seq, at, at.projection?.data.revision, `session log event at seq ${event.seq} follows seq ${expected - 1}: expected seq ${expected}`)
      return
    }
    let request: ReplayedRequest | undefined
    try {
      request = this.replay.push(event)
    } catch (error: unknown) {
      if (!(error instanceof ReplayError)) throw error
      const position = error.request ?? { turn: at.turn, step: at.step, revision: at.projection?.data.revision }
      this.violation = violation(error.code, error.seq, position, position.revision, error.message)
      return
    }
    if (request !== undefined) {
      surface.sync()
      const summarized = summarize(request, surface, at)
      if ('code' in summarized) {
        this.violation = summarized
        return
      }
      this.requests.push(summarized.summary)
      this.observe?.(summarized.summary, { request, index: surface.index, included: summarized.included })
      at.projection = undefined
    }
    surface.admit(event)
    if (event.type === 'turn/start') Object.assign(at, { turn: event.data.turn, step: 0, projection: undefined })
    if (event.type === 'step/start') Object.assign(at, { turn: event.data.turn, step: event.data.step, projection: undefined })
    if (event.type === 'request/projection') at.projection = event
  }

  /** @returns the requests before the first violation, and that violation. */
  get analysis(): LogAnalysis {
    return { requests: this.requests, ...this.violation === undefined ? {} : { violation: this.violation } }
  }
}

/**
 * Rebuild and check every request of a log in memory ({@link LogAnalyzer}).
 * @param events - the log's events in seq order.
 * @param pricer - token estimates.
 * @returns the request summaries before the first violation, and that violation.
 */
export function analyzeLog(events: Iterable<SessionEvent>, pricer: TokenPricer): LogAnalysis {
  const analyzer = new LogAnalyzer(pricer)
  for (const event of events) analyzer.push(event)
  return analyzer.analysis
}
