/**
 * Projection-aware compaction for DSH 0.1.0-rc.8: DSH's `compaction` service on the basic engine, judging step
 * pressure on the request `agent/context` projects, with its runtime capability check and the usage calibration other consumers price requests with.
 * @module @dsh-seam/compaction-effective-projection
 */

/** @public the cordis plugin entry (`name: '@dsh-seam/compaction-effective-projection'` in presets and `--patch`). */
export { ProjectionAwareCompactionPlugin as default, ProjectionAwareCompactionPlugin as ProjectionAwareCompactionEngine } from './plugin.ts'
export { compactionSummary, hasProjectionAwareCompaction, offerReferenceHint } from './capability.ts'
export { ProjectionCompactionConfigError } from './plugin.ts'
export type { ProjectedPressure } from './engine.ts'
export type { PressureMeasure, PressurePolicy, ProjectionPolicy } from './config.ts'
export { ProjectionCompactionSettings as ProjectionCompactionConfig } from './plugin.ts'
export type { MeasureSetting, ReferencePolicy, SummaryKind } from './plugin.ts'
export { calibrationFactor, priceRequest, promptTokens, requestEnvelope, UsageCalibration } from './calibration.ts'
export type { CalibrationSample, RequestPricer } from './calibration.ts'
