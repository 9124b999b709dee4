/**
 * Configuration of projection-aware compaction: the basic engine's `BasicCompactionConfig` plus where pressure is measured and
 * whether it triggers compaction at all.
 * @module @dsh-seam/compaction-effective-projection/config
 */

import z from '@deepseek-ai/schemastery'
import type { BasicCompactionConfig } from '@deepseek-ai/dsh-compaction-basic'
import { BasicCompactionEngine } from '@deepseek-ai/dsh-compaction-basic'

/** What step pressure is measured on. */
export type PressureMeasure =
  /** The request about to be sent, after `agent/context`: system, tools and the included nodes. */
  | 'projection'
  /** The full surface before the step, as the basic engine does. */
  | 'surface'

/** Whether pressure compacts at all. */
export type PressurePolicy =
  /** Pressure over the threshold compacts. */
  | 'auto'
  /** Only a provider-confirmed context overflow compacts (then retries). */
  | 'overflow-only'

/** Plugin config: every `BasicCompactionConfig` key, plus `measure` and `pressure`. */
export interface ProjectionCompactionConfig extends BasicCompactionConfig {
  /** Defaults to `'projection'`. */
  measure?: PressureMeasure
  /** Defaults to `'auto'`. */
  pressure?: PressurePolicy
}

/** The resolved `measure` and `pressure` of one engine. */
export interface ProjectionPolicy {
  readonly measure: PressureMeasure
  readonly pressure: PressurePolicy
}

/** The plugin's schemastery schema: the basic engine's schema intersected with `measure` and `pressure`. */
export const ProjectionCompactionConfig: z<ProjectionCompactionConfig> = z.intersect([
  BasicCompactionEngine.Config,
  z.object({
    measure: z.union(['projection', 'surface'] as const)
      .description('Measure step pressure on the projected request (projection) or on the full surface (surface).'),
    pressure: z.union(['auto', 'overflow-only'] as const)
      .description('Compact on pressure (auto), or only after a provider context overflow (overflow-only).'),
  }),
])

/**
 * Split a plugin config into this package's policy, with its defaults applied, and the config the basic engine
 * validates.
 * @param config - the plugin config.
 * @returns the policy and the remaining `BasicCompactionConfig`.
 */
export function resolveProjectionConfig(config: ProjectionCompactionConfig): { policy: ProjectionPolicy; basic: BasicCompactionConfig } {
  const { measure = 'projection', pressure = 'auto', ...basic } = config
  return {
    policy: { measure, pressure },
    basic,
  }
}
