/**
 * The host side of `agent/context`: the one call `ReactLoopAgent.step()` makes in place of
 * `session.deriveMessages()`, before every request attempt.
 * @module @dsh-seam/agent-loop-patch/host
 */

import type { Agent, AgentEventDispatch, ContextNode, ContextSelection } from '@deepseek-ai/dsh-agent'
import { agentCarrier } from '@deepseek-ai/dsh-agent'
import type { NormalizedProjection } from '@dsh-seam/agent-context'
import type { Message, ToolSchema } from '@deepseek-ai/dsh-llm'
import type { RequestProjection, Session } from '@deepseek-ai/dsh-session'
import {
  AgentContextError,
  describeFailure,
  encodeInclude,
  isValidRevision,
  normalizeOffer,
  pendingProjectionOf,
  SurfaceFold,
} from '@dsh-seam/agent-context'

/** One request attempt's position and rendered inputs. */
export interface ProjectionRequest {
  turn: number
  step: number
  system: string
  tools: readonly ToolSchema[]
  signal: AbortSignal
}

/**
 * Per session: its surface folded as events are appended, from the first request an `agent/context` or
 * `agent/context-selected` listener took part in. The log is read whole once, when following starts.
 */
const followed = new WeakMap<Session, SurfaceFold>()

/**
 * The session's surface fold, caught up with its log. Following starts with one read of the log and a `session/event`
 * observer on the agent's context (disposed with the agent); a log the observer did not see (a session that publishes
 * no events) is caught up from `Session.events`.
 */
function follow(agent: Agent): SurfaceFold {
  const { session } = agent
  let fold = followed.get(session)
  if (fold === undefined) {
    const started = new SurfaceFold()
    agent.ctx.on('session/event', (subject, event) => {
      if (subject === session && event.seq === started.length) started.apply(event)
    })
    followed.set(session, fold = started)
  }
  if (fold.length < session.seq) {
    const { events } = session
    for (let seq = fold.length; seq < events.length; seq++) fold.apply(events[seq] as (typeof events)[number])
  }
  return fold
}

/**
 * Whether any listener in the agent's scope takes part in selecting its requests: cordis' scope-filtered listener
 * lookup for `agent/context` and `agent/context-selected`, with the agent's carrier and the subject the scope
 * invariant reads (`{ agent }`). With none, the step sends what it sends without the seam.
 */
function selecting(agent: Agent): boolean {
  const carrier = agentCarrier(agent)
  return agent.ctx.events.dispatch('waterfall', [carrier, 'agent/context', { agent }]).length > 0
    || agent.ctx.events.dispatch('serial', [carrier, 'agent/context-selected', { agent }]).length > 0
}

/**
 * The arrays offered to listeners, per fold: its nodes and their seqs, appended to as the surface grows and rebuilt
 * when a compaction replaces nodes. They are the listeners' read-only view, not copied per request (a copy costs the
 * surface, and more once an array outgrows V8's regular heap objects); the host decides by the fold's own index, so a
 * listener that writes to them against their type changes no request but its own, and a view whose length or ends no
 * longer match the fold is rebuilt.
 */
const views = new WeakMap<SurfaceFold, { generation: number; nodes: ContextNode[]; seqs: number[] }>()

/** Whether a view still agrees with the fold's nodes it was built from: lengths, and the ends of both arrays. */
function intact(view: { nodes: readonly ContextNode[]; seqs: readonly number[] }, source: readonly ContextNode[]): boolean {
  const { length } = view.nodes
  if (length > source.length || view.seqs.length !== length) return false
  if (length === 0) return true
  const last = source[length - 1] as ContextNode
  return view.nodes[0] === source[0] && view.nodes[length - 1] === last && view.seqs[0] === source[0]?.seq && view.seqs[length - 1] === last.seq
}

function viewOf(fold: SurfaceFold): { nodes: readonly ContextNode[]; seqs: readonly number[] } {
  const source = fold.contextNodes
  let view = views.get(fold)
  if (view === undefined || view.generation !== fold.generation || !intact(view, source)) {
    views.set(fold, view = { generation: fold.generation, nodes: [], seqs: [] })
  }
  for (let at = view.nodes.length; at < source.length; at++) {
    const node = source[at] as ContextNode
    view.nodes.push(node)
    view.seqs.push(node.seq)
  }
  return view
}

interface Offer {
  generation: number
  /** The fold's {@link SurfaceFold.mark} when offered. */
  mark: string
  fold: SurfaceFold
  nodes: readonly ContextNode[]
  requiredSeqs: readonly number[]
  /** The waterfall's default result: every node. Returned unchanged it needs no normalization. */
  everything: ContextSelection
}

function offer(agent: Agent): Offer {
  const fold = follow(agent)
  const { nodes, seqs } = viewOf(fold)
  return {
    generation: fold.generation,
    mark: fold.mark,
    fold,
    nodes,
    requiredSeqs: Object.freeze(fold.index.requiredSeqs()),
    everything: Object.freeze({ include: seqs }),
  }
}

function moved(agent: Agent, before: Offer): boolean {
  return follow(agent).mark !== before.mark
}

/**
 * Run the waterfall to completion, as the loop awaits `agent/pre-step`: a listener's synchronous or asynchronous
 * result, throw or rejection settles it. After an abort the result is discarded.
 */
async function select(agent: Agent, dispatch: AgentEventDispatch, request: ProjectionRequest, current: Offer): Promise<ContextSelection> {
  const payload = { ...request, generation: current.generation, nodes: current.nodes, requiredSeqs: current.requiredSeqs }
  const everything = (): Promise<ContextSelection> => Promise.resolve(current.everything)
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
  const current = offer(agent)
  const selection = await select(agent, dispatch, request, current)
  if (moved(agent, current)) return { moved: current, selection }
  const { fold } = current
  const projection = selection === current.everything
    ? undefined
    : normalizeOffer(String(agent.id), () => fold.events, fold.index, current.requiredSeqs, selection)
  const include = projection?.include ?? current.everything.include
  await dispatch.serial('agent/context-selected', { ...request, nodes: current.nodes, requiredSeqs: current.requiredSeqs, include, final })
  request.signal.throwIfAborted()
  if (moved(agent, current)) return { moved: current, selection }
  return { current, selection, projection }
}

/**
 * Run the `agent/context` waterfall for the request about to be built and return the messages it sends. With no
 * `agent/context` or `agent/context-selected` listener in the agent's scope this is `session.deriveMessages()` and
 * nothing else. Otherwise the waterfall's outermost result is normalized, then dispatched as `agent/context-selected`.
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
  if (!selecting(agent)) return session.deriveMessages()
  let done = await pass(agent, dispatch, request, false)
  if ('moved' in done) done = await pass(agent, dispatch, request, true)
  if ('moved' in done) {
    throw new AgentContextError('surface-changed', String(agent.id), validRevision(done.selection.revision), [done.moved.generation, session.surface.replaceGeneration], 'saw the surface change while its listeners ran, twice; surface generations')
  }
  const { current, projection } = done
  const { fold } = current
  const { index } = fold
  const pending = (): boolean => pendingProjectionOf(fold.length, seq => fold.events[seq]) !== undefined
  if ((projection === undefined || projection.isDefault) && !pending()) return session.deriveMessages()
  const normalized = projection ?? normalizeOffer(String(agent.id), () => fold.events, index, current.requiredSeqs, current.everything)
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
