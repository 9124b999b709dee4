/**
 * Pure core of the `agent/context` seam: surface nodes and tool units, the selection normalizer, the
 * `request/projection` encoding and fold, request replay from a log, and a JSONL log reader.
 * @module @dsh-context/agent-context
 */

export type { ContextNode, ContextSelection } from '@deepseek-ai/dsh-agent'
export type { RequestProjection } from '@deepseek-ai/dsh-session'
export { AgentContextError } from './errors.ts'
export type { AgentContextErrorCode } from './errors.ts'
export { appendedNodes, contextNodes, pendingRequiredSeqs, positionUnits, requiredSeqs, toolUnits } from './nodes.ts'
export type { NodesMark, PositionUnits } from './nodes.ts'
export { normalizeSelection } from './normalize.ts'
export type { NormalizeInput, NormalizedProjection } from './normalize.ts'
export { decodeInclude, encodeInclude, pendingProjection, projectionEvents, projectMessages, requestMessagesFromLog } from './projection.ts'
export type { LoggedSession, SurfaceState } from './projection.ts'
export { diffRequest, opensRequest, replayRequests, ReplayError, RequestReplay } from './replay.ts'
export type { ComparableRequest, ReplayedRequest, ReplayErrorCode } from './replay.ts'
export { readSessionLog, SessionLogError } from './jsonl.ts'
export type { SessionLog, SessionLogErrorCode } from './jsonl.ts'
