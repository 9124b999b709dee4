/**
 * The host side of `agent/context`: the one call the patched `ReactLoopAgent.step()` makes in place of
 * `session.deriveMessages()`, before every request attempt.
 * @module @dsh-context/agent-loop-patch/host
 */

import type { Agent, AgentEventDispatch, ContextNode, ContextSelection } from '@deepseek-ai/dsh-agent'
import type { NodesMark } from '@dsh-context/agent-context'
import type { Message, ToolSchema } from '@deepseek-ai/dsh-llm'
import type { RequestProjection, Session, SessionEvent } from '@deepseek-ai/dsh-session'
import {
  AgentContextError,
  appendedNodes,
  encodeInclude,
  normalizeSelection,
  pendingProjection,
  pendingRequiredSeqs,
} from '@dsh-context/agent-context'
import { hasContextListener } from './listeners.ts'

/**
 * Sessions this host has written a projection for. Without a listener, only they can hold a projection the next
 * request would consume (a retry after a request that streamed nothing), so only they need the full path.
 */
const projected = new WeakSet<Session>()

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
  surfaceLength: number
  tail: number | undefined
  nodes: readonly ContextNode[]
  requiredSeqs: readonly number[]
  /** The waterfall's default result; returned unchanged, it needs no normalization. */
  everything: ContextSelection
}

/** The nodes last offered per session, and where their derivation stopped. */
const offered = new WeakMap<Session, { mark: NodesMark; nodes: readonly ContextNode[] }>()

/** The current message-bearing nodes, deriving only the surface nodes appended since the last offer. */
function currentNodes(session: Session, eventAt: (seq: number) => SessionEvent): readonly ContextNode[] {
  const last = offered.get(session)
  const { added, extends: reuse, mark } = appendedNodes(session.surface, last?.mark, eventAt)
  const nodes = !reuse || last === undefined ? added : added.length === 0 ? last.nodes : Object.freeze([...last.nodes, ...added])
  offered.set(session, { mark, nodes })
  return nodes
}

function offer(session: Session): Offer {
  const { events, surface } = session
  const eventAt = (seq: number): SessionEvent => events[seq] as SessionEvent
  const nodes = currentNodes(session, eventAt)
  return {
    generation: surface.replaceGeneration,
    surfaceLength: surface.nodes.length,
    tail: surface.nodes.at(-1),
    nodes,
    requiredSeqs: pendingRequiredSeqs(nodes, events),
    everything: Object.freeze({ include: Object.freeze(nodes.map(node => node.seq)) }),
  }
}

function moved(session: Session, before: Offer): boolean {
  const { surface } = session
  return surface.replaceGeneration !== before.generation
    || surface.nodes.length !== before.surfaceLength
    || surface.nodes.at(-1) !== before.tail
}

/** Settle with the listeners' result, or reject with the abort reason as soon as the turn is cancelled. */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error)
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason as Error)
    signal.addEventListener('abort', onAbort, { once: true })
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort))
  })
}

async function select(agent: Agent, dispatch: AgentEventDispatch, request: ProjectionRequest, current: Offer): Promise<unknown> {
  const payload = { ...request, nodes: current.nodes, requiredSeqs: current.requiredSeqs }
  const everything = (): Promise<ContextSelection> => Promise.resolve(current.everything)
  try {
    return await untilAborted(dispatch.waterfall('agent/context', payload, everything), request.signal)
  } catch (error: unknown) {
    if (request.signal.aborted) throw error
    throw new AgentContextError('listener-failed', String(agent.id), undefined, [], `listener failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error })
  }
}

/**
 * Run the `agent/context` waterfall for the request about to be built and return the messages it sends. With no
 * listener for the agent, the waterfall is skipped: its result would be every node. A default
 * projection (every node) returns `session.deriveMessages()` and logs nothing; any other appends one
 * `request/projection` event first. When the surface moves while listeners run, the waterfall runs once more over the
 * new surface; a second move rejects the step.
 * @param agent - the agent whose step this is; its session is read and appended to.
 * @param dispatch - the agent's scope-filtered event dispatcher.
 * @param request - the request's turn, step, system prompt, tools and signal.
 * @returns the request messages.
 * @throws {AgentContextError} for an invalid listener result, a failed listener, or a surface that keeps moving.
 */
export async function projectRequestMessages(
  agent: Agent,
  dispatch: AgentEventDispatch,
  request: ProjectionRequest,
): Promise<Message[]> {
  const { session } = agent
  if (!hasContextListener(agent) && !projected.has(session)) return session.deriveMessages()
  let current = offer(session)
  let selection = await select(agent, dispatch, request, current)
  if (moved(session, current)) {
    current = offer(session)
    selection = await select(agent, dispatch, request, current)
    if (moved(session, current)) {
      throw new AgentContextError('surface-changed', String(agent.id), revisionOf(selection), [current.generation, session.surface.replaceGeneration], 'saw the surface change while its listeners ran, twice; surface generations')
    }
  }
  if (selection === current.everything && pendingProjection(session.events) === undefined) return session.deriveMessages()
  const projection = normalizeSelection({
    agent: String(agent.id),
    nodes: current.nodes,
    requiredSeqs: current.requiredSeqs,
  }, selection)
  if (projection.isDefault && pendingProjection(session.events) === undefined) return session.deriveMessages()
  const data: RequestProjection = {
    turn: request.turn,
    step: request.step,
    generation: current.generation,
    include: encodeInclude(current.nodes.map(node => node.seq), projection.include),
    ...projection.revision === undefined ? {} : { revision: projection.revision },
    surfaceNodes: current.nodes.length,
    includedNodes: projection.include.length,
  }
  session.append('request/projection', data)
  projected.add(session)
  const messages: Message[] = []
  let next = 0
  for (const node of current.nodes) {
    if (node.seq !== projection.include[next]) continue
    messages.push(node.message)
    next++
  }
  return messages
}

function revisionOf(selection: unknown): string | undefined {
  const revision = (selection as { revision?: unknown } | null)?.revision
  return typeof revision === 'string' ? revision : undefined
}
