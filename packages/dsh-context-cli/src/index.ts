/**
 * `dsh-context`: rebuild and check the requests of a persisted DSH session log. The command is `bin/dsh-context.js`;
 * these exports are its parts for programs and tests.
 * @module @dsh-context/cli
 */

export { CLI_BIN } from './bin.ts'
export { analyzeLog } from './analyze.ts'
export type { LogAnalysis, LogViolation, LogViolationCode, RequestSummary, TokenPricer } from './analyze.ts'
export { checkProjection } from './check.ts'
export type { ProjectionOffer, ProjectionViolation, ProjectionViolationCode } from './check.ts'
export { EXIT, main, PROGRESS_MIN_EVENTS } from './cli.ts'
export type { CliIo } from './cli.ts'
export { inspectJson, inspectTable } from './format.ts'
export { meterPricer } from './pricer.ts'
