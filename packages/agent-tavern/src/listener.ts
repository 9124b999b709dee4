/**
 * The `agent-managed` `agent/context` listener: prices and describes the offered nodes, runs the selection policy
 * and returns its `include` with the policy's `revision`. The policy's cache epoch lives in the listener; after a
 * resume or a mode switch the first request starts a new epoch.
 * @module @dsh-context/agent-tavern/listener
 */

import type { Agent, ContextNode, ContextSelection } from '@deepseek-ai/dsh-agent'
import type { Message, ToolSchema } from '@deepseek-ai/dsh-llm'
import { toolUnits } from '@dsh-context/agent-context'
import { AgentTavernError } from './errors.ts'
import { terms } from './lexical.ts'
import { DEFAULT_IMPORTANCE, MEMORY_WRITE, messageText } from './log.ts'
import type { PolicyConfig, PolicyNode, PolicySelection, PolicyState } from './policy.ts'
import { policyRevision, selectContext } from './policy.ts'
import type { MessagePricer } from './tokens.ts'
import { headerTokens } from './tokens.ts'

/** Source plugin of DSH's runtime-context snapshots (`RuntimeContextProjection` in dsh-agent-loop). */
export const RUNTIME_CONTEXT_SOURCE = '@deepseek-ai/dsh-system-prompt'

/** The `agent/context` payload fields the listener reads. */
export interface ContextPayload {
  readonly nodes: readonly ContextNode[]
  readonly requiredSeqs: readonly number[]
  readonly system: string
  readonly tools: readonly ToolSchema[]
  readonly signal: AbortSignal
}

/** Services the listener uses. */
export interface ListenerServices {
  /** `ctx.tokenMeter`. */
  readonly meter: MessagePricer
  /** Resolves the agent route's context window (`ctx.llm.resolveModelInfo`). */
  readonly contextWindow: (signal: AbortSignal) => Promise<number | undefined>
}

/**
 * The context source a message is a snapshot of: DSH's runtime context, or any plugin context declaring the
 * `snapshot` form (a later one from the same plugin supersedes it).
 * @param message - a surface message.
 * @returns the source plugin, or undefined for other messages.
 */
export function snapshotSource(message: Message): string | undefined {
  const { source } = message
  if (source.kind !== 'plugin') return undefined
  return source.plugin === RUNTIME_CONTEXT_SOURCE || source.form === 'snapshot' ? source.plugin : undefined
}

/** Importance of a node: the declared importance of the `memory_write` calls it carries, else 0. */
function importanceOf(message: Message): number {
  let importance = 0
  for (const block of message.content) {
    if (block.type !== 'tool-call' || block.name !== MEMORY_WRITE) continue
    let declared: unknown
    try {
      declared = (JSON.parse(block.arguments) as { importance?: unknown }).importance
    } catch {
      // Unparsable arguments: the call failed validation, so it kept no note worth pinning.
      continue
    }
    importance = Math.max(importance, typeof declared === 'number' ? declared : DEFAULT_IMPORTANCE)
  }
  return importance
}

/** The policy view of a node; pure in the message, so cached by seq. */
function describe(meter: MessagePricer, node: ContextNode): PolicyNode {
  const { seq, message } = node
  const snapshotOf = snapshotSource(message)
  return {
    seq,
    tokens: meter.estimateMessage(message),
    turnStart: message.role === 'user' && message.source.kind === 'user',
    ...snapshotOf === undefined ? {} : { snapshotOf },
    terms: terms(messageText(message)),
    importance: importanceOf(message),
  }
}

/** A managed projector for one agent. */
export interface ManagedProjector {
  /**
   * The `agent/context` waterfall listener.
   * @param payload - the offered surface.
   * @param next - the rest of the chain.
   * @returns the selection, narrowed to what later listeners kept.
   */
  (payload: ContextPayload, next: () => Promise<ContextSelection>): Promise<ContextSelection>
  /** The selection of the newest request, for inspection. */
  readonly last: () => PolicySelection | undefined
}

/**
 * Build the managed listener.
 * @param agent - the agent, for error messages.
 * @param policy - the selection policy config.
 * @param services - token meter and context-window lookup.
 * @returns the listener.
 */
export function managedProjector(agent: Agent, policy: PolicyConfig, services: ListenerServices): ManagedProjector {
  const revision = policyRevision(policy)
  const described = new Map<number, PolicyNode>()
  let state: PolicyState | undefined
  let last: PolicySelection | undefined
  const project = async (payload: ContextPayload, next: () => Promise<ContextSelection>): Promise<ContextSelection> => {
    const offered = await next()
    const contextWindow = await services.contextWindow(payload.signal)
    if (contextWindow === undefined) {
      throw new AgentTavernError('no-context-window', String(agent.id), `route ${agent.options.provider}/${agent.options.model} reports no context window, so the agent-managed budget cannot be derived`)
    }
    const nodes = payload.nodes.map(node => described.get(node.seq) ?? cache(node))
    const query = nodes.findLast(node => node.turnStart)?.terms ?? []
    last = selectContext({
      nodes,
      requiredSeqs: payload.requiredSeqs,
      units: toolUnits(payload.nodes),
      query,
      headerTokens: headerTokens(payload.system, payload.tools),
      contextWindow,
    }, policy, state)
    state = last.state
    const kept = new Set(offered.include)
    return { include: last.include.filter(seq => kept.has(seq)), revision }
  }
  function cache(node: ContextNode): PolicyNode {
    const view = describe(services.meter, node)
    described.set(node.seq, view)
    return view
  }
  return Object.assign(project, { last: () => last })
}
