/**
 * Pure core of the `agent/context` seam: surface nodes and the host's rules, the selection normalizer, the
 * `request/projection` encoding and its one checker, request replay from a log, and a JSONL log reader.
 * @module @dsh-seam/agent-context
 */

export type { ContextNode, ContextSelection } from '@deepseek-ai/dsh-agent'
export type { RequestProjection } from '@deepseek-ai/dsh-session'
export { checkProjection } from './check.ts'
export type { ProjectionViolation, RequestAt } from './check.ts'
export { AgentContextError, describeBounded, describeValue, isValidRevision, MAX_REVISION_LENGTH, ReplayError } from './errors.ts'
export type { AgentContextErrorCode, ProjectionViolationCode, ReplayErrorCode, ReplayPosition } from './errors.ts'
export {
  appendedNodes,
  contextNodes,
  isUserInput,
  NodeIndex,
  openTurnStart,
  pendingRequiredSeqs,
  sessionEventAt,
  snapshotSource,
  toolUnits,
} from './nodes.ts'
export type { NodesMark } from './nodes.ts'
export { normalizeOffer, normalizeSelection } from './normalize.ts'
export type { NormalizeInput, NormalizedProjection } from './normalize.ts'
export { encodeInclude, pendingProjection, pendingProjectionOf, projectionEvents, requestMessagesFromLog } from './projection.ts'
export type { LoggedSession } from './projection.ts'
export { diffRequest, opensRequest, replayRequests, RequestReplay } from './replay.ts'
export type { ComparableRequest, ReplayedRequest } from './replay.ts'
export { firstRequestDivergence } from './received.ts'
export type { RequestDivergence, RequestDivergenceCode } from './received.ts'
export { surfaceMark } from './surface.ts'
export { readSessionLog, SessionLogError } from './jsonl.ts'
export type { SessionLog, SessionLogErrorCode } from './jsonl.ts'
