/**
 * Projection-aware compaction for DSH 0.1.0-rc.8: DSH's `compaction` service on the basic engine, judging step
 * pressure on the request `agent/context` projects, with its runtime capability check and the usage calibration other consumers price requests with.
 * @module @dsh-seam/compaction-effective-projection
 */

/** @public the cordis plugin entry (`name: '@dsh-seam/compaction-effective-projection'` in presets and `--patch`). */
export { ProjectionAwareCompactionEngine as default } from './engine.ts'
export { ProjectionAwareCompactionEngine } from './engine.ts'
export { compactionSummary, hasProjectionAwareCompaction, offerReferenceHint } from './capability.ts'
export { ProjectionCompactionConfig, ProjectionCompactionConfigError } from './config.ts'
export type { MeasureSetting, PressureMeasure, PressurePolicy, ProjectionPolicy, SummaryKind } from './config.ts'
export { calibrationFactor, priceRequest, promptTokens, requestEnvelope, UsageCalibration } from './calibration.ts'
export type { CalibrationSample, RequestPricer } from './calibration.ts'
