/**
 * The plugin entry on npm: the engine, plus two settings DSH's own engine does not have. `measure: 'auto'` lets one
 * deployment row boot on a patched and on a stock 0.1.0-rc.8 set (inside DSH the seam is always present), and
 * `summary: 'reference'` replaces a compacted span with a fixed paragraph instead of a model summary (AgentTavern makes
 * no hidden model call).
 * @module @dsh-seam/compaction-effective-projection/plugin
 */

import type { Context } from '@deepseek-ai/cordis'
import type { Agent } from '@deepseek-ai/dsh-agent'
import type { CompactionResult } from '@deepseek-ai/dsh-compaction'
import z from '@deepseek-ai/schemastery'
import { hasAgentContextSeam } from '@dsh-seam/agent-loop-patch'
import type { PressureMeasure, ProjectionCompactionConfig } from './config.ts'
import { ProjectionCompactionConfig as EngineConfig } from './config.ts'
import type { ProjectionAwareCompactionEngine } from './engine.ts'
import type { SummarizationInput } from './reference.ts'
import { referenceText, spanOf } from './reference.ts'

/** A config value of this plugin that is not allowed. */
export class ProjectionCompactionConfigError extends Error {
  override readonly name = 'ProjectionCompactionConfigError'

  /**
   * @param key - the config key.
   * @param value - the rejected value.
   * @param requirement - what the value fails, e.g. `must be one of "auto", "overflow-only"`.
   */
  constructor(readonly key: string, readonly value: unknown, requirement: string) {
    super(`ProjectionCompactionConfig: ${key} (${JSON.stringify(value)}) ${requirement}`)
  }
}

/** What `measure` may be set to: a {@link PressureMeasure}, or `'auto'` for whichever the running loop can serve. */
export type MeasureSetting =
  | PressureMeasure
  /** `'projection'` on a loop with the `agent/context` seam, `'surface'` on a loop without it. */
  | 'auto'

/** What replaces a compacted span. */
export type SummaryKind =
  /** A summary the basic engine asks a model for (DSH's default). */
  | 'model'
  /** No model call: a fixed text naming the span's seqs and how to fetch it ({@link referenceText}). */
  | 'reference'

/** The plugin config: the engine's, with `measure: 'auto'`, `summary` and `referenceHint`. */
export interface ProjectionCompactionSettings extends Omit<ProjectionCompactionConfig, 'measure'> {
  /** Defaults to `'projection'`. */
  measure?: MeasureSetting
  /** Defaults to `'model'`. */
  summary?: SummaryKind
  /** With `summary: 'reference'`: how to fetch the span, appended to the reference; `{start}` and `{end}` become its seqs. */
  referenceHint?: string
}

/** The resolved `summary` and `referenceHint` of one engine. */
export interface ReferencePolicy {
  readonly summary: SummaryKind
  readonly referenceHint: string
}

const [basicSchema, policySchema] = EngineConfig.list as [z<unknown>, z<unknown>]

/** The plugin's schemastery schema: the engine's, with `measure` widened by `'auto'`, plus `summary` and `referenceHint`. */
export const ProjectionCompactionSettings: z<ProjectionCompactionSettings> = z.intersect([
  basicSchema,
  z.object({
    ...policySchema.dict,
    measure: z.union(['projection', 'surface', 'auto'] as const)
      .description('Measure step pressure on the projected request (projection), on the full surface (surface), or on the projection where the loop has the agent/context seam and on the surface elsewhere (auto).'),
    summary: z.union(['model', 'reference'] as const)
      .description('Replace a compacted span with a model summary (model) or, with no model call, a reference naming its seqs (reference).'),
    referenceHint: z.string().description('With summary: reference, how to fetch the span; {start} and {end} become its seqs.'),
  }),
])

/**
 * Split the plugin config into the engine's, `measure` resolved for the loop, and the reference policy.
 * @param config - the plugin config.
 * @param seam - whether the running set can measure projections: the loop's `agent/context` seam and
 *   dsh-compaction-basic's projection-aware engine.
 * @returns the engine's config (`'auto'` resolved, every other engine key unchanged) and `summary`/`referenceHint`.
 * @throws {ProjectionCompactionConfigError} for `measure: 'projection'` on a loop without the seam, where pressure
 *   would never be judged, or a `summary` or `referenceHint` that is not allowed.
 */
export function resolveSettings(config: ProjectionCompactionSettings, seam: boolean): { engine: ProjectionCompactionConfig; reference: ReferencePolicy } {
  const { measure = 'projection', summary = 'model', referenceHint = '', ...rest } = config
  if (summary !== 'model' && summary !== 'reference') throw new ProjectionCompactionConfigError('summary', summary, 'must be one of "model", "reference"')
  if (typeof referenceHint !== 'string') throw new ProjectionCompactionConfigError('referenceHint', referenceHint, 'must be a string')
  const reference = { summary, referenceHint }
  if (measure === 'auto') return { engine: { ...rest, measure: seam ? 'projection' : 'surface' }, reference }
  if (measure === 'projection' && !seam) {
    throw new ProjectionCompactionConfigError('measure', measure, 'needs the agent/context seam and the projection-aware engine (the patched @deepseek-ai/* set); use "surface" or "auto" on a stock one')
  }
  return { engine: { ...rest, measure }, reference }
}

/**
 * The engine: dsh-compaction-basic's own (its `./projection` entry) on the patched set; on a stock set, where that entry
 * is missing, this package's source of it, which serves `measure: 'surface'` only (its projected path reads the target
 * resolution only the patched package has).
 */
async function loadEngine(): Promise<{ engine: typeof ProjectionAwareCompactionEngine; shipped: boolean }> {
  try {
    // Compiled from ./engine.ts: the same class, which TypeScript cannot equate (private members).
    const { ProjectionAwareCompactionEngine: engine } = await import('@deepseek-ai/dsh-compaction-basic/projection')
    return { engine: engine as unknown as typeof ProjectionAwareCompactionEngine, shipped: true }
  } catch (error: unknown) {
    if ((error as { code?: unknown }).code !== 'ERR_PACKAGE_PATH_NOT_EXPORTED') throw error
    return { engine: (await import('./engine.ts')).ProjectionAwareCompactionEngine, shipped: false }
  }
}

const loaded = await loadEngine()

/** The engine class without its `Config`, which the plugin replaces by a wider schema. */
const Engine: Omit<typeof ProjectionAwareCompactionEngine, 'Config'> & (new (ctx: Context, config: ProjectionCompactionConfig) => ProjectionAwareCompactionEngine) = loaded.engine

/** {@link ProjectionAwareCompactionEngine} taking {@link ProjectionCompactionSettings}. */
export class ProjectionAwareCompactionPlugin extends Engine {
  static Config = ProjectionCompactionSettings

  /** The resolved `summary` and `referenceHint`. */
  readonly reference: ReferencePolicy

  /** The span each agent's running compaction replaces, for a `summary: 'reference'` text. */
  private readonly spans = new WeakMap<Agent, { start: number; end: number }>()
  /** The reference hints agents' plugins offered ({@link offerReferenceHint}), newest last. */
  private readonly agentHints = new WeakMap<Agent, string[]>()

  /**
   * @param ctx - the plugin context.
   * @param config - the engine's config, `measure: 'auto'`, `summary` and `referenceHint` allowed.
   * @throws {ProjectionCompactionConfigError} for a bad value, or `measure: 'projection'` on a stock loop or a stock
   *   dsh-compaction-basic.
   */
  constructor(ctx: Context, config: ProjectionCompactionSettings = {}) {
    const { engine, reference } = resolveSettings(config, loaded.shipped && hasAgentContextSeam(ctx))
    super(ctx, engine)
    this.reference = reference
  }

  /**
   * Let a plugin of `agent` say how that agent fetches a compacted span, for the `summary: 'reference'` text of its
   * compactions when the engine's own `referenceHint` is empty (a plugin whose tools read history names them). The
   * newest offer still in force is used.
   * @param agent - the agent whose compactions the hint is for.
   * @param hint - the hint; `{start}` and `{end}` become the span's seqs.
   * @returns a function withdrawing the offer (the plugin's dispose).
   */
  offerReferenceHint(agent: Agent, hint: string): () => void {
    this.agentHints.set(agent, [...this.agentHints.get(agent) ?? [], hint])
    return () => {
      const current = this.agentHints.get(agent) ?? []
      const at = current.lastIndexOf(hint)
      if (at >= 0) this.agentHints.set(agent, current.toSpliced(at, 1))
    }
  }

  /**
   * Every compaction of a span the engine chooses goes through here (pressure, overflow); the span is kept for
   * {@link summarize}. (`compactNow` chooses its span inside the basic engine; {@link summarize} finds it by its messages.)
   * @param start - inclusive first surface-node seq.
   * @param end - inclusive last surface-node seq.
   * @param agent - owner of the session.
   * @param signal - cancellation.
   * @returns the compaction.
   */
  override async compactRegion(start: number, end: number, agent: Agent, signal?: AbortSignal): Promise<CompactionResult> {
    this.spans.set(agent, { start, end })
    try {
      return await super.compactRegion(start, end, agent, signal)
    } finally {
      this.spans.delete(agent)
    }
  }

  /**
   * What replaces a span of `agent`'s session: the engine's `summary`. A subclass (a curator) may decide per agent.
   * @param _agent - owner of the session.
   * @returns `'model'` or `'reference'`.
   */
  protected summaryFor(_agent: Agent): SummaryKind {
    return this.reference.summary
  }

  /**
   * `summary: 'model'` ({@link summaryFor}): the basic engine's model call. `summary: 'reference'`: no model call, the span's
   * {@link referenceText} with the engine's `referenceHint`, else the hint the agent's plugin offered.
   * @param input - the span's messages and the conversation's system prompt and tools.
   * @param agent - owner of the session.
   * @param signal - cancellation.
   * @returns the summary blocks and their envelope.
   */
  protected override async summarize(input: SummarizationInput, agent: Agent, signal?: AbortSignal): ReturnType<ProjectionAwareCompactionEngine['summarize']> {
    const span = this.summaryFor(agent) === 'model' ? undefined : this.spans.get(agent) ?? spanOf(agent.session, input.messages)
    if (span === undefined) return super.summarize(input, agent, signal)
    const hint = this.reference.referenceHint === '' ? this.agentHints.get(agent)?.at(-1) ?? '' : this.reference.referenceHint
    return { summary: [{ type: 'text' as const, text: referenceText({ ...span, messages: input.messages.length }, hint) }], provider: 'reference', model: 'reference' }
  }
}
