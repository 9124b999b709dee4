/**
 * The `agent-managed` `agent/context` listener: prices and describes the offered nodes, runs the selection policy
 * and returns its `include` with the policy's `revision`. Its cap is calibrated by provider usage exactly as
 * projection-aware compaction calibrates pressure (`UsageCalibration`, `calibrationFactor`). The policy's cache epoch lives in the listener; after a
 * resume or a mode switch the first request starts a new epoch.
 * @module @dsh-seam/agent-tavern/listener
 */

import type { Agent, ContextNode, ContextSelection } from '@deepseek-ai/dsh-agent'
import type { Message, ToolSchema } from '@deepseek-ai/dsh-llm'
import type { RequestPricer } from '@dsh-seam/compaction-effective-projection'
import { calibrationFactor, requestEnvelope, UsageCalibration } from '@dsh-seam/compaction-effective-projection'
import { reminderOf, TAVERN_PLUGIN } from './anchor.ts'
import { resolveConfig } from './config.ts'
import { AgentTavernError } from './errors.ts'
import { formOf, isStoryLine, isUserInput, isUserSource, logOf, pluginOf, standingProducer } from './host-log.ts'
import { terms } from './lexical.ts'
import { messageText } from './log.ts'
import { declaredConfidence, declaredImportance } from './memory.ts'
import type { PolicyConfig, PolicyIndex, PolicyNode, PolicySelection, PolicyState } from './policy.ts'
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

/** Credibility of what the model or a tool said, which no one confirmed: below the user's word and a confident memory. */
const UNCONFIRMED = 0.5

/**
 * The standing source a message belongs to, whose newest message the policy always sends: standing context (a
 * producer's `instructions`, `catalog` and `snapshot` messages, `standingProducer`), each reminder kind (the real
 * app's `tavern-opening` and `tavern-anchor`), and an imported `greeting` (the story's opening, per plugin).
 * @param message - a surface node's message.
 * @returns the source key, or undefined for anything else.
 */
function standingOf(message: Message): string | undefined {
  const standing = standingProducer(message)
  if (standing !== undefined) return standing
  const reminder = reminderOf(message)
  if (reminder !== undefined) return `${TAVERN_PLUGIN}:${reminder}`
  const plugin = pluginOf(message.source)
  return plugin !== undefined && formOf(message.source) === 'greeting' ? `${plugin}:greeting` : undefined
}

/**
 * The policy view of a node; pure in the message, so cached by seq. A turn start is a story line that is not standing
 * context: the user's messages and imported or relayed chat (`history`, `recall`, `relay`), so the boundary can also
 * forget imported history a message at a time; never a reminder, a notice or a snapshot.
 */
function describe(meter: RequestPricer, node: ContextNode): PolicyNode {
  const { seq, message } = node
  const standing = standingOf(message)
  return {
    seq,
    tokens: meter.estimateMessage(message),
    turnStart: standing === undefined && isUserInput(message) && isStoryLine(message),
    ...standing === undefined ? {} : { standing },
    terms: terms(messageText(message)),
    importance: declaredImportance(message),
    credibility: declaredConfidence(message) ?? (isUserSource(message.source) ? 1 : UNCONFIRMED),
  }
}

/** The policy's view of an offer: its nodes, their tool units and index, and the offered seqs in surface order. */
interface OfferedView {
  readonly nodes: readonly PolicyNode[]
  readonly units: ReadonlyMap<number, readonly number[]>
  readonly index: PolicyIndex
  readonly seqs: readonly number[]
}

/**
 * Tool-call units as the messages declare them, grown a message at a time: an assistant message with tool calls and
 * the messages answering them (a message joins the unit of its first tool result whose call is known). A result whose
 * call was not offered forms no unit. The host closes units itself; the policy groups them to price and rank them.
 */
class ToolUnits {
  /** Each member of a unit with an answer, mapped to the unit's seqs in surface order. */
  readonly byMember = new Map<number, readonly number[]>()
  private readonly byCall = new Map<string, number[]>()

  /**
   * Append a node at the surface end.
   * @param seq - the node's seq.
   * @param message - its message.
   */
  push(seq: number, message: Message): void {
    if (message.role === 'assistant') {
      const unit = [seq]
      for (const block of message.content) if (block.type === 'tool-call') this.byCall.set(block.id, unit)
      return
    }
    for (const block of message.content) {
      const unit = block.type === 'tool-result' ? this.byCall.get(block.toolCallId) : undefined
      if (unit === undefined) continue
      unit.push(seq)
      const seqs = [...unit]
      for (const member of seqs) this.byMember.set(member, seqs)
      return
    }
  }

  clear(): void {
    this.byMember.clear()
    this.byCall.clear()
  }
}

/**
 * The policy's view of the offered nodes, their tool units and their {@link PolicyIndex}, kept as the surface grows:
 * while an offer extends the previous one (the host reuses its node objects), only the new nodes are described and
 * indexed; any other offer (a replaced surface) starts over, reusing the descriptions, which are pure in the message.
 */
export class OfferView {
  private seqs: number[] = []
  private position = new Map<number, number>()
  private offered: readonly ContextNode[] = []
  private viewed: PolicyNode[] = []
  private readonly units = new ToolUnits()
  private readonly standing = new Map<string, number>()
  private readonly described = new Map<number, PolicyNode>()

  constructor(private readonly meter: RequestPricer) {}

  /**
   * @param nodes - the offered nodes, in surface order.
   * @returns their policy views, each tool-unit member's seq mapped to the unit's seqs, their index and seqs; all but
   *   `nodes` are live, valid until the next call.
   */
  of(nodes: readonly ContextNode[]): OfferedView {
    const kept = this.offered.length
    const extended = nodes.length >= kept && (kept === 0 || (nodes[0] === this.offered[0] && nodes[kept - 1] === this.offered[kept - 1]))
    if (!extended) {
      this.seqs = []
      this.position = new Map()
      this.viewed = []
      this.units.clear()
      this.standing.clear()
    }
    for (let at = this.seqs.length; at < nodes.length; at++) {
      const node = nodes[at] as ContextNode
      let view = this.described.get(node.seq)
      if (view === undefined) this.described.set(node.seq, view = describe(this.meter, node))
      this.viewed.push(view)
      if (view.standing !== undefined) this.standing.set(view.standing, view.seq)
      this.seqs.push(node.seq)
      this.position.set(node.seq, at)
      this.units.push(node.seq, node.message)
    }
    this.offered = nodes
    return { nodes: this.viewed, units: this.units.byMember, index: { position: this.position, standing: this.standing }, seqs: this.seqs }
  }

  /**
   * @param seq - an offered node's seq.
   * @returns its policy view.
   */
  view(seq: number): PolicyNode | undefined {
    return this.described.get(seq)
  }
}

/**
 * Whether the rest of the chain kept every offered seq, in order (the default result): nothing to narrow. The host's
 * result is frozen, whose elements V8 reads one by one several times slower than it copies them: it is copied first.
 */
function offersEverything(offered: ContextSelection, seqs: readonly number[]): boolean {
  if (offered.include.length !== seqs.length) return false
  const include = [...offered.include]
  for (let i = 0; i < include.length; i++) if (include[i] !== seqs[i]) return false
  return true
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
  const calibration = new UsageCalibration(services.meter)
  const view = new OfferView(services.meter)
  let state: PolicyState | undefined
  let last: PolicySelection | undefined
  const project = async (payload: ContextPayload, next: () => Promise<ContextSelection>): Promise<ContextSelection> => {
    const offered = await next()
    const contextWindow = await services.contextWindow(payload.signal)
    if (contextWindow === undefined) {
      throw new AgentTavernError('no-context-window', String(agent.id), `route ${agent.options.provider}/${agent.options.model} reports no context window, so the agent-managed budget cannot be derived`)
    }
    const events = logOf(agent.session)
    calibration.follow(agent.session.seq, seq => events[seq])
    const { nodes, units, index, seqs } = view.of(payload.nodes)
    const asked = payload.nodes.findLast(node => isUserSource(node.message.source))
    const query = asked === undefined ? [] : (view.view(asked.seq) as PolicyNode).terms
    last = selectContext({
      nodes,
      requiredSeqs: payload.requiredSeqs,
      units,
      query,
      headerTokens: services.meter.estimateHeader(requestEnvelope(payload.system, payload.tools)),
      contextWindow,
      calibration: calibrationFactor(calibration.sample),
      index,
    }, policy, state)
    state = last.state
    if (offersEverything(offered, seqs)) return { include: last.include, revision }
    const chosen = new Set(last.include)
    return { include: offered.include.filter(seq => chosen.has(seq)), revision }
  }
  return Object.assign(project, { last: () => last })
}

/**
 * The managed listener outside the plugin, for a host that mounts it itself or replays a log with it
 * (`dsh-seam simulate`): the policy of a raw AgentTavern config, validated as the plugin validates it.
 * @param agent - the agent; the listener reads `id`, `options` and its session's `seq` and `events`.
 * @param raw - an AgentTavern config (`character` and `policy` are read).
 * @param services - token meter and context-window lookup.
 * @returns the listener.
 * @throws {AgentTavernError} `invalid-config`.
 */
export function managedListener(agent: Agent, raw: unknown, services: ListenerServices): ManagedProjector {
  return managedProjector(agent, resolveConfig(raw).policy, services)
}
