/**
 * `dsh-seam`: rebuild and check the requests of a persisted DSH session log. The command is `bin/dsh-seam.js`
 * ({@link CLI_BIN}); {@link main} runs it in process, {@link analyzeLog} is its check for programs.
 * @module @dsh-seam/cli
 */

export { CLI_BIN } from './bin.ts'
export { analyzeLog, LogAnalyzer } from './analyze.ts'
export type { LogAnalysis, LogViolation, LogViolationCode, RequestSummary, TokenPricer } from './analyze.ts'
export { EXIT, main, PROGRESS_MIN_BYTES } from './cli.ts'
export type { CliIo } from './cli.ts'
export { meterPricer } from './pricer.ts'
export { CELL } from './report.ts'
export { loadPolicy, PolicyError, simulate } from './simulate.ts'
export type {
  ContextPolicy,
  LoadedPolicy,
  PolicyErrorCode,
  PolicyFigures,
  PolicyHost,
  PolicyListener,
  PolicyPayload,
  RecallProbe,
  SimulatedRequest,
  Simulation,
} from './simulate.ts'
