/**
 * Rebuild every loop-built request of a session from its event log in one linear pass: the surface fold, the
 * request-header fold and the `request/projection` fold advance together, so no log prefix is refolded.
 * @module @dsh-context/agent-context/replay
 */

import type { GenerateOptions, Message } from '@deepseek-ai/dsh-llm'
import type { EpochHeader, RequestProjection, SessionEvent } from '@deepseek-ai/dsh-session'
import { canonicalHeader, deriveEventMessage, isSurfaceEvent } from '@deepseek-ai/dsh-session'

/** One request as its log records it. */
export interface ReplayedRequest {
  readonly turn: number
  readonly step: number
  /** Seq of the request's first `assistant/chunk`. */
  readonly seq: number
  /** The messages it sent: the surface derivation at `seq`, filtered by `projection`. Message objects are shared with the events. */
  readonly messages: Message[]
  /** The canonical header of the newest `request/header` before `seq`. */
  readonly header: EpochHeader | undefined
  /** The `request/projection` the request consumed, when it was sent with one. */
  readonly projection?: RequestProjection
  /** Message-bearing surface nodes at `seq`. */
  readonly surfaceNodes: number
  /** The surface `replaceGeneration` at `seq`. */
  readonly generation: number
}

/** Why a log does not replay. */
export type ReplayErrorCode =
  /** An event's seq is not the previous seq plus one (the first event has seq 0). */
  | 'non-contiguous'
  /** A surface replace names a range that is not on the surface. */
  | 'invalid-surface'
  /** A `request/projection` event's fields are not the encoded form (ranges of seq pairs, integer counts). */
  | 'malformed-projection'
  /** A `request/projection` names another turn or step than the request that consumes it. */
  | 'projection-position'
  /** A `request/projection` was made under another surface generation than its request was sent under. */
  | 'projection-generation'
  /** A `request/projection`'s ranges select other nodes than its counts say, or end at seqs that are not surface nodes. */
  | 'projection-ranges'

/** A log that does not replay, naming the seq of the offending event. */
export class ReplayError extends Error {
  override readonly name = 'ReplayError'

  /**
   * @param code - what did not match.
   * @param seq - seq of the offending event.
   * @param detail - one sentence on what was wrong.
   */
  constructor(readonly code: ReplayErrorCode, readonly seq: number, detail: string) {
    super(`session log does not replay at seq ${seq}: ${detail}`)
  }
}

type ChunkEvent = SessionEvent<'assistant/chunk'>
type ProjectionEvent = SessionEvent<'request/projection'>

/**
 * The model-visible surface, folded one event at a time like DSH's `SurfaceManager`, with its message-bearing nodes
 * and their messages kept in surface order, so a request costs the size of what it sends, not of the surface.
 */
class SurfaceFold {
  readonly nodes: number[] = []
  /** Message-bearing surface seqs, in surface order. */
  seqs: number[] = []
  /** Their derived messages, index for index. */
  messages: Message[] = []
  /** Position of each message-bearing seq in {@link seqs}. */
  position = new Map<number, number>()
  generation = 0

  apply(event: SessionEvent): void {
    if (!isSurfaceEvent(event) || event.surfaceOp === undefined) return
    const op = event.surfaceOp
    const message = deriveEventMessage(event)
    if (op === 'append') {
      this.nodes.push(event.seq)
      if (message === null) return
      this.position.set(event.seq, this.seqs.length)
      this.seqs.push(event.seq)
      this.messages.push(message)
      return
    }
    const startIdx = this.nodes.indexOf(op.start)
    const endIdx = this.nodes.indexOf(op.end)
    if (startIdx === -1 || endIdx === -1 || startIdx > endIdx) {
      throw new ReplayError('invalid-surface', event.seq, `surface replace [${op.start}, ${op.end}] is not a range of the surface`)
    }
    this.nodes.splice(startIdx, endIdx - startIdx + 1, event.seq)
    this.generation += 1
    const derived = new Map(this.seqs.map((seq, i) => [seq, this.messages[i] as Message]))
    if (message !== null) derived.set(event.seq, message)
    this.seqs = this.nodes.filter(seq => derived.has(seq))
    this.messages = this.seqs.map(seq => derived.get(seq) as Message)
    this.position = new Map(this.seqs.map((seq, i) => [seq, i]))
  }
}

function isCount(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0
}

function isEncodedProjection(data: RequestProjection): boolean {
  return isCount(data.turn) && isCount(data.step) && isCount(data.generation)
    && isCount(data.surfaceNodes) && isCount(data.includedNodes)
    && (data.revision === undefined || typeof data.revision === 'string')
    && Array.isArray(data.include)
    && data.include.every(range => Array.isArray(range) && range.length === 2 && isCount(range[0]) && isCount(range[1]))
}

/**
 * Check a pending projection against the request consuming it and select the messages it names: each range is the
 * run of message-bearing nodes from its first seq through its last (as `decodeInclude` reads it), walked in place.
 */
function project(projection: ProjectionEvent, chunk: ChunkEvent, surface: SurfaceFold): Message[] {
  const { data, seq } = projection
  if (!isEncodedProjection(data)) {
    throw new ReplayError('malformed-projection', seq, 'request/projection is not { turn, step, generation, include: [first, last][], surfaceNodes, includedNodes } of non-negative integers')
  }
  if (data.turn !== chunk.data.turn || data.step !== chunk.data.step) {
    throw new ReplayError('projection-position', seq, `request/projection names turn ${data.turn} step ${data.step}, but the request at seq ${chunk.seq} is turn ${chunk.data.turn} step ${chunk.data.step}`)
  }
  if (data.generation !== surface.generation) {
    throw new ReplayError('projection-generation', seq, `request/projection was made under surface generation ${data.generation}, but the request at seq ${chunk.seq} was sent under generation ${surface.generation}`)
  }
  const selected = new Set<number>()
  let stray: number | undefined
  for (const [first, last] of data.include) {
    const start = surface.position.get(first)
    if (start === undefined) {
      stray ??= first
      continue
    }
    let at = start
    for (; at < surface.seqs.length; at++) {
      selected.add(at)
      if (surface.seqs[at] === last) break
    }
    if (at === surface.seqs.length) stray ??= last
  }
  if (data.surfaceNodes !== surface.seqs.length || data.includedNodes !== selected.size) {
    throw new ReplayError('projection-ranges', seq, `request/projection counts ${data.includedNodes}/${data.surfaceNodes} nodes, but its ranges select ${selected.size}/${surface.seqs.length} at the request at seq ${chunk.seq}`)
  }
  if (stray !== undefined) {
    throw new ReplayError('projection-ranges', seq, `request/projection has a range ending at seq ${stray}, which is not a node it selects at the request at seq ${chunk.seq}`)
  }
  return [...selected].sort((a, b) => a - b).map(at => surface.messages[at] as Message)
}

/**
 * Whether a chunk opens a request: the first chunk of its step, or the first after a `finish` chunk (a retry in the
 * same step) or after any other event. The one request-boundary rule; request reconstructions share it.
 * @param chunk - an `assistant/chunk` event.
 * @param previous - the event before it in the log, if any.
 * @returns whether `chunk` is the first chunk of a request.
 */
export function opensRequest(chunk: ChunkEvent, previous: SessionEvent | undefined): boolean {
  if (previous?.type !== 'assistant/chunk') return true
  const before = previous as ChunkEvent
  return before.data.chunk.type === 'finish' || before.data.turn !== chunk.data.turn || before.data.step !== chunk.data.step
}

/**
 * Rebuild the requests a session's log records while the log grows: {@link replayRequests}, one event at a time.
 * A consumer following a live session keeps one and feeds it the events appended since the last call.
 */
export class RequestReplay {
  private readonly surface = new SurfaceFold()
  private header: EpochHeader | undefined
  private pending: ProjectionEvent | undefined
  private previous: SessionEvent | undefined
  /** The newest request fed so far. */
  last: ReplayedRequest | undefined

  /**
   * Fold the next event of the log.
   * @param event - the event at the next seq.
   * @returns the request the event opens, if it is a request's first `assistant/chunk`.
   * @throws {ReplayError} on a seq gap, a replace outside the surface, or a projection that does not match its request.
   */
  push(event: SessionEvent): ReplayedRequest | undefined {
    const expected = this.previous === undefined ? 0 : this.previous.seq + 1
    if (event.seq !== expected) {
      throw new ReplayError('non-contiguous', event.seq, `expected seq ${expected} after seq ${expected - 1}`)
    }
    const { surface } = this
    surface.apply(event)
    let opened: ReplayedRequest | undefined
    switch (event.type) {
      case 'request/header':
        this.header = canonicalHeader(event.data.header)
        break
      case 'request/projection':
        this.pending = event
        break
      case 'step/start':
        this.pending = undefined
        break
      case 'assistant/chunk': {
        if (!opensRequest(event, this.previous)) break
        const consumed = this.pending
        const messages = consumed === undefined ? [...surface.messages] : project(consumed, event, surface)
        this.pending = undefined
        opened = this.last = {
          turn: event.data.turn,
          step: event.data.step,
          seq: event.seq,
          messages,
          header: this.header,
          ...consumed === undefined ? {} : { projection: consumed.data },
          surfaceNodes: surface.seqs.length,
          generation: surface.generation,
        }
        break
      }
      default:
        // Merge-extensible event union: every other event is folded by the surface alone or is log-only.
        break
    }
    this.previous = event
    return opened
  }
}

/**
 * Rebuild every request a session's log records, in log order. A request starts at an `assistant/chunk` that is the
 * first chunk of its step, follows a non-chunk event, or follows a `finish` chunk (a retry in the same step). Its
 * messages are the surface derivation at that chunk filtered by the pending `request/projection` (the newest one
 * after the previous chunk and the last `step/start`), which the request consumes. Memory is the surface plus the
 * output: message objects are shared, never cloned.
 * @param events - a session log in seq order, starting at seq 0; any iterable, read once.
 * @returns one entry per request.
 * @throws {ReplayError} on a seq gap, a replace outside the surface, or a projection that does not match its request.
 */
export function replayRequests(events: Iterable<SessionEvent>): ReplayedRequest[] {
  const replay = new RequestReplay()
  const requests: ReplayedRequest[] = []
  for (const event of events) {
    const request = replay.push(event)
    if (request !== undefined) requests.push(request)
  }
  return requests
}

/** The request fields {@link diffRequest} compares; a `GenerateOptions` as an adapter received it has them all. */
export type ComparableRequest = Pick<GenerateOptions, 'messages' | 'model'>
  & Partial<Pick<GenerateOptions, 'system' | 'tools' | 'temperature' | 'maxTokens' | 'stop' | 'reasoningEffort'>>

function clip(json: string | undefined): string {
  if (json === undefined) return 'nothing'
  return json.length > 120 ? `${json.slice(0, 120)}…` : json
}

/**
 * Compare a request as sent with its replay the way DSH's request invariant compares it with the log, by JSON text:
 * the messages one by one, then model, system, tools, temperature, maxTokens, reasoningEffort and stop against the logged header.
 * An absent field compares as absent.
 * @param replayed - the request rebuilt from the log.
 * @param request - the request the provider received.
 * @returns undefined when they are identical, else one sentence naming the first difference.
 */
export function diffRequest(replayed: ReplayedRequest, request: ComparableRequest): string | undefined {
  const at = `request of turn ${replayed.turn} step ${replayed.step} (seq ${replayed.seq})`
  const count = Math.max(request.messages.length, replayed.messages.length)
  for (let i = 0; i < count; i++) {
    const sent = JSON.stringify(request.messages[i])
    const rebuilt = JSON.stringify(replayed.messages[i])
    if (sent !== rebuilt) {
      return `${at}: message ${i} differs (${request.messages.length} sent, ${replayed.messages.length} rebuilt): sent ${clip(sent)}, rebuilt ${clip(rebuilt)}`
    }
  }
  const { header } = replayed
  if (header === undefined) return `${at}: no request/header precedes it in the log`
  const fields: [name: string, sent: unknown, logged: unknown][] = [
    ['model', request.model, header.config.model],
    ['system', request.system, header.system],
    ['tools', request.tools ?? [], header.tools ?? []],
    ['temperature', request.temperature, header.config.temperature],
    ['maxTokens', request.maxTokens, header.config.maxTokens],
    ['reasoningEffort', request.reasoningEffort, header.config.reasoningEffort],
    ['stop', request.stop, header.config.stop],
  ]
  for (const [name, sent, logged] of fields) {
    const sentJson = JSON.stringify(sent)
    const loggedJson = JSON.stringify(logged)
    if (sentJson !== loggedJson) return `${at}: ${name} differs: sent ${clip(sentJson)}, the log's request/header has ${clip(loggedJson)}`
  }
  return undefined
}
