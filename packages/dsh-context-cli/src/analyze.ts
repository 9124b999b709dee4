/**
 * One pass over a session log that rebuilds every request (`replayRequests`), folds the surface beside it with DSH's
 * own incremental `SurfaceManager`, and checks each consumed `request/projection` against the host invariants.
 * @module @dsh-context/cli/analyze
 */

import type { ContextNode } from '@deepseek-ai/dsh-agent'
import type { Message } from '@deepseek-ai/dsh-llm'
import type { EpochHeader, RequestProjection, SessionEvent } from '@deepseek-ai/dsh-session'
import { SurfaceManager } from '@deepseek-ai/dsh-session/surface'
import type { ReplayedRequest, ReplayErrorCode } from '@dsh-context/agent-context'
import type { NodesMark } from '@dsh-context/agent-context'
import { appendedNodes, ReplayError, replayRequests, requiredSeqs } from '@dsh-context/agent-context'
import type { ProjectionViolationCode } from './check.ts'
import { checkProjection } from './check.ts'

/** Token estimates for a request: the DSH token meter's per-message price and its request-envelope price. */
export interface TokenPricer {
  /**
   * @param message - a model-visible message.
   * @returns its estimated tokens.
   */
  message(message: Message): number
  /**
   * @param header - the request envelope (system prompt, tools), if any.
   * @returns its estimated tokens.
   */
  header(header: EpochHeader | undefined): number
}

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
  /** Estimated tokens of the request: its messages plus system prompt and tool schemas. */
  readonly tokens: number
  /** Estimated tokens the whole surface would have cost with the same envelope. */
  readonly surfaceTokens: number
  /** Seq of the `request/projection` the request consumed. */
  readonly projectionSeq?: number
  /** The projection's revision label. */
  readonly revision?: string
}

/** What is wrong with a log. */
export type LogViolationCode =
  | ProjectionViolationCode
  | ReplayErrorCode
  /** DSH's surface fold refuses an event (`replayRequests` uses the same code for a replace off the surface). */
  | 'invalid-surface'
  /** `replayRequests` and the surface fold disagree about a request. */
  | 'replay-disagrees'

/** The first event of a log that breaks a host invariant. */
export interface LogViolation {
  readonly code: LogViolationCode
  /** Seq of the event at fault. */
  readonly seq: number
  readonly message: string
}

/** The requests of a log, up to its first violation. */
export interface LogAnalysis {
  readonly requests: RequestSummary[]
  readonly violation?: LogViolation
}

function replayUpToError(events: readonly SessionEvent[]): { requests: readonly ReplayedRequest[]; error?: ReplayError } {
  try {
    return { requests: replayRequests(events) }
  } catch (error: unknown) {
    if (!(error instanceof ReplayError)) throw error
    return { requests: replayRequests(events.slice(0, error.seq)), error }
  }
}

/**
 * The message-bearing surface nodes ({@link contextNodes}) kept in step with DSH's `SurfaceManager`: nodes appended
 * since the last sync join the tail, a replace (a new generation) rebuilds. Each node's position and the surface's
 * estimated tokens are kept beside them, so a request costs the nodes appended since the previous one.
 */
class BearingSurface {
  readonly log: SessionEvent[] = []
  readonly manager = new SurfaceManager(this.log)
  readonly nodes: ContextNode[] = []
  readonly position = new Map<number, number>()
  tokens = 0
  private mark: NodesMark | undefined

  constructor(readonly pricer: TokenPricer) {}

  readonly eventAt = (seq: number): SessionEvent => this.log[seq] as SessionEvent

  sync(): void {
    const { added, extends: extending, mark } = appendedNodes(this.manager, this.mark, this.eventAt)
    if (!extending) {
      this.nodes.length = 0
      this.position.clear()
      this.tokens = 0
    }
    for (const node of added) {
      this.position.set(node.seq, this.nodes.push(node) - 1)
      this.tokens += this.pricer.message(node.message)
    }
    this.mark = mark
  }
}

function position(request: ReplayedRequest): string {
  const revision = request.projection?.revision
  return `turn ${request.turn} step ${request.step}${revision === undefined ? '' : `, revision "${revision}"`}`
}

/** Fold one request against the surface it was sent from. */
function summarize(
  request: ReplayedRequest,
  surface: BearingSurface,
  stepStart: number,
  projectionSeq: number | undefined,
): RequestSummary | LogViolation {
  const { nodes } = surface
  const { projection } = request
  let included: Uint8Array | undefined
  if (projection !== undefined) {
    const offer = { nodes, position: surface.position, requiredSeqs: requiredSeqs(nodes, stepStart, surface.eventAt) }
    const checked = checkProjection(offer, projection.include)
    if ('violation' in checked) {
      return {
        code: checked.violation.code,
        seq: projectionSeq ?? request.seq,
        message: `request/projection at seq ${projectionSeq ?? '?'} (${position(request)}) ${checked.violation.detail}; consumed by the request at seq ${request.seq}`,
      }
    }
    included = checked.included
  }
  const envelope = surface.pricer.header(request.header)
  const excluded: [number, number][] = []
  let sent = 0
  let tokens = envelope
  let agrees = request.surfaceNodes === nodes.length
  for (let i = 0; i < nodes.length && agrees; i++) {
    const node = nodes[i] as ContextNode
    if (included === undefined || included[i] === 1) {
      agrees = request.messages[sent++] === node.message
      tokens += surface.pricer.message(node.message)
    } else if (i > 0 && included[i - 1] === 0) {
      (excluded.at(-1) as [number, number])[1] = node.seq
    } else {
      excluded.push([node.seq, node.seq])
    }
  }
  if (!agrees || sent !== request.messages.length) {
    return {
      code: 'replay-disagrees',
      seq: request.seq,
      message: `request at seq ${request.seq} (${position(request)}): replayRequests rebuilt ${request.messages.length} of ${request.surfaceNodes} nodes, which DSH's surface fold (${nodes.length} nodes) does not select`,
    }
  }
  return {
    turn: request.turn,
    step: request.step,
    seq: request.seq,
    surfaceNodes: nodes.length,
    includedNodes: sent,
    excluded,
    tokens,
    surfaceTokens: envelope + surface.tokens,
    ...projectionSeq === undefined ? {} : { projectionSeq },
    ...projection?.revision === undefined ? {} : { revision: projection.revision },
  }
}

/**
 * Rebuild and check every request of a log, stopping at the first violation in log order.
 * @param events - the log's events in seq order.
 * @param pricer - token estimates.
 * @param onProgress - called with (events folded, total events) every 4,096 events and at the end.
 * @returns the request summaries before the first violation, and that violation.
 */
export function analyzeLog(
  events: readonly SessionEvent[],
  pricer: TokenPricer,
  onProgress?: (done: number, total: number) => void,
): LogAnalysis {
  const replay = replayUpToError(events)
  const limit = replay.error?.seq ?? events.length
  const surface = new BearingSurface(pricer)
  const projectionSeqs = new WeakMap<RequestProjection, number>()
  const requests: RequestSummary[] = []
  let stepStart = -1
  let next = 0
  for (let seq = 0; seq < limit; seq++) {
    const event = events[seq] as SessionEvent
    const request = replay.requests[next]
    if (request?.seq === seq) {
      next += 1
      surface.sync()
      const projectionSeq = request.projection === undefined ? undefined : projectionSeqs.get(request.projection)
      const summary = summarize(request, surface, stepStart, projectionSeq)
      if ('code' in summary) return { requests, violation: summary }
      requests.push(summary)
    }
    try {
      surface.manager.validateNext(event)
    } catch (error: unknown) {
      const message = `session log event at seq ${seq} ("${event.type}") is refused by DSH's surface fold: ${error instanceof Error ? error.message : String(error)}`
      return { requests, violation: { code: 'invalid-surface', seq, message } }
    }
    surface.log.push(event)
    if (event.type === 'step/start') stepStart = seq
    if (event.type === 'request/projection') projectionSeqs.set(event.data, seq)
    if ((seq + 1) % 4096 === 0) onProgress?.(seq + 1, events.length)
  }
  onProgress?.(limit, events.length)
  if (replay.error !== undefined) return { requests, violation: { code: replay.error.code, seq: replay.error.seq, message: replay.error.message } }
  return { requests }
}
