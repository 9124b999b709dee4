/**
 * The basic engine's target-pressure resolution, which dsh-compaction-basic keeps in its internal `config` module and
 * does not export. The package's compiled copy of the engine (its `./projection` entry on the patched set) imports that
 * module in place of this one; this package's own engine runs only on a stock set, measuring the surface, and never
 * reaches these.
 * @module @dsh-seam/compaction-effective-projection/basic
 */

import type { Agent } from '@deepseek-ai/dsh-agent'
import type { ResolvedCompactSpec, ResolvedConfig, ResolvedTargetPolicy } from '@deepseek-ai/dsh-compaction-basic'
import type { LlmCallConfig, LlmModelContext } from '@deepseek-ai/dsh-llm'

function unavailable(): never {
  throw new Error('compaction-basic: projected pressure needs the patched @deepseek-ai/dsh-compaction-basic (its ./projection entry)')
}

/** The conversation's routed target, else the agent's configured one. */
export const conversationTarget: (agent: Agent) => Pick<LlmCallConfig, 'provider' | 'model'> | undefined = unavailable
/** The merged policy for one exact target. */
export const resolveTargetPolicy: (config: ResolvedConfig, target: Pick<LlmCallConfig, 'provider' | 'model'>) => ResolvedTargetPolicy = unavailable
/** A target policy scaled to the capacity its adapter model reports. */
export const targetCompactSpec: (policy: ResolvedTargetPolicy, context: LlmModelContext | undefined) => ResolvedCompactSpec = unavailable
