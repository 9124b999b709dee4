/**
 * The host side of `agent/context`: the one call `ReactLoopAgent.step()` makes in place of `session.deriveMessages()`
 * before every request attempt, its normalizer (an `agent/context` result checked against the surface it was chosen
 * from and brought to the one form the loop sends and logs) and `AgentContextError`, which every refusal throws. The
 * patched loop carries this module compiled; offline tools reuse its normalizer.
 * @module @dsh-seam/agent-context/host
 */

import { inspect } from 'node:util'
import type { Events } from '@deepseek-ai/cordis'
import { isBailed } from '@deepseek-ai/cordis'
import type { Agent, ContextNode, ContextSelection } from '@deepseek-ai/dsh-agent'
import { agentCarrier } from '@deepseek-ai/dsh-agent'
import type { Message, ToolSchema } from '@deepseek-ai/dsh-llm'
import type { RequestProjection, SessionEvent, SessionId } from '@deepseek-ai/dsh-session'
import { deriveEventMessage, foldSurface } from '@deepseek-ai/dsh-session'
import { NodeIndex } from './rules.ts'
import { SurfaceFold } from './surface.ts'

/**
 * Encode included nodes as runs: one `[first seq, last seq]` pair per stretch of consecutive surface positions.
 * @param surfaceSeqs - message-bearing surface seqs in surface order.
 * @param positions - included positions, ascending.
 * @returns `[first, last]` runs; a run selects exactly the surface nodes from its first seq through its last, in
 * surface order (not a seq interval: after a replace the surface is not ordered by seq). `decodeProjection` decodes them.
 */
export function encodeInclude(surfaceSeqs: readonly number[], positions: readonly number[]): [number, number][] {
  const runs: [number, number][] = []
  for (let i = 0; i < positions.length; i++) {
    const from = positions[i] as number
    while (i + 1 < positions.length && positions[i + 1] === (positions[i] as number) + 1) i++
    runs.push([surfaceSeqs[from] as number, surfaceSeqs[positions[i] as number] as number])
  }
  return runs
}

/** The longest `revision` a listener may return, in UTF-16 code units; it is logged with every projected request. */
export const MAX_REVISION_LENGTH = 200

/**
 * Whether the loop logs a `revision`: at most {@link MAX_REVISION_LENGTH} code units. The loop's rule on write; readers
 * take any revision string a log holds.
 * @param revision - a listener's revision.
 * @returns true for a valid revision.
 */
export function isValidRevision(revision: string): boolean {
  return revision.length <= MAX_REVISION_LENGTH
}

/** Why a projection was refused. */
export type AgentContextErrorCode =
  /** `include` names a seq that never was a message-bearing node of this agent's surface. */
  | 'unknown-seq'
  /** `revision` is longer than `MAX_REVISION_LENGTH` code units (`isValidRevision`). */
  | 'invalid-revision'
  /** A selection of fewer than every node has no `revision`: the logged projection would not name its policy. */
  | 'missing-revision'
  /** More than one `agent/context` listener is in the agent's scope: one policy selects an agent's requests. */
  | 'multiple-listeners'
  /** A listener threw or rejected. */
  | 'listener-failed'
  /** The surface changed while listeners ran, twice in a row. */
  | 'surface-changed'

/** The most characters of a thrown value's description an error message carries. */
const MAX_FAILURE_CHARS = 500

/**
 * A thrown value in one line of at most {@link MAX_FAILURE_CHARS} characters, with the length it had. Describing a
 * value runs its code (a proxy's traps, getters, `toString`); when that throws, the value is named by its type alone.
 * @param error - a caught value.
 * @returns a bounded description.
 */
export function describeFailure(error: unknown): string {
  let text: string
  try {
    text = error instanceof Error ? `${error.name}: ${error.message}` : inspect(error, { breakLength: Infinity, compact: true, depth: 4 })
  } catch {
    // Swallowed: the value's own code threw while it was described; the error names what kind of value it was instead.
    text = `a thrown ${typeof error} that throws when it is described`
  }
  // One line: an Error's message may hold line breaks, which would split the `turn/end` record a reader scans.
  const line = text.replace(/\s*[\r\n\u2028\u2029]+\s*/gu, ' ')
  if (line.length <= MAX_FAILURE_CHARS) return line
  // Cut before a trailing lead surrogate, so the cut never leaves half a character.
  const cut = /[\uD800-\uDBFF]/u.test(line.charAt(MAX_FAILURE_CHARS - 1)) ? MAX_FAILURE_CHARS - 1 : MAX_FAILURE_CHARS
  return `${line.slice(0, cut)}… (${line.length} characters)`
}

/**
 * A refused `agent/context` projection, naming the agent, the listener revision and the offending values. The message
 * starts with `agent/context [<code>]`: DSH records a failed turn's error as text (`turn/end` `{ message, code:
 * 'UNKNOWN' }`), so the code reaches the log through the message.
 */
export class AgentContextError extends Error {
  override readonly name = 'AgentContextError'

  /**
   * @param code - why the projection was refused.
   * @param agent - the session id of the agent whose request it was.
   * @param revision - the listener's `revision`, when it supplied a valid one.
   * @param values - the offending seqs, generations or refused revision; at most the first eight are shown.
   * @param detail - one sentence on what was wrong.
   * @param cause - the thrown value behind `listener-failed`.
   */
  constructor(
    readonly code: AgentContextErrorCode,
    readonly agent: SessionId,
    readonly revision: string | undefined,
    readonly values: readonly (number | string)[],
    detail: string,
    cause?: unknown,
  ) {
    const shown = values.length === 0 ? '' : `: ${values.slice(0, 8).map(value => typeof value === 'string' ? JSON.stringify(value) : String(value)).join(', ')}${values.length > 8 ? `, … (${values.length} in all)` : ''}`
    super(`agent/context [${code}] for agent ${JSON.stringify(agent)}${revision === undefined ? '' : ` (revision ${JSON.stringify(revision)})`} ${detail}${shown}`, cause === undefined ? undefined : { cause })
  }
}

/**
 * A validated selection: every listed seq is a current node, in surface order, closed under the host's rules. A
 * selection of fewer than every node carries the revision the host logs it with.
 */
export type NormalizedProjection = {
  /** Included seqs in surface order, without duplicates, with the required seqs, whole tool units and a user opening. */
  readonly include: readonly number[]
  /** Their positions in the index, ascending. */
  readonly positions: readonly number[]
  /** How many listener seqs named nodes a compaction replaced (resolved to their replacement or dropped). */
  readonly stale: number
} & (
  /** Every node: the request equals the one built with no listener and nothing is logged. */
  | { readonly isDefault: true; readonly revision?: string }
  /** Fewer nodes, logged with the listener's revision label. */
  | { readonly isDefault: false; readonly revision: string }
)

/** What the normalizer checks a listener result against. */
export interface NormalizeInput {
  /** Session id of the agent, for error messages. */
  readonly agent: SessionId
  /** The message-bearing surface nodes offered to the listeners, with the open turn. */
  readonly index: NodeIndex
  /** Seqs always sent; each is a node of `index`. */
  readonly requiredSeqs: readonly number[]
  /**
   * Where a seq that is not on the surface went: its replacement's seq, `null` when it was replaced by nothing that is
   * still a node, `undefined` when it never was a message-bearing node. Without it every such seq is unknown.
   */
  readonly resolve?: (seq: number) => number | null | undefined
}

/**
 * Validate and normalize one `agent/context` result. Its `revision` must be a string of at most `MAX_REVISION_LENGTH`
 * code units (`isValidRevision`), and is required unless the selection, once closed, is every node: it is logged with
 * the request to name the policy that chose. A seq a
 * compaction replaced resolves to its replacement or is dropped (counted in `stale`); a seq that never was a node is
 * refused. Then duplicates go, `requiredSeqs` join, tool units close, the nearest user input joins when the first node
 * is not one ({@link NodeIndex.close}), and surface order is restored.
 * @param input - the surface and required seqs the listeners were offered.
 * @param selection - the waterfall's result.
 * @returns the normalized projection.
 * @throws {AgentContextError} naming the agent, the revision and the offending values.
 */
export function normalizeSelection(input: NormalizeInput, selection: ContextSelection): NormalizedProjection {
  const { agent, index } = input
  const { include, revision } = selection
  if (revision !== undefined && !isValidRevision(revision)) {
    throw new AgentContextError('invalid-revision', agent, undefined, [`${revision.slice(0, 40)}… (${revision.length} code units)`], `returned a revision of more than ${MAX_REVISION_LENGTH} code units`)
  }
  const chosen: number[] = []
  const unknown: number[] = []
  let stale = 0
  for (const seq of include) {
    let at = index.position.get(seq)
    if (at === undefined) {
      const resolved = input.resolve?.(seq)
      if (resolved === undefined) {
        unknown.push(seq)
        continue
      }
      stale++
      if (resolved === null) continue
      at = index.position.get(resolved)
      /* v8 ignore next -- the resolver answers only seqs the index holds; a resolver that does not drops the seq */
      if (at === undefined) continue
    }
    chosen.push(at)
  }
  if (unknown.length > 0) {
    throw new AgentContextError('unknown-seq', agent, revision, [...new Set(unknown)], 'named seqs that never were message-bearing nodes of its surface')
  }
  for (const seq of input.requiredSeqs) {
    const at = index.position.get(seq)
    /* v8 ignore next -- required seqs come from the same index's required(), which only grows */
    if (at !== undefined) chosen.push(at)
  }
  const positions = index.close(chosen)
  const included = positions.map(at => index.seqs[at] as number)
  if (positions.length === index.length) {
    return { include: included, positions, ...revision === undefined ? {} : { revision }, stale, isDefault: true }
  }
  if (revision === undefined) {
    throw new AgentContextError('missing-revision', agent, undefined, [], 'returned a selection of fewer than every node without a revision, which the logged projection names its policy by')
  }
  return { include: included, positions, revision, stale, isDefault: false }
}

/**
 * {@link normalizeSelection} for a live session's offer: seqs a compaction replaced resolve through the session's log,
 * read only when a listener names a seq that is not on the surface.
 * @param agent - session id of the agent, for error messages.
 * @param log - the session log, read on the first stale seq.
 * @param index - the offered nodes, with the open turn.
 * @param requiredSeqs - the offered required seqs.
 * @param selection - the waterfall's result.
 * @returns the normalized projection.
 * @throws {AgentContextError} naming the agent, the revision and the offending values.
 */
export function normalizeOffer(
  agent: SessionId,
  log: () => readonly SessionEvent[],
  index: NodeIndex,
  requiredSeqs: readonly number[],
  selection: ContextSelection,
): NormalizedProjection {
  return normalizeSelection({ agent, index, requiredSeqs, resolve: staleResolver(log, seq => index.position.has(seq)) }, selection)
}

/**
 * Resolve seqs a listener named that are not on the current surface: a seq a compaction replaced resolves to the
 * node that replaced it (transitively), or to `null` when that node is gone or bears no message; a seq that never
 * was a message-bearing surface node resolves to `undefined`. Folds the log once, on first use, with the session's own
 * `foldSurface`.
 * @param log - the session log, read on first use.
 * @param onSurface - whether a seq is a current message-bearing node.
 * @returns the resolver.
 */
function staleResolver(
  log: () => readonly SessionEvent[],
  onSurface: (seq: number) => boolean,
): (seq: number) => number | null | undefined {
  let events: readonly SessionEvent[] | undefined
  let replacedBy: ReadonlyMap<number, number> | undefined
  return (seq) => {
    if (events === undefined || replacedBy === undefined) {
      events = log()
      const replaced = new Map<number, number>()
      for (const replacement of foldSurface(events).replacements) {
        for (const shadowed of replacement.shadowedSeqs) replaced.set(shadowed, replacement.seq)
      }
      replacedBy = replaced
    }
    const event = events[seq]
    if (event === undefined || deriveEventMessage(event) === null || !replacedBy.has(seq)) return undefined
    let current = seq
    for (let next = replacedBy.get(current); next !== undefined; next = replacedBy.get(current)) current = next
    return onSurface(current) ? current : null
  }
}

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

/** A payload of `event` before the host adds the fields it makes once a listener is found. */
type Unoffered<E extends keyof Events, K extends string> = Omit<Parameters<Events[E]>[0], K> & Partial<Pick<Parameters<Events[E]>[0], K>>

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
  const payload: Unoffered<'agent/context', 'generation' | 'nodes' | 'requiredSeqs'> = { agent, turn, step, system, tools, signal }
  const shown: Unoffered<'agent/context-selected', 'nodes' | 'requiredSeqs' | 'replaceableSeqs' | 'include'> = { agent, turn, step, system, tools, signal }
  const contextArgs: unknown[] = [carrier, 'agent/context', payload, undefined]
  const selecting = events.dispatch('waterfall', contextArgs) as Callback[]
  const observing = observe ? events.dispatch('serial', [carrier, 'agent/context-selected', shown]) as Callback[] : []
  // With no listener the request sends every node, as without the seam: decided without a promise of its own.
  if (selecting.length === 0 && observing.length === 0) return 'unheard'
  if (selecting.length > 1) {
    const failure = new AgentContextError('multiple-listeners', agent.id, undefined, [selecting.length],
      'has more than one listener in the agent\'s scope: one policy selects an agent\'s requests (compose policies inside it); listeners')
    agent.ctx.logger.warn(failure.message)
    return Promise.reject(failure)
  }
  const offered = offer(agent)
  const inner = (): Promise<ContextSelection> => Promise.resolve(offered.everything)
  payload.generation = offered.generation
  payload.nodes = offered.nodes
  payload.requiredSeqs = offered.requiredSeqs
  return (async () => {
    // Undefined when no listener selects.
    let selection: ContextSelection | undefined
    if (selecting.length > 0) {
      try {
        selection = await waterfall<ContextSelection | undefined>(selecting, contextArgs, inner)
      } catch (error: unknown) {
        signal.throwIfAborted()
        const failure = new AgentContextError('listener-failed', agent.id, undefined, [], 'listener failed', error)
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
      : normalizeOffer(agent.id, () => fold.events, index, requiredSeqs, selection)
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
    throw new AgentContextError('surface-changed', agent.id, validRevision(done.selection?.revision), [done.moved.generation, session.surface.replaceGeneration], 'saw the surface change while its listeners ran, twice; surface generations')
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
