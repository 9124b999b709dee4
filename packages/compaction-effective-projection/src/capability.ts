/**
 * What a plugin may ask of the `compaction` service it sees: whether it judges projections, how it summarizes, and a
 * reference hint for its compactions. Each reads the service's `policy` or `reference`, so any other compaction service
 * answers as the basic engine.
 * @module @dsh-seam/compaction-effective-projection/capability
 */

import type { Context } from '@deepseek-ai/cordis'
import type { Agent } from '@deepseek-ai/dsh-agent'

/**
 * What the `compaction` service visible from `ctx` replaces a compacted span with.
 * @param ctx - any context of the app, or of the realm whose compaction service is asked about.
 * @returns this package's engine's `summary`; `'model'` for any other compaction service (DSH's basic engine asks a
 *   model), undefined for none.
 */
export function compactionSummary(ctx: Context): 'model' | 'reference' | undefined {
  const compaction = ctx.get('compaction') as { reference?: { summary?: unknown } } | undefined
  if (compaction === undefined) return undefined
  return compaction.reference?.summary === 'reference' ? 'reference' : 'model'
}

/**
 * Whether the `compaction` service visible from `ctx` judges pressure on the `agent/context` projection: true only
 * for this package's engine with `measure: 'projection'`.
 * @param ctx - any context of the app, or of the realm whose compaction service is asked about.
 * @returns false for the basic engine, `measure: 'surface'`, or no compaction service.
 */
export function hasProjectionAwareCompaction(ctx: Context): boolean {
  const compaction = ctx.get('compaction') as { policy?: { measure?: unknown } } | undefined
  return compaction?.policy?.measure === 'projection'
}

/**
 * Offer the `compaction` service visible from `ctx` a reference hint for `agent`'s compactions: how that agent fetches
 * a compacted span (see `ProjectionAwareCompactionEngine.offerReferenceHint`). The engine uses it for `summary:
 * 'reference'` when its own `referenceHint` is empty; any other compaction service ignores it.
 * @param ctx - the context in which the compaction service serves the agent (an agent plugin's own context).
 * @param agent - the agent.
 * @param hint - the hint; `{start}` and `{end}` become the span's seqs.
 * @returns a function withdrawing the offer; a no-op when the service takes no hints.
 */
export function offerReferenceHint(ctx: Context, agent: Agent, hint: string): () => void {
  const compaction = ctx.get('compaction') as { offerReferenceHint?: (agent: Agent, hint: string) => () => void } | undefined
  if (typeof compaction?.offerReferenceHint !== 'function') return () => {}
  return compaction.offerReferenceHint(agent, hint)
}
