/**
 * `dsh-seam`: rebuild and check the requests of a persisted DSH session log, and set up the seam's patches in a DSH
 * app. The command is `bin/dsh-seam.js` ({@link CLI_BIN}); {@link main} runs it in process, {@link analyzeLog} is its
 * check for programs, {@link planSetup} and {@link writeSetup} are `setup`'s two halves.
 * @module @dsh-seam/cli
 */

export { CLI_BIN } from './bin.ts'
export { analyzeLog, LogAnalyzer } from './analyze.ts'
export type { LogAnalysis, LogViolation, LogViolationCode, RequestSummary, TokenPricer } from './analyze.ts'
export { EXIT, main, PROGRESS_MIN_BYTES } from './cli.ts'
export type { CliIo } from './cli.ts'
export { meterPricer } from './pricer.ts'
export { CELL } from './report.ts'
export { DSH_PACKAGES, DSH_VERSION, isDshPackage } from './dsh-set.ts'
export { parsePnpmPatchName, PatchFormatError, patchPackageFile, toPatchPackage } from './patch-files.ts'
export type { PnpmPatch } from './patch-files.ts'
export { PATCH_PACKAGE_VERSION, planSetup, SetupError, setupReport, SHIPPED_PATCHES, writeSetup } from './setup.ts'
export type { PackageManager, PlannedFile, SetupErrorCode, SetupOptions, SetupPlan } from './setup.ts'
export { LISTENER_TIMEOUT_MS, loadPolicy, PolicyError } from './policy-host.ts'
export type { LoadedPolicy, PolicyErrorCode, PolicyOptions } from './policy-host.ts'
export { simulate } from './simulate.ts'
export type {
  ContextPolicy,
  PolicyFigures,
  PolicyHost,
  PolicyListener,
  PolicyPayload,
  RecallProbe,
  SimulatedRequest,
  Simulation,
} from './simulate.ts'
