/**
 * Rebuild every loop-built request of a session from its event log in one linear pass: the surface fold, the
 * request-header fold and the `request/projection` fold advance together, so no log prefix is refolded.
 * @module @dsh-seam/agent-context/replay
 */

import type { GenerateOptions, Message } from '@deepseek-ai/dsh-llm'
import type { EpochHeader, RequestProjection, SessionEvent } from '@deepseek-ai/dsh-session'
import { canonicalHeader } from '@deepseek-ai/dsh-session'
import { projectedMessages } from './check.ts'
import { endsPendingProjection } from './projection.ts'
import { SurfaceFold } from './surface.ts'

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

type ChunkEvent = SessionEvent<'assistant/chunk'>
type ProjectionEvent = SessionEvent<'request/projection'>

/**
 * Whether a chunk opens a request: the first chunk of its step, or the first after a `finish` chunk (a retry in the
 * same step): the request boundary {@link RequestReplay} rebuilds at. Events between two chunks of one stream (a
 * plugin appending while the request streams) do not end it.
 * @param chunk - an `assistant/chunk` event.
 * @param previousChunk - the `assistant/chunk` before it in the log, if any.
 * @returns whether `chunk` is the first chunk of a request.
 */
export function opensRequest(chunk: ChunkEvent, previousChunk: ChunkEvent | undefined): boolean {
  if (previousChunk === undefined) return true
  const { data } = previousChunk
  return data.chunk.type === 'finish' || data.turn !== chunk.data.turn || data.step !== chunk.data.step
}

/**
 * Rebuild the requests a session's log records while the log grows, one event at a time: the surface, the request
 * header and the pending `request/projection` advance together. A consumer following a live session keeps one and
 * feeds it the events appended since the last call.
 */
export class RequestReplay {
  private readonly surface = new SurfaceFold()
  private header: EpochHeader | undefined
  private pending: ProjectionEvent | undefined
  private previousChunk: ChunkEvent | undefined
  private newest: ReplayedRequest | undefined

  /** The newest request fed so far. */
  get last(): ReplayedRequest | undefined {
    return this.newest
  }

  /**
   * Fold the next event of the log.
   * @param event - the event at the next seq.
   * @returns the request the event opens, if it is a request's first `assistant/chunk`.
   * @throws {ReplayError} for a projection that does not match its request; the replay is then as before the call.
   */
  push(event: SessionEvent): ReplayedRequest | undefined {
    const { surface } = this
    // A request is built before its first chunk is appended, so it is rebuilt from the surface before the chunk; and
    // a chunk whose projection does not decode throws before anything is folded, so the replay can be fed it again.
    const opened = event.type === 'assistant/chunk' && opensRequest(event, this.previousChunk) ? this.open(event) : undefined
    surface.apply(event)
    switch (event.type) {
      case 'request/header':
        this.header = canonicalHeader(event.data.header)
        break
      case 'request/projection':
        this.pending = event
        break
      default:
        // Merge-extensible event union: every other event is folded by the surface alone or is log-only.
        break
    }
    if (opened !== undefined) this.newest = opened
    if (endsPendingProjection(event)) this.pending = undefined
    if (event.type === 'assistant/chunk') this.previousChunk = event
    return opened
  }

  private open(chunk: ChunkEvent): ReplayedRequest {
    const consumed = this.pending
    const { surface } = this
    const { generation } = surface
    const messages = consumed === undefined
      ? [...surface.messages]
      : projectedMessages(surface, consumed, { turn: chunk.data.turn, step: chunk.data.step, generation, seq: chunk.seq })
    return {
      turn: chunk.data.turn,
      step: chunk.data.step,
      seq: chunk.seq,
      messages,
      header: this.header,
      ...consumed === undefined ? {} : { projection: consumed.data },
      surfaceNodes: surface.messages.length,
      generation,
    }
  }
}

/**
 * Rebuild every request a session's log records, in log order. A request starts at an `assistant/chunk` that is the
 * first chunk of its step, follows a non-chunk event, or follows a `finish` chunk (a retry in the same step). Its
 * messages are the surface derivation at that chunk filtered by the pending `request/projection` (the newest one
 * after the previous chunk and the last `step/start`), which the request consumes. Memory is the surface plus the
 * output: message objects are shared, never cloned.
 * @param events - a log the session accepted (contiguous seqs from 0, valid surface ops); any iterable, read once.
 * @returns one entry per request.
 * @throws {ReplayError} for a projection that does not match its request.
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
