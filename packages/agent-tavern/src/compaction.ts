/**
 * AgentTavern's compaction curator (`@dsh-seam/agent-tavern/compaction`): the `compaction` service of AgentTavern's
 * bundle, a subclass of projection-aware compaction that decides, per agent, what replaces a compacted span and
 * whether step pressure compacts at all. The only place AgentTavern lets a model summarize its story.
 *
 * - **Per-agent summary mode.** A session AgentTavern serves in `agent-managed` gets the reference (no model call,
 *   AgentTavern's hint names the history tools), unless its config sets `curator.summarizer`; then, and in
 *   `dsh-native`, a span becomes a roleplay checkpoint written by the model ({@link ROLEPLAY_CHECKPOINT}). Every
 *   other agent gets the engine's own `summary`.
 * - **Usage-anchored gate** (AgentTavern proposal 0006): projected pressure is anchored on the provider's usage of the
 *   newest request, `projected = usage + (price now − price of that request)`; at or over `usageThresholdRatio` × the
 *   route's window it compacts, below it nothing compacts, heuristic overestimates included. Without a usage sample
 *   the engine's own rule decides, warned once per session and reason.
 * @module @dsh-seam/agent-tavern/compaction
 */

import type { Context } from '@deepseek-ai/cordis'
import type { Agent } from '@deepseek-ai/dsh-agent'
import type { CompactionResult, CompactionTrigger } from '@deepseek-ai/dsh-compaction'
import { BlockAssembler, createUserMessage } from '@deepseek-ai/dsh-llm'
import type { ContentBlock } from '@deepseek-ai/dsh-llm'
import type { Session } from '@deepseek-ai/dsh-session'
import z from '@deepseek-ai/schemastery'
import { ProjectionAwareCompactionEngine, ProjectionCompactionConfig } from '@dsh-seam/compaction-effective-projection'
import type { CalibrationSample, ProjectedPressure, SummaryKind } from '@dsh-seam/compaction-effective-projection'
import { TAVERN_PLUGIN } from './anchor.ts'
import { curationOf } from './curation.ts'
import { AgentTavernError } from './errors.ts'

/** The instruction a roleplay checkpoint is written to: the story's state, not a coding assistant's task list. */
export const ROLEPLAY_CHECKPOINT = [
  'Stop the story here and write a checkpoint of the roleplay ABOVE, so the same character can continue it with nothing essential lost.',
  'Use exactly these sections, in this order, as short bullet points; write "(none)" under a section with nothing in it:',
  '## Story so far — the events in order, turning points, what changed for the user\'s character',
  '## Characters — each recurring character: who they are, their tie to the user\'s character, where they are, their state, what they promised or owe',
  '## World canon — places, factions, objects and history the story or its lore established (never invent any)',
  '## Open threads — unresolved situations, open questions, hints not yet paid off',
  '## Current scene — time, place, who is present, what is happening right now',
  '## Memory maintenance — what was written with the memory or variable tools, and which facts above still need writing',
  '## User instructions — style, pace, boundaries and anything the user asked to keep',
  'Write in the language of the conversation; keep names, numbers and quoted words exactly; record only what happened.',
  'Do not mention this request or that anything was condensed, and call no tool. If the conversation holds an earlier checkpoint, merge it: keep what is still true, drop what is stale.',
].join('\n')

/** The curator's config: projection-aware compaction's, plus the gate's share of the window. */
export interface CuratorSettings extends ProjectionCompactionConfig {
  /** Projected usage at or over this share of the route's window compacts; below it nothing does. Default 0.7. */
  usageThresholdRatio?: number
}

/** What the usage-anchored gate decides for one projected request. */
export type UsageGateDecision =
  /** Projected usage reaches the threshold: compact. */
  | { readonly kind: 'compact'; readonly projectedTokens: number }
  /** Projected usage is below the threshold: do not compact, whatever the heuristic says. */
  | { readonly kind: 'block'; readonly projectedTokens: number }
  /** Nothing to anchor on: the engine's own rule decides. */
  | { readonly kind: 'passthrough'; readonly reason: string }

/**
 * The usage-anchored gate of AgentTavern proposal 0006, on a request the engine projects.
 * @param pressure - the request's price now, the newest usage sample and the price of the request it answered.
 * @param ratio - the share of the context window at which the request compacts.
 * @returns compact or block with the projected tokens, or passthrough with why nothing anchors the decision.
 */
export function usageGate(pressure: { readonly estimatedTokens: number; readonly sample: CalibrationSample | undefined; readonly contextWindow: number }, ratio: number): UsageGateDecision {
  const { estimatedTokens, sample, contextWindow } = pressure
  if (!(contextWindow > 0)) return { kind: 'passthrough', reason: 'the route reports no context window' }
  if (sample === undefined) return { kind: 'passthrough', reason: 'no provider usage sample yet' }
  const projectedTokens = Math.max(0, sample.promptTokens + estimatedTokens - sample.estimatedTokens)
  return { kind: projectedTokens >= ratio * contextWindow ? 'compact' : 'block', projectedTokens }
}

const [basicSchema, settingsSchema] = ProjectionCompactionConfig.list as [z<unknown>, z<unknown>]

/** The schemastery schema of {@link CuratorSettings}. */
const CuratorConfig: z<CuratorSettings> = z.intersect([
  basicSchema,
  z.object({
    ...settingsSchema.dict,
    usageThresholdRatio: z.number().description('Projected provider usage, as a share of the window, at which pressure compacts (0, 1].'),
  }),
])

/**
 * The `compaction` service of AgentTavern's bundle: projection-aware compaction with a per-agent summary mode and the
 * usage-anchored gate. `compactNow` and overflow recovery summarize the same way; the gate concerns step pressure.
 */
export default class TavernCompactionCurator extends ProjectionAwareCompactionEngine {
  static override Config = CuratorConfig

  /** The gate's share of the window. */
  readonly usageThresholdRatio: number

  /** The gate's reasons already warned about, per session. */
  private readonly warned = new WeakMap<Session, Set<string>>()

  /**
   * @param ctx - the plugin context.
   * @param config - projection-aware compaction's config and `usageThresholdRatio`.
   * @throws {AgentTavernError} `invalid-config` for a ratio outside (0, 1].
   */
  constructor(ctx: Context, config: CuratorSettings = {}) {
    const { usageThresholdRatio = 0.7, ...settings } = config
    if (!(usageThresholdRatio > 0 && usageThresholdRatio <= 1)) {
      throw new AgentTavernError('invalid-config', undefined, `curator usageThresholdRatio ${usageThresholdRatio} is not in (0, 1]`)
    }
    super(ctx, settings)
    this.usageThresholdRatio = usageThresholdRatio
  }

  /**
   * Step pressure measured on the whole surface (a loop without the `agent/context` seam) has no projected request to
   * anchor: the basic engine decides, warned once per session.
   */
  override async compactIfNeeded(agent: Agent, trigger: CompactionTrigger, signal: AbortSignal): Promise<CompactionResult | null> {
    if (trigger === 'pressure' && this.policy.measure === 'surface') this.warnOnce(agent, 'pressure is measured on the surface (no agent/context seam)')
    return super.compactIfNeeded(agent, trigger, signal)
  }

  /** The usage-anchored gate; without a sample, the engine's rule, warned once per session and reason. */
  protected override pressureCompacts(pressure: ProjectedPressure): boolean {
    const decision = usageGate({ ...pressure, contextWindow: pressure.spec.contextWindow }, this.usageThresholdRatio)
    if (decision.kind !== 'passthrough') return decision.kind === 'compact'
    this.warnOnce(pressure.agent, decision.reason)
    return super.pressureCompacts(pressure)
  }

  /** AgentTavern's sessions: the reference in `agent-managed` without `curator.summarizer`, else a model checkpoint. */
  protected override summaryFor(agent: Agent): SummaryKind {
    const curation = curationOf(agent)
    if (curation === undefined) return super.summaryFor(agent)
    return curation.mode() === 'agent-managed' && !curation.summarizer ? 'reference' : 'model'
  }

  /** A model summary of an AgentTavern session is a roleplay checkpoint; everything else is the engine's. */
  protected override async summarize(...args: Parameters<ProjectionAwareCompactionEngine['summarize']>): ReturnType<ProjectionAwareCompactionEngine['summarize']> {
    const [input, agent, signal] = args
    if (curationOf(agent) === undefined || this.summaryFor(agent) !== 'model') return super.summarize(...args)
    const configured = this.config.summarizationProvider.length === 0 ? undefined : { provider: this.config.summarizationProvider, model: this.config.summarizationModel }
    const target = configured ?? agent.session.requestHeader()?.config ?? (agent.options.provider === undefined || agent.options.model === undefined ? undefined : { provider: agent.options.provider, model: agent.options.model })
    if (target === undefined) throw new Error(`no provider/model for the roleplay checkpoint of session ${String(agent.id)}: route one request or set summarizationProvider and summarizationModel`)
    const { maxTokens } = this.config
    const assembler = new BlockAssembler()
    const instruction = createUserMessage({ content: [{ type: 'text', text: ROLEPLAY_CHECKPOINT }], source: { kind: 'plugin', plugin: TAVERN_PLUGIN } })
    const request = {
      provider: target.provider,
      model: target.model,
      messages: [...input.messages, instruction],
      ...input.system === undefined ? {} : { system: input.system },
      ...input.tools === undefined ? {} : { tools: [...input.tools] },
      maxTokens,
      sessionId: agent.session.id,
      purpose: 'compaction' as const,
      ...signal === undefined ? {} : { signal },
    }
    for await (const chunk of this.ctx.llm.stream(request)) assembler.push(chunk)
    const { finish } = assembler
    if (finish.kind === 'error' || finish.kind === 'aborted') throw new Error(`roleplay checkpoint failed: ${finish.failure?.message ?? finish.kind}`)
    if (finish.kind === 'max-tokens') throw new Error(`roleplay checkpoint truncated at ${maxTokens} tokens`)
    const rawOutput = assembler.blocks()
    const summary = rawOutput.filter((block): block is Extract<ContentBlock, { type: 'text' }> => block.type === 'text')
    if (!summary.some(block => block.text.trim().length > 0)) throw new Error('roleplay checkpoint has no text')
    return { summary, rawOutput, llmStreamCall: true, provider: target.provider, model: target.model, maxTokens, ...assembler.usage === undefined ? {} : { usage: assembler.usage } }
  }

  private warnOnce(agent: Agent, reason: string): void {
    let reasons = this.warned.get(agent.session)
    if (reasons === undefined) this.warned.set(agent.session, reasons = new Set())
    if (reasons.has(reason)) return
    reasons.add(reason)
    this.ctx.logger('agent-tavern').warn(`usage gate of session ${String(agent.id)} unanchored (${reason}): the engine's heuristic decides pressure without the provider's usage`)
  }
}

