/**
 * The `compaction` service on the basic engine, judging step pressure on the request `agent/context` projects.
 * @module @dsh-seam/compaction-effective-projection/engine
 */

import type { Context, Events } from '@deepseek-ai/cordis'
import type { Agent } from '@deepseek-ai/dsh-agent'
import type { CompactionResult, CompactionTrigger } from '@deepseek-ai/dsh-compaction'
import { toolPairingBalancedAfter, toolPairingBalancedBefore } from '@deepseek-ai/dsh-compaction'
import type { ResolvedCompactSpec } from '@deepseek-ai/dsh-compaction-basic'
import { BasicCompactionEngine } from '@deepseek-ai/dsh-compaction-basic'
import type { PrunedEntry } from '@deepseek-ai/dsh-compaction-tool-result-pruner'
import { assertNever } from '@deepseek-ai/dsh-llm'
import type { Session, SessionEvent } from '@deepseek-ai/dsh-session'
// Type-only: the `ctx.tokenMeter` Context declaration.
import type {} from '@deepseek-ai/dsh-token-meter'
import { conversationTarget, resolveTargetPolicy, targetCompactSpec } from './basic.ts'
import type { CalibrationSample } from './calibration.ts'
import { calibrationFactor, requestEnvelope, UsageCalibration } from './calibration.ts'
import type { ProjectionPolicy } from './config.ts'
import { ProjectionCompactionConfig, resolveProjectionConfig } from './config.ts'
import type { ProjectedRange } from './region.ts'
import { selectProjectedRange, sentAfterPrune, sentAfterReplacement } from './region.ts'

/** What `agent/context-selected` shows: the request about to be sent, as the host will send it. */
type SelectedContext = Parameters<Events['agent/context-selected']>[0]

/**
 * The required seqs a compaction keeps: all but the standing context the host says a compaction may still replace
 * (`replaceableSeqs`), which it compacts as the basic engine does, so a long session's instructions and skills do not
 * pin the surface for good.
 */
function compactionProtected(selection: Pick<SelectedContext, 'requiredSeqs' | 'replaceableSeqs'>): Set<number> {
  const kept = new Set(selection.requiredSeqs)
  for (const seq of selection.replaceableSeqs) kept.delete(seq)
  return kept
}

/** The selection the engine judged last for an agent, while the surface it was made on stands. */
interface Judged {
  readonly generation: number
  /** The seqs the request sent; undefined when it sent every node (`include` is then the host's own growing list). */
  readonly include: readonly number[] | undefined
  readonly requiredSeqs: readonly number[]
  readonly replaceableSeqs: readonly number[]
}

/** What a projected-pressure decision sees: the request about to be sent, priced, and the usage it is calibrated by. */
export interface ProjectedPressure {
  /** The agent whose request it is. */
  readonly agent: Agent
  /** The meter's price of the request: header plus the nodes it sends. */
  readonly estimatedTokens: number
  /** `estimatedTokens` times the calibration factor. */
  readonly calibratedTokens: number
  /** The newest provider usage and the meter's price of the request it answered, if any. */
  readonly sample: CalibrationSample | undefined
  /** The route's pressure and retention budgets, with its context window. */
  readonly spec: ResolvedCompactSpec
}

/**
 * A `BasicCompactionEngine` whose step pressure is the price of the request about to be sent: system, tools and the
 * nodes the projection includes, priced by `ctx.tokenMeter` and calibrated by the provider usage of the request that
 * usage answered. It judges the host's normalized selection of every request (`agent/context-selected`: the agent's
 * policy's selection, every node when it has none) and compacts only spans that request sends, never a node the
 * request needs to be answerable (the standing context the host lists as replaceable is compacted as the basic engine
 * compacts it), so the host selects again over the replaced surface before building the request. `measure: 'surface'` is the
 * basic engine unchanged.
 */
export class ProjectionAwareCompactionEngine extends BasicCompactionEngine {
  static override Config = ProjectionCompactionConfig

  /** The resolved `measure` and `pressure`. */
  readonly policy: ProjectionPolicy

  private readonly calibrations = new WeakMap<Session, UsageCalibration>()
  private readonly judged = new WeakMap<Agent, Judged>()

  /**
   * @param ctx - the plugin context.
   * @param config - `BasicCompactionConfig` plus `measure` and `pressure`.
   */
  constructor(ctx: Context, config: ProjectionCompactionConfig = {}) {
    const { policy, basic } = resolveProjectionConfig(config)
    super(ctx, basic)
    this.policy = policy
    // Every selection is kept for a context overflow of its request; pressure is judged on it when auto.
    if (policy.measure === 'projection') ctx.on('agent/context-selected', selection => this.judge(selection))
  }

  /**
   * Step pressure (`agent/pre-step`) is judged on the request the host selects (`agent/context-selected`) instead,
   * and suppressed by `pressure: 'overflow-only'`. A context overflow of a request sent with a `request/projection`
   * compacts within the nodes that request sent. Everything else is the basic engine's.
   * @param agent - the agent whose session is compacted.
   * @param trigger - step pressure or a provider-confirmed context overflow.
   * @param signal - the turn's cancellation signal.
   * @returns the compaction, or `null` when none ran.
   */
  override async compactIfNeeded(agent: Agent, trigger: CompactionTrigger, signal: AbortSignal): Promise<CompactionResult | null> {
    switch (trigger) {
      case 'pressure':
        if (this.policy.pressure === 'overflow-only' || this.policy.measure === 'projection') return null
        break
      case 'context-overflow':
        if (this.policy.measure === 'projection') {
          const relieved = await this.relieveProjectedOverflow(agent, signal)
          if (relieved !== undefined) return relieved
        }
        break
      /* v8 ignore next 2 -- closed-union exhaustiveness guard */
      default:
        assertNever(trigger, 'compaction trigger')
    }
    return super.compactIfNeeded(agent, trigger, signal)
  }

  /**
   * Judge the host's selection before it is sent. Every request is judged here, a request that sends the whole surface
   * too (then the surface plus the step's input): step pressure is measured on what the step sends, not on the surface
   * before it. The selection is kept for a context overflow of its request while the surface it was made on stands.
   */
  private async judge(selection: SelectedContext): Promise<void> {
    if (selection.signal.aborted) return
    const { agent, include, requiredSeqs, replaceableSeqs } = selection
    const { surface } = agent.session
    this.judged.delete(agent)
    const generation = surface.replaceGeneration
    if (this.config.auto && this.policy.pressure === 'auto') await this.warnOnFailure(() => this.relieveProjectedPressure(selection))
    // A selection the engine compacted under is stale: the host selects again over the new surface.
    if (surface.replaceGeneration === generation) {
      const sent = include.length === selection.nodes.length ? undefined : include
      this.judged.set(agent, { generation, include: sent, requiredSeqs, replaceableSeqs })
    }
  }

  private async relieveProjectedPressure(payload: SelectedContext): Promise<void> {
    const { agent, signal } = payload
    const { session } = agent
    let sent: ReadonlySet<number> = new Set(payload.include)
    const spec = await this.pressureSpec(agent, signal)
    if (spec === undefined) return
    const header = this.ctx.tokenMeter.estimateHeader(requestEnvelope(payload.system, payload.tools))
    const { sample } = this.follow(session)
    const factor = calibrationFactor(sample)
    const pressure = (): ProjectedPressure => {
      const estimatedTokens = this.projectedPressure(session, header, sent)
      return { agent, estimatedTokens, calibratedTokens: Math.ceil(estimatedTokens * factor), sample, spec }
    }
    let tokens = pressure()
    if (!this.pressureCompacts(tokens)) return
    const pruned = this.prune(session, sent)
    const required = sentAfterPrune(compactionProtected(payload), pruned)
    if (pruned.length > 0) {
      sent = sentAfterPrune(sent, pruned)
      tokens = pressure()
      if (!this.pressureCompacts(tokens)) return
    }
    for (let attempt = 0; attempt <= spec.compactionRetries; attempt++) {
      const range = this.projectedRange(session, sent, required, spec.retainTokens)
      if (range === null) {
        /* v8 ignore else -- after a compaction the summary precedes the retained tail, so a later attempt finds a range */
        if (attempt === 0) return
        /* v8 ignore next -- as above */
        break
      }
      const result = await this.compactRegion(range.start, range.end, agent, signal)
      this.ctx.logger.info(`compaction (projected pressure): shadowed ${result.shadowedSeqs.length} sent surface nodes (seqs ${range.start}-${range.end}, ~${result.shadowedTokenCount} tokens)`)
      sent = sentAfterReplacement(sent, result.shadowedSeqs, result.summarySeq + 1)
      tokens = pressure()
      if (!this.pressureCompacts(tokens)) return
    }
    throw new Error(`projected request still above threshold after ${spec.compactionRetries + 1} compaction attempts (${tokens.calibratedTokens} calibrated tokens >= threshold ${spec.thresholdTokens})`)
  }

  /**
   * Whether a projected request compacts, asked before its first compaction and again after each prune and
   * compaction. The engine's rule is the route's threshold against the calibrated price. It is a hook (the one this
   * change adds to the engine) because a deployment may anchor the decision on provider usage instead of the
   * heuristic, e.g. a curator that leaves alone a request the heuristic over-prices (the calibration factor never goes
   * below 1, so the engine's own rule cannot), without copying the projected pressure path.
   * @param pressure - the request's price, the usage it is calibrated by, and the route's budgets.
   * @returns true to compact.
   */
  protected pressureCompacts(pressure: ProjectedPressure): boolean {
    return pressure.calibratedTokens >= pressure.spec.thresholdTokens
  }

  /**
   * Compact within the nodes of the overflowing request: the selection the engine judged for it, while the surface it
   * was made on stands; undefined when the request sent every node or the engine did not see its selection.
   */
  private async relieveProjectedOverflow(agent: Agent, signal: AbortSignal): Promise<CompactionResult | null | undefined> {
    const { session } = agent
    const judged = this.judged.get(agent)
    this.judged.delete(agent)
    const stale = judged === undefined || judged.generation !== session.surface.replaceGeneration
    if (stale || judged.include === undefined) return undefined
    const included = new Set(judged.include)
    const pruned = this.prune(session, included)
    const sent = sentAfterPrune(included, pruned)
    const required = sentAfterPrune(compactionProtected(judged), pruned)
    const range = this.projectedRange(session, sent, required, 0)
    if (range === null) return null
    const result = await this.compactRegion(range.start, range.end, agent, signal)
    this.ctx.logger.info(`compaction (projected context overflow): shadowed ${result.shadowedSeqs.length} sent surface nodes (seqs ${range.start}-${range.end}, ~${result.shadowedTokenCount} tokens)`)
    return result
  }

  /**
   * The basic engine's optional model-free pass, run where it runs (once pressure qualifies, and before the span of an
   * overflow is chosen) when it rewrites only what the request sends: the pruner rewrites every oversized tool result
   * of the surface, so a request that leaves a tool result out is not pruned, and history the projection keeps
   * reversible stays verbatim.
   * @param session - the session.
   * @param sent - the seqs the request sends.
   * @returns the replacements; none without a `toolResultPruner` service or when a tool result is not sent.
   */
  private prune(session: Session, sent: ReadonlySet<number>): readonly PrunedEntry[] {
    const pruner = this.ctx.get('toolResultPruner')
    if (pruner === undefined) return []
    const { events } = session
    if (session.surface.nodes.some(seq => !sent.has(seq) && events[seq]?.type === 'tool/result')) return []
    return pruner.pruneSession(session).pruned
  }

  private async pressureSpec(agent: Agent, signal: AbortSignal): Promise<ResolvedCompactSpec | undefined> {
    const target = conversationTarget(agent)
    if (target === undefined) return undefined
    const { context } = await this.ctx.llm.resolveModelInfo(target.provider, target.model, signal)
    return targetCompactSpec(resolveTargetPolicy(this.config, target), context)
  }

  private projectedPressure(session: Session, header: number, sent: ReadonlySet<number>): number {
    let tokens = header
    for (const node of this.ctx.tokenMeter.measure(session).nodes) if (sent.has(node.seq)) tokens += node.tokens
    return tokens
  }

  private projectedRange(
    session: Session,
    sent: ReadonlySet<number>,
    required: ReadonlySet<number>,
    retainTokens: number,
  ): ProjectedRange | null {
    const { nodes } = this.ctx.tokenMeter.measure(session)
    const balanced = (cut: number): boolean => {
      /* v8 ignore else -- a cut after every node needs a selection that sends no measured node; the required set is one */
      if (cut < nodes.length) return toolPairingBalancedBefore(session, (nodes[cut] as { seq: number }).seq)
      /* v8 ignore next -- the cut after every node, as above */
      return nodes.length === 0 || toolPairingBalancedAfter(session, (nodes[cut - 1] as { seq: number }).seq)
    }
    return selectProjectedRange({ nodes, sent, required, retainTokens, balanced })
  }

  /**
   * Catch the session's calibration up with its log.
   * @returns the session's calibration.
   */
  private follow(session: Session): UsageCalibration {
    let calibration = this.calibrations.get(session)
    if (calibration === undefined) this.calibrations.set(session, calibration = new UsageCalibration(this.ctx.tokenMeter))
    const { events } = session
    calibration.follow(session.seq, (seq): SessionEvent | undefined => events[seq])
    return calibration
  }

  /** Pressure failures warn and the request is still sent, as the basic engine's step pressure does. */
  private async warnOnFailure(work: () => Promise<void>): Promise<void> {
    try {
      await work()
    } catch (error: unknown) {
      this.warnPressureFailure(error, 'projected pressure compaction failed', 'sending the request')
    }
  }
}
