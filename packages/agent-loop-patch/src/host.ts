/**
 * The host side of `agent/context`: the one call `ReactLoopAgent.step()` makes in place of
 * `session.deriveMessages()`, before every request attempt.
 * @module @dsh-seam/agent-loop-patch/host
 */

import { isBailed } from '@deepseek-ai/cordis'
import type { Agent, ContextNode, ContextSelection } from '@deepseek-ai/dsh-agent'
import { agentCarrier } from '@deepseek-ai/dsh-agent'
import type { NormalizedProjection } from '@dsh-seam/agent-context'
import type { Message, ToolSchema } from '@deepseek-ai/dsh-llm'
import type { RequestProjection, SessionEvent } from '@deepseek-ai/dsh-session'
import {
  AgentContextError,
  describeFailure,
  encodeInclude,
  isValidRevision,
  NodeIndex,
  normalizeOffer,
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

/** An agent's session log, folded as events are appended, and the host's rules over its message-bearing nodes. */
interface Followed {
  readonly fold: SurfaceFold
  index: NodeIndex
}

/**
 * Per agent: its session's surface folded as events are appended, from the first request whose offer a listener read.
 * The log is read whole once, when following starts; the fold lives as long as the agent and its observer.
 */
const followed = new WeakMap<Agent, Followed>()

/** Fold the next event and keep the node index in step with the nodes it added or replaced. */
function track(state: Followed, event: SessionEvent): void {
  const { fold } = state
  const { added, extends: extending } = fold.apply(event)
  if (event.type === 'turn/start') state.index.startTurn(event.seq)
  if (!extending) {
    state.index = NodeIndex.read(added, state.index.turnStart, seq => fold.events[seq])
    return
  }
  for (const node of added) state.index.push(node.seq, node.message)
}

/**
 * The agent's surface fold, caught up with its session's log. Following starts with one read of the log and a
 * `session/event` observer on the agent's context (disposed with the agent).
 */
function follow(agent: Agent): Followed {
  const { session } = agent
  let state = followed.get(agent)
  if (state === undefined) {
    const started: Followed = { fold: new SurfaceFold(), index: new NodeIndex() }
    agent.ctx.on('session/event', (subject, event) => {
      /* v8 ignore else -- the event is scoped to the agent's session and comes in seq order after the catch-up read. */
      if (subject === session && event.seq === started.fold.length) track(started, event)
    })
    followed.set(agent, state = started)
  }
  if (state.fold.length < session.seq) {
    // Only a session that publishes no `session/event` (one outside a store) is caught up here.
    const { events } = session
    for (let seq = state.fold.length; seq < events.length; seq++) track(state, events[seq] as SessionEvent)
  }
  return state
}

/** An agent's scope carrier (`agentCarrier`, a stateless routing object) and its context's event service. */
interface Dispatcher {
  carrier: ReturnType<typeof agentCarrier>
  events: Agent['ctx']['events']
}

/** Per agent: its {@link Dispatcher}, built once. */
const dispatchers = new WeakMap<Agent, Dispatcher>()

/**
 * The agent's dispatcher. Its `events.dispatch` returns the listeners of a scope-filtered agent event in the agent's
 * scope, the lookup cordis' `waterfall` and `serial` make (reported once on `internal/dispatch`); it takes the carrier
 * and the name off the arguments it is given, as cordis' own dispatchers do.
 */
function dispatcherOf(agent: Agent): Dispatcher {
  let dispatcher = dispatchers.get(agent)
  if (dispatcher === undefined) dispatchers.set(agent, dispatcher = { carrier: agentCarrier(agent), events: agent.ctx.events })
  return dispatcher
}

type Callback = (...args: unknown[]) => unknown

/**
 * Run looked-up waterfall listeners as cordis' `waterfall` does: outermost first, each `next()` calling the one inside
 * it, the innermost `next()` calling `inner`.
 */
function waterfall<T>(callbacks: Callback[], args: unknown[], inner: () => Promise<T>): Promise<T> {
  // `events.dispatch` took the carrier and the name off `args`: the payload and the stand-in for `next()` are left.
  const rest = args.slice(0, -1)
  const next = (): Promise<T> => (callbacks.shift() ?? inner)(...rest, next) as Promise<T>
  return next()
}

/**
 * Run looked-up serial listeners as cordis' `serial` does: awaiting each in turn, stopping at the first that returns a
 * bail value.
 */
async function serial(callbacks: Callback[], payload: unknown): Promise<void> {
  for (const callback of callbacks) {
    if (isBailed(await callback(payload))) break
  }
}

interface Offer {
  generation: number
  /** The fold's {@link SurfaceFold.mark} when offered. */
  mark: string
  followed: Followed
  /** The fold's node list: the surface cannot move while it is offered, or the pass runs again. */
  nodes: readonly ContextNode[]
  requiredSeqs: readonly number[]
  /** The waterfall's default result, over the fold's own seq list; returned unchanged it needs no normalization. */
  everything: ContextSelection
}

/**
 * The offer of the agent's surface as it is now. Nothing is copied: `nodes` and the default selection's `include` are
 * the fold's offered lists, which a listener reads while the surface stands still (a pass that sees it move runs
 * again). The host checks and sends every selection through its own node index, so a listener that writes to them
 * anyway changes only what it is offered.
 */
function offer(agent: Agent): Offer {
  const state = follow(agent)
  const { fold, index } = state
  return {
    generation: fold.generation,
    mark: fold.mark,
    followed: state,
    nodes: fold.contextNodes,
    requiredSeqs: Object.freeze(index.requiredSeqs()),
    everything: Object.freeze({ include: fold.contextSeqs }),
  }
}

function moved(agent: Agent, before: Offer | undefined): boolean {
  return before !== undefined && follow(agent).fold.mark !== before.mark
}

/** One pass: the offer, the selection and its normalization (undefined for every node). */
interface Pass {
  current: Offer
  selection: ContextSelection | undefined
  projection: NormalizedProjection | undefined
}

/**
 * Select the nodes of the request about to be built. When `agent/context` or `agent/context-selected` has a listener
 * in the agent's scope, make the offer (the surface fold's nodes, the required seqs, the default selection), run the
 * one `agent/context` listener, normalize its selection and, on the first pass, dispatch `agent/context-selected`.
 * @param observe - whether to dispatch `agent/context-selected` (the first pass of a request attempt).
 * @returns the pass; `moved` with the offer it started from when the surface moved while listeners ran; `unheard`
 *   when neither event has a listener in the agent's scope.
 * @throws {AgentContextError} `multiple-listeners` when `agent/context` has more than one listener in the agent's scope.
 */
function pass(agent: Agent, request: ProjectionRequest, observe: boolean): 'unheard' | Promise<Pass | { moved: Offer; selection: ContextSelection | undefined }> {
  const { turn, step, system, tools, signal } = request
  const { carrier, events } = dispatcherOf(agent)
  // Both payloads get the offer once a listener is found (the same objects, before any listener runs), so a step with
  // none makes no offer. The last argument stands for the innermost `next()`, which `waterfall` is given once the
  // offer it answers with is made.
  const payload: Record<string, unknown> = { agent, turn, step, system, tools, signal }
  const shown: Record<string, unknown> = { agent, turn, step, system, tools, signal }
  const contextArgs: unknown[] = [carrier, 'agent/context', payload, undefined]
  const selecting = events.dispatch('waterfall', contextArgs) as Callback[]
  const observing = observe ? events.dispatch('serial', [carrier, 'agent/context-selected', shown]) as Callback[] : []
  // With no listener the request sends every node, as without the seam: decided without a promise of its own.
  if (selecting.length === 0 && observing.length === 0) return 'unheard'
  if (selecting.length > 1) {
    const failure = new AgentContextError('multiple-listeners', String(agent.id), undefined, [selecting.length],
      'has more than one listener in the agent\'s scope: one policy selects an agent\'s requests (compose policies inside it); listeners')
    agent.ctx.logger.warn(failure.message)
    return Promise.reject(failure)
  }
  const offered = offer(agent)
  const inner = (): Promise<ContextSelection> => Promise.resolve(offered.everything)
  payload['generation'] = offered.generation
  payload['nodes'] = offered.nodes
  payload['requiredSeqs'] = offered.requiredSeqs
  return (async () => {
    // Typed a selection; an untyped listener that returns nothing leaves every node.
    let selection: ContextSelection | undefined
    if (selecting.length > 0) {
      try {
        selection = await waterfall<ContextSelection | undefined>(selecting, contextArgs, inner)
      } catch (error: unknown) {
        signal.throwIfAborted()
        const failure = new AgentContextError('listener-failed', String(agent.id), undefined, [], 'listener failed', error)
        // `turn/end` records it with its cause; the log line is what an operator watching the console sees.
        agent.ctx.logger.warn(`${failure.message}: ${describeFailure(error)}`)
        throw failure
      }
      signal.throwIfAborted()
      if (moved(agent, offered)) return { moved: offered, selection }
    }
    const { followed: { fold, index }, requiredSeqs } = offered
    const projection = selection === undefined || selection === offered.everything
      ? undefined
      : normalizeOffer(String(agent.id), () => fold.events, index, requiredSeqs, selection)
    if (observing.length > 0) {
      Object.assign(shown, {
        nodes: offered.nodes,
        requiredSeqs,
        replaceableSeqs: Object.freeze(index.replaceableStandingSeqs()),
        include: projection === undefined ? offered.everything.include : Object.freeze(projection.include.slice()),
      })
      await serial(observing, shown)
      signal.throwIfAborted()
      if (moved(agent, offered)) return { moved: offered, selection }
    }
    return { current: offered, selection, projection }
  })()
}

/**
 * Run the one `agent/context` listener for the request about to be built and return the messages it sends. With no
 * listener of `agent/context` or `agent/context-selected` in the agent's scope this is `session.deriveMessages()` after
 * two listener lookups, and no offer is made. Otherwise the listener's result is normalized, then dispatched as
 * `agent/context-selected`. A default projection (every node) returns `session.deriveMessages()` and logs nothing;
 * any other appends one `request/projection` event first. When the surface moves while listeners of either event run,
 * the host selects once more over the new surface, without dispatching `agent/context-selected` again; a second move
 * rejects the step. The listener is awaited to the end even when the turn is aborted, so whatever it appends lands
 * inside its turn; an aborted step discards the result and logs nothing.
 * @param agent - the agent whose step this is; its session is read and appended to.
 * @param request - the request's turn, step, system prompt, tools and signal.
 * @returns the request messages.
 * @throws {AgentContextError} for more than one `agent/context` listener, an invalid result, a failed listener, or a
 *   surface that keeps moving; an error of an `agent/context-selected` listener propagates as it was thrown.
 */
export function projectRequestMessages(agent: Agent, request: ProjectionRequest): Promise<Message[]> {
  const first = pass(agent, request, true)
  return first === 'unheard' ? Promise.resolve(agent.session.deriveMessages()) : project(agent, request, first)
}

async function project(agent: Agent, request: ProjectionRequest, first: Exclude<ReturnType<typeof pass>, 'unheard'>): Promise<Message[]> {
  const { session } = agent
  let done: Awaited<typeof first> | 'unheard' = await first
  // A listener that moved the surface may also have removed the `agent/context` listener.
  if ('moved' in done) done = await pass(agent, request, false)
  if (done === 'unheard') return session.deriveMessages()
  if ('moved' in done) {
    throw new AgentContextError('surface-changed', String(agent.id), validRevision(done.selection?.revision), [done.moved.generation, session.surface.replaceGeneration], 'saw the surface change while its listeners ran, twice; surface generations')
  }
  const { current, projection } = done
  if (projection === undefined || projection.isDefault) return session.deriveMessages()
  const { index } = current.followed
  const data: RequestProjection = {
    turn: request.turn,
    step: request.step,
    generation: current.generation,
    include: encodeInclude(index.seqs, projection.positions),
    revision: projection.revision,
    surfaceNodes: index.length,
    includedNodes: projection.include.length,
    ...projection.stale === 0 ? {} : { stale: projection.stale },
  }
  session.append('request/projection', data)
  return projection.positions.map(at => index.messages[at] as Message)
}

/** A listener's revision when the normalizer would accept it, for naming the listener in an error. */
function validRevision(revision: string | undefined): string | undefined {
  return revision !== undefined && isValidRevision(revision) ? revision : undefined
}
