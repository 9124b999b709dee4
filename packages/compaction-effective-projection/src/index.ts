/**
 * Projection-aware compaction for DSH 0.1.0-rc.8: DSH's `compaction` service on the basic engine, judging step
 * pressure on the request `agent/context` projects, with its runtime capability flag and pure cores.
 * @module @dsh-context/compaction-effective-projection
 */

export { ProjectionAwareCompactionEngine, ProjectionAwareCompactionEngine as default } from './engine.ts'
export { PROJECTION_AWARE_COMPACTION, hasProjectionAwareCompaction } from './capability.ts'
export { ProjectionCompactionConfig, ProjectionCompactionConfigError, resolveProjectionConfig } from './config.ts'
export type { PressureMeasure, PressurePolicy, ProjectionPolicy } from './config.ts'
export { selectProjectedRange, sentAfterReplacement } from './region.ts'
export type { PricedNode, ProjectedRange, ProjectedRegionInput } from './region.ts'
export { calibrationFactor, priceRequest, promptTokens, requestEnvelope, UsageCalibration } from './calibration.ts'
export type { CalibrationSample, RequestPricer } from './calibration.ts'
