/**
 * The `agent-managed` `agent/context` listener: prices and describes the offered nodes, runs the selection policy
 * and returns its `include` with the policy's `revision`. Its cap is calibrated by provider usage exactly as
 * projection-aware compaction calibrates pressure (`UsageCalibration`, `calibrationFactor`). The policy's cache epoch lives in the listener; after a
 * resume or a mode switch the first request starts a new epoch.
 * @module @dsh-context/agent-tavern/listener
 */

import type { Agent, ContextNode, ContextSelection } from '@deepseek-ai/dsh-agent'
import type { ToolSchema } from '@deepseek-ai/dsh-llm'
import { isUserInput, sessionEventAt, snapshotSource, toolUnits } from '@dsh-context/agent-context'
import type { RequestPricer } from '@dsh-context/compaction-effective-projection'
import { calibrationFactor, requestEnvelope, UsageCalibration } from '@dsh-context/compaction-effective-projection'
import { reminderOf, REMINDER_SOURCES } from './anchor.ts'
import { resolveConfig } from './config.ts'
import { AgentTavernError } from './errors.ts'
import { terms } from './lexical.ts'
import { messageText } from './log.ts'
import { declaredImportance } from './memory.ts'
import type { PolicyConfig, PolicyNode, PolicySelection, PolicyState } from './policy.ts'
import { policyRevision, selectContext } from './policy.ts'

/** The `agent/context` payload fields the listener reads. */
interface ContextPayload {
  readonly nodes: readonly ContextNode[]
  readonly requiredSeqs: readonly number[]
  readonly system: string
  readonly tools: readonly ToolSchema[]
  readonly signal: AbortSignal
}

/** Services the listener uses. */
export interface ListenerServices {
  /** `ctx.tokenMeter`. */
  readonly meter: RequestPricer
  /** The agent route's context window (`ctx.llm.resolveModelInfo`, resolved at mount). */
  readonly contextWindow: (signal: AbortSignal) => Promise<number | undefined>
}

/**
 * The policy view of a node; pure in the message, so cached by seq. A turn start is any user input that is not standing
 * context: the user's messages, and plugin-sourced ones such as imported chat history, so the boundary can also
 * forget imported history a message at a time.
 */
function describe(meter: RequestPricer, node: ContextNode): PolicyNode {
  const { seq, message } = node
  const reminder = reminderOf(message)
  const standing = snapshotSource(message) ?? (reminder === undefined ? undefined : REMINDER_SOURCES[reminder])
  return {
    seq,
    tokens: meter.estimateMessage(message),
    turnStart: standing === undefined && isUserInput(message) && (message.source.kind === 'user' || message.source.kind === 'plugin'),
    ...standing === undefined ? {} : { standing },
    terms: terms(messageText(message)),
    importance: declaredImportance(message),
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
  const calibration = new UsageCalibration(services.meter)
  let state: PolicyState | undefined
  let last: PolicySelection | undefined
  const project = async (payload: ContextPayload, next: () => Promise<ContextSelection>): Promise<ContextSelection> => {
    const offered = await next()
    const contextWindow = await services.contextWindow(payload.signal)
    if (contextWindow === undefined) {
      throw new AgentTavernError('no-context-window', String(agent.id), `route ${agent.options.provider}/${agent.options.model} reports no context window, so the agent-managed budget cannot be derived`)
    }
    calibration.follow(agent.session.seq, sessionEventAt(agent.session))
    const nodes = payload.nodes.map(node => described.get(node.seq) ?? cache(node))
    const asked = payload.nodes.findLast(node => node.message.source.kind === 'user')
    const query = asked === undefined ? [] : (described.get(asked.seq) as PolicyNode).terms
    last = selectContext({
      nodes,
      requiredSeqs: payload.requiredSeqs,
      units: toolUnits(payload.nodes),
      query,
      headerTokens: services.meter.estimateHeader(requestEnvelope(payload.system, payload.tools)),
      contextWindow,
      calibration: calibrationFactor(calibration.sample),
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

/**
 * The managed listener outside the plugin, for a host that mounts it itself or replays a log with it
 * (`dsh-context simulate`): the policy of a raw AgentTavern config, validated as the plugin validates it.
 * @param agent - the agent; the listener reads `id`, `options` and its session's `seq` and `eventAt`.
 * @param raw - an AgentTavern config (`character` and `policy` are read).
 * @param services - token meter and context-window lookup.
 * @returns the listener.
 * @throws {AgentTavernError} `invalid-config`.
 */
export function managedListener(agent: Agent, raw: unknown, services: ListenerServices): ManagedProjector {
  return managedProjector(agent, resolveConfig(raw).policy, services)
}
