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
import type { RequestProjection } from '@deepseek-ai/dsh-session'
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
 * Per agent: its session's surface folded as events are appended, from the first request whose offer a listener read.
 * The log is read whole once, when following starts; the fold lives as long as the agent and its observer.
 */
const followed = new WeakMap<Agent, SurfaceFold>()

/**
 * The agent's surface fold, caught up with its session's log. Following starts with one read of the log and a
 * `session/event` observer on the agent's context (disposed with the agent).
 */
function follow(agent: Agent): SurfaceFold {
  const { session } = agent
  let fold = followed.get(agent)
  if (fold === undefined) {
    const started = new SurfaceFold()
    agent.ctx.on('session/event', (subject, event) => {
      if (subject === session && event.seq === started.length) started.apply(event)
    })
    followed.set(agent, fold = started)
  }
  if (fold.length < session.seq) {
    // Only a session that publishes no `session/event` (one outside a store) is caught up here.
    const { events } = session
    for (let seq = fold.length; seq < events.length; seq++) fold.apply(events[seq] as (typeof events)[number])
  }
  return fold
}

/** Per agent: its scope carrier, built once (`agentCarrier` is a stateless routing object). */
const carriers = new WeakMap<Agent, ReturnType<typeof agentCarrier>>()

function carrierOf(agent: Agent): ReturnType<typeof agentCarrier> {
  let carrier = carriers.get(agent)
  if (carrier === undefined) carriers.set(agent, carrier = agentCarrier(agent))
  return carrier
}

type Callback = (...args: unknown[]) => unknown

/**
 * The listeners of a scope-filtered agent event in the agent's scope: cordis' `events.dispatch` for the agent's
 * carrier, the lookup `waterfall` and `serial` make (reported once on `internal/dispatch`).
 * @param args - the carrier, the event name, the payload and, for a waterfall, the innermost `next`; the lookup takes
 *   the carrier and the name off it, as cordis' own dispatchers do.
 */
function listeners(agent: Agent, type: 'waterfall' | 'serial', args: unknown[]): Callback[] {
  return agent.ctx.events.dispatch(type, args) as Callback[]
}

/**
 * Run looked-up waterfall listeners as cordis' `waterfall` does: outermost first, each `next()` calling the one inside
 * it, the innermost `next()` calling `inner`.
 */
function waterfall<T>(callbacks: Callback[], args: unknown[], inner: () => Promise<T>): Promise<T> {
  // `events.dispatch` took the carrier and the name off `args`: the payload and `inner` are left.
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
  fold: SurfaceFold
  /** The nodes offered, a frozen array of this request's own, copied when a listener first reads them. */
  readonly nodes: readonly ContextNode[]
  requiredSeqs: readonly number[]
  /** The waterfall's default result, made when a listener first calls `next()`; returned unchanged it needs no normalization. */
  everything: () => ContextSelection
  /** Whether {@link Offer.everything} made `selection`. */
  isEverything: (selection: ContextSelection) => boolean
}

function offer(agent: Agent): Offer {
  const fold = follow(agent)
  // The fold's arrays only grow until a replace swaps them, so the offer is their first `offered` entries.
  const { contextNodes, index } = fold
  const offered = contextNodes.length
  let nodes: readonly ContextNode[] | undefined
  let everything: ContextSelection | undefined
  return {
    generation: fold.generation,
    mark: fold.mark,
    fold,
    get nodes() { return nodes ??= Object.freeze(contextNodes.slice(0, offered)) },
    requiredSeqs: Object.freeze(index.requiredSeqs()),
    everything: () => everything ??= Object.freeze({ include: Object.freeze(index.seqs.slice(0, offered)) }),
    isEverything: selection => everything !== undefined && selection === everything,
  }
}

function moved(agent: Agent, before: Offer | undefined): boolean {
  return before !== undefined && follow(agent).mark !== before.mark
}

/** One pass: the offer, the waterfall's result and its normalization (undefined for every node). */
interface Pass {
  current: Offer
  selection: ContextSelection | undefined
  projection: NormalizedProjection | undefined
}

/**
 * Dispatch `agent/context` and `agent/context-selected` for the request about to be built. Their payloads build the
 * offer (the surface fold's nodes, the required seqs, the default selection) when a listener first reads it, so a step
 * no listener takes part in builds nothing.
 * @returns the pass; `moved` with the offer it started from when the surface moved while listeners ran; `unheard`
 *   when neither event has a listener in the agent's scope.
 */
function pass(agent: Agent, request: ProjectionRequest, final: boolean): 'unheard' | Promise<Pass | { moved: Offer; selection: ContextSelection | undefined } | 'unheard'> {
  let current: Offer | undefined
  const offered = (): Offer => current ??= offer(agent)
  const { turn, step, system, tools, signal } = request
  const carrier = carrierOf(agent)
  const inner = (): Promise<ContextSelection> => Promise.resolve(offered().everything())
  const contextArgs: unknown[] = [carrier, 'agent/context', {
    agent, turn, step, system, tools, signal,
    get generation() { return offered().generation },
    get nodes() { return offered().nodes },
    get requiredSeqs() { return offered().requiredSeqs },
  }, inner]
  let projection: NormalizedProjection | undefined
  let include: readonly number[] | undefined
  const selectedPayload = {
    agent, turn, step, system, tools, signal, final,
    get nodes() { return offered().nodes },
    get requiredSeqs() { return offered().requiredSeqs },
    get include() { return include ??= projection === undefined ? offered().everything().include : Object.freeze(projection.include.slice()) },
  }
  const selecting = listeners(agent, 'waterfall', contextArgs)
  // With no selecting listener nothing runs before `agent/context-selected`, so its listeners are looked up now: with
  // none either, the step is decided without a promise of its own.
  const selectedEarly = selecting.length === 0 ? listeners(agent, 'serial', [carrier, 'agent/context-selected', selectedPayload]) : undefined
  if (selectedEarly?.length === 0) return 'unheard'
  return (async () => {
    let selection: ContextSelection | undefined
    if (selecting.length > 0) {
      try {
        selection = await waterfall(selecting, contextArgs, inner)
      } catch (error: unknown) {
        signal.throwIfAborted()
        const failure = new AgentContextError('listener-failed', String(agent.id), undefined, [], `listener failed: ${describeFailure(error)}`, error)
        // `turn/end` records it too; the log line is what an operator watching the console sees.
        agent.ctx.logger.warn(failure.message)
        throw failure
      }
      signal.throwIfAborted()
      if (moved(agent, current)) return { moved: current as Offer, selection }
      if (selection !== undefined && !offered().isEverything(selection)) {
        const { fold, requiredSeqs } = offered()
        projection = normalizeOffer(String(agent.id), () => fold.events, fold.index, requiredSeqs, selection)
      }
    }
    const selected = selectedEarly ?? listeners(agent, 'serial', [carrier, 'agent/context-selected', selectedPayload])
    await serial(selected, selectedPayload)
    if (selection === undefined && selected.length === 0) return 'unheard'
    signal.throwIfAborted()
    if (moved(agent, current)) return { moved: current as Offer, selection }
    return { current: offered(), selection, projection }
  })()
}

/**
 * Run the `agent/context` waterfall for the request about to be built and return the messages it sends. With no
 * `agent/context` or `agent/context-selected` listener in the agent's scope this is `session.deriveMessages()`, and
 * no offer is built. Otherwise the waterfall's outermost result is normalized, then dispatched as
 * `agent/context-selected`. A default projection (every node) returns `session.deriveMessages()` and logs nothing;
 * any other appends one `request/projection` event first. When the surface moves while listeners of either event run,
 * the waterfall runs once more over the new surface; a second move rejects the step. The waterfall is awaited to the
 * end even when the turn is aborted, so whatever a listener appends lands inside its turn; an aborted step discards
 * the result and logs nothing.
 * @param agent - the agent whose step this is; its session is read and appended to.
 * @param request - the request's turn, step, system prompt, tools and signal.
 * @returns the request messages.
 * @throws {AgentContextError} for an invalid `agent/context` result, a failed `agent/context` listener, or a surface that
 *   keeps moving; an error of an `agent/context-selected` listener propagates as it was thrown.
 */
export function projectRequestMessages(agent: Agent, request: ProjectionRequest): Promise<Message[]> {
  const first = pass(agent, request, false)
  return first === 'unheard' ? Promise.resolve(agent.session.deriveMessages()) : project(agent, request, first)
}

async function project(agent: Agent, request: ProjectionRequest, first: Exclude<ReturnType<typeof pass>, 'unheard'>): Promise<Message[]> {
  const { session } = agent
  let done = await first
  if (done === 'unheard') return session.deriveMessages()
  if ('moved' in done) done = await pass(agent, request, true)
  if (done === 'unheard') return session.deriveMessages()
  if ('moved' in done) {
    throw new AgentContextError('surface-changed', String(agent.id), validRevision(done.selection?.revision), [done.moved.generation, session.surface.replaceGeneration], 'saw the surface change while its listeners ran, twice; surface generations')
  }
  const { current, projection } = done
  const { fold } = current
  const { index } = fold
  const pending = (): boolean => pendingProjectionOf(fold.length, seq => fold.events[seq]) !== undefined
  if ((projection === undefined || projection.isDefault) && !pending()) return session.deriveMessages()
  const normalized = projection ?? normalizeOffer(String(agent.id), () => fold.events, index, current.requiredSeqs, current.everything())
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
