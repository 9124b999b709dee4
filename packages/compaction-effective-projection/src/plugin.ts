/**
 * The plugin entry on npm: the engine, plus `measure: 'auto'`, so one deployment row boots on a patched and on a stock
 * 0.1.0-rc.8 set. DSH's own engine has no `'auto'`: there the seam is always present.
 * @module @dsh-seam/compaction-effective-projection/plugin
 */

import type { Context } from '@deepseek-ai/cordis'
import z from '@deepseek-ai/schemastery'
import { hasAgentContextSeam } from '@dsh-seam/agent-loop-patch'
import type { PressureMeasure, ProjectionCompactionConfig } from './config.ts'
import { ProjectionCompactionConfig as EngineConfig, ProjectionCompactionConfigError } from './config.ts'
import { ProjectionAwareCompactionEngine } from './engine.ts'

/** What `measure` may be set to: a {@link PressureMeasure}, or `'auto'` for whichever the running loop can serve. */
export type MeasureSetting =
  | PressureMeasure
  /** `'projection'` on a loop with the `agent/context` seam, `'surface'` on a loop without it. */
  | 'auto'

/** The plugin config: the engine's, with `measure` also taking `'auto'` (the default stays `'projection'`). */
export interface ProjectionCompactionSettings extends Omit<ProjectionCompactionConfig, 'measure'> {
  measure?: MeasureSetting
}

const [basicSchema, policySchema] = EngineConfig.list as [z<unknown>, z<unknown>]

/** The plugin's schemastery schema: the engine's, with `measure` widened by `'auto'`. */
export const ProjectionCompactionSettings: z<ProjectionCompactionSettings> = z.intersect([
  basicSchema,
  z.object({
    ...policySchema.dict,
    measure: z.union(['projection', 'surface', 'auto'] as const)
      .description('Measure step pressure on the projected request (projection), on the full surface (surface), or on the projection where the loop has the agent/context seam and on the surface elsewhere (auto).'),
  }),
])

/**
 * Resolve `measure` for the loop `ctx` runs.
 * @param config - the plugin config.
 * @param seam - whether the running loop has the `agent/context` seam.
 * @returns the engine's config: `'auto'` resolved, every other key unchanged.
 * @throws {ProjectionCompactionConfigError} for `measure: 'projection'` on a loop without the seam, where pressure
 *   would never be judged.
 */
export function resolveMeasure(config: ProjectionCompactionSettings, seam: boolean): ProjectionCompactionConfig {
  const { measure = 'projection', ...rest } = config
  if (measure === 'auto') return { ...rest, measure: seam ? 'projection' : 'surface' }
  if (measure === 'projection' && !seam) {
    throw new ProjectionCompactionConfigError('measure', measure, 'needs the agent/context seam (the patched @deepseek-ai/* set); use "surface" or "auto" on a stock one')
  }
  return { ...rest, measure }
}

/** The engine class without its `Config`, which the plugin replaces by a wider schema. */
const Engine: Omit<typeof ProjectionAwareCompactionEngine, 'Config'> & (new (ctx: Context, config: ProjectionCompactionConfig) => ProjectionAwareCompactionEngine) = ProjectionAwareCompactionEngine

/** {@link ProjectionAwareCompactionEngine} taking {@link ProjectionCompactionSettings}. */
export class ProjectionAwareCompactionPlugin extends Engine {
  static Config = ProjectionCompactionSettings

  /**
   * @param ctx - the plugin context.
   * @param config - the engine's config, `measure: 'auto'` allowed.
   * @throws {ProjectionCompactionConfigError} for a bad value, or `measure: 'projection'` on a stock loop.
   */
  constructor(ctx: Context, config: ProjectionCompactionSettings = {}) {
    super(ctx, resolveMeasure(config, hasAgentContextSeam(ctx)))
  }
}
