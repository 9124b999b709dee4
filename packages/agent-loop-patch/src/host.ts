/**
 * The host side of `agent/context`: the one call `ReactLoopAgent.step()` makes in place of
 * `session.deriveMessages()`, before every request attempt.
 * @module @dsh-seam/agent-loop-patch/host
 */

import type { Agent, AgentEventDispatch, ContextNode, ContextSelection } from '@deepseek-ai/dsh-agent'
import type { NodesMark, NormalizedProjection } from '@dsh-seam/agent-context'
import type { Message, ToolSchema } from '@deepseek-ai/dsh-llm'
import type { RequestProjection, Session, SessionEvent } from '@deepseek-ai/dsh-session'
import {
  AgentContextError,
  appendedNodes,
  describeFailure,
  encodeInclude,
  isValidRevision,
  NodeIndex,
  normalizeOffer,
  openTurnStart,
  pendingProjectionOf,
  sessionEventAt,
} from '@dsh-seam/agent-context'

/** One request attempt's position and rendered inputs. */
export interface ProjectionRequest {
  turn: number
  step: number
  system: string
  tools: readonly ToolSchema[]
  signal: AbortSignal
}

interface Offer {
  generation: number
  /** {@link surfaceMark} of the surface offered. */
  mark: string
  nodes: readonly ContextNode[]
  index: NodeIndex
  requiredSeqs: readonly number[]
  /** The waterfall's default result, made when a listener first calls `next()`; returned unchanged it needs no normalization. */
  everything: () => ContextSelection
  /** Whether {@link Offer.everything} made `selection`. */
  isEverything: (selection: ContextSelection) => boolean
  /** The session's log, read when a selected seq is stale. */
  events: () => readonly SessionEvent[]
}

/** Per session: the nodes last offered, their index, where their derivation stopped, and the open turn. */
interface Offered {
  mark: NodesMark
  nodes: readonly ContextNode[]
  index: NodeIndex
  /** Log length the open turn was found in. */
  scanned: number
  turnStart: number
}

const offered = new WeakMap<Session, Offered>()

/** Seq of the open turn's `turn/start`, reading only the events appended since the last offer. */
function openTurn(session: Session, last: Offered | undefined, eventAt: (seq: number) => SessionEvent): number {
  if (last === undefined) return openTurnStart(session.seq, eventAt)
  let turnStart = last.turnStart
  for (let seq = last.scanned; seq < session.seq; seq++) if (eventAt(seq).type === 'turn/start') turnStart = seq
  return turnStart
}

/** The current message-bearing nodes and their index, deriving only the surface nodes appended since the last offer. */
function currentNodes(session: Session): { nodes: readonly ContextNode[]; index: NodeIndex } {
  const eventAt = sessionEventAt(session)
  const last = offered.get(session)
  const { added, extends: reuse, mark } = appendedNodes(session.surface, last?.mark, eventAt)
  const turnStart = openTurn(session, last, eventAt)
  let current: { nodes: readonly ContextNode[]; index: NodeIndex }
  if (!reuse || last === undefined) {
    current = { nodes: added, index: NodeIndex.read(added, turnStart, eventAt) }
  } else {
    const { index } = last
    if (index.turnStart !== turnStart) index.startTurn(turnStart)
    for (const node of added) index.push(node.seq, node.message)
    current = { nodes: added.length === 0 ? last.nodes : Object.freeze([...last.nodes, ...added]), index }
  }
  offered.set(session, { mark, ...current, scanned: session.seq, turnStart })
  return current
}

function offer(session: Session): Offer {
  const { surface } = session
  const { nodes, index } = currentNodes(session)
  let everything: ContextSelection | undefined
  return {
    generation: surface.replaceGeneration,
    mark: surfaceMark(surface),
    nodes,
    index,
    requiredSeqs: Object.freeze(index.requiredSeqs()),
    everything: () => everything ??= Object.freeze({ include: Object.freeze(index.seqs.slice(0, nodes.length)) }),
    isEverything: selection => everything !== undefined && selection === everything,
    events: () => session.events,
  }
}

/** A value that changes whenever a surface moves: an append, a replace, or anything that changes its length or tail. */
function surfaceMark(surface: Session['surface']): string {
  return `${surface.replaceGeneration}:${surface.nodes.length}:${String(surface.nodes.at(-1))}`
}

function moved(session: Session, before: Offer): boolean {
  return surfaceMark(session.surface) !== before.mark
}

/**
 * Run the waterfall to completion, as the loop awaits `agent/pre-step`: a listener's synchronous or asynchronous
 * result, throw or rejection settles it. After an abort the result is discarded.
 */
async function select(agent: Agent, dispatch: AgentEventDispatch, request: ProjectionRequest, current: Offer): Promise<ContextSelection> {
  const payload = { ...request, generation: current.generation, nodes: current.nodes, requiredSeqs: current.requiredSeqs }
  const everything = (): Promise<ContextSelection> => Promise.resolve(current.everything())
  let selection: ContextSelection
  try {
    selection = await dispatch.waterfall('agent/context', payload, everything)
  } catch (error: unknown) {
    request.signal.throwIfAborted()
    throw new AgentContextError('listener-failed', String(agent.id), undefined, [], `listener failed: ${describeFailure(error)}`, error)
  }
  request.signal.throwIfAborted()
  return selection
}

/** One pass: the offer, the waterfall's result and its normalization (undefined for every node). */
interface Pass {
  current: Offer
  selection: ContextSelection
  projection: NormalizedProjection | undefined
}

/**
 * Run the waterfall over the current surface, normalize its result and dispatch it as `agent/context-selected`.
 * @returns the pass, or the offer it started from when the surface moved while listeners ran.
 */
async function pass(
  agent: Agent,
  dispatch: AgentEventDispatch,
  request: ProjectionRequest,
  final: boolean,
): Promise<Pass | { moved: Offer; selection: ContextSelection }> {
  const { session } = agent
  const current = offer(session)
  const selection = await select(agent, dispatch, request, current)
  if (moved(session, current)) return { moved: current, selection }
  const projection = current.isEverything(selection)
    ? undefined
    : normalizeOffer(String(agent.id), current.events, current.index, current.requiredSeqs, selection)
  const include = projection?.include ?? current.everything().include
  await dispatch.serial('agent/context-selected', { ...request, nodes: current.nodes, requiredSeqs: current.requiredSeqs, include, final })
  request.signal.throwIfAborted()
  if (moved(session, current)) return { moved: current, selection }
  return { current, selection, projection }
}

/**
 * Run the `agent/context` waterfall for the request about to be built and return the messages it sends. The
 * waterfall always runs: with no listener for the agent its innermost `next()` selects every node, so nothing asks
 * which listeners exist. The waterfall's outermost result is normalized, then dispatched as `agent/context-selected`.
 * A default projection (every node) returns `session.deriveMessages()` and logs nothing; any other appends one
 * `request/projection` event first. When the surface moves while listeners of either event run, the waterfall runs
 * once more over the new surface; a second move rejects the step. The waterfall is awaited to the end even when the
 * turn is aborted, so whatever a listener appends lands inside its turn; an aborted step discards the result and logs
 * nothing.
 * @param agent - the agent whose step this is; its session is read and appended to.
 * @param dispatch - the agent's scope-filtered event dispatcher.
 * @param request - the request's turn, step, system prompt, tools and signal.
 * @returns the request messages.
 * @throws {AgentContextError} for an invalid `agent/context` result, a failed `agent/context` listener, or a surface that
 *   keeps moving; an error of an `agent/context-selected` listener propagates as it was thrown.
 */
export async function projectRequestMessages(
  agent: Agent,
  dispatch: AgentEventDispatch,
  request: ProjectionRequest,
): Promise<Message[]> {
  const { session } = agent
  let done = await pass(agent, dispatch, request, false)
  if ('moved' in done) done = await pass(agent, dispatch, request, true)
  if ('moved' in done) {
    throw new AgentContextError('surface-changed', String(agent.id), validRevision(done.selection.revision), [done.moved.generation, session.surface.replaceGeneration], 'saw the surface change while its listeners ran, twice; surface generations')
  }
  const { current, projection } = done
  const pending = (): boolean => pendingProjectionOf(session.seq, sessionEventAt(session)) !== undefined
  if ((projection === undefined || projection.isDefault) && !pending()) return session.deriveMessages()
  const { index } = current
  const normalized = projection ?? normalizeOffer(String(agent.id), current.events, index, current.requiredSeqs, current.everything())
  const data: RequestProjection = {
    turn: request.turn,
    step: request.step,
    generation: current.generation,
    include: encodeInclude(index.seqs, normalized.positions),
    ...normalized.revision === undefined ? {} : { revision: normalized.revision },
    surfaceNodes: index.length,
    includedNodes: normalized.include.length,
    ...normalized.stale === 0 ? {} : { stale: normalized.stale },
  }
  session.append('request/projection', data)
  return normalized.positions.map(at => index.messages[at] as Message)
}

/** A listener's revision when the normalizer would accept it, for naming the listener in an error. */
function validRevision(revision: string | undefined): string | undefined {
  return revision !== undefined && isValidRevision(revision) ? revision : undefined
}
