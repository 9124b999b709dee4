/**
 * Core of the `agent/context` seam for the offline tools (`dsh-seam`), tests and benchmarks: surface nodes and the
 * host's rules, the selection normalizer, the `request/projection` decoder, the host's policy read back, request replay
 * from a log, a JSONL log reader, and the turn of a log seq for policies that select by turn. The host step itself
 * (`host.ts`) is not exported: the patched loop carries it compiled. A DSH plugin reads the `agent/context` payload
 * and DSH's own exports, not this package.
 * @module @dsh-seam/agent-context
 */

export type { ContextNode, ContextSelection } from '@deepseek-ai/dsh-agent'
export type { RequestProjection } from '@deepseek-ai/dsh-session'
export { decodeProjection } from './check.ts'
export type { ProjectionViolation, RequestAt, SurfaceNodes } from './check.ts'
export { ReplayError } from './check.ts'
export type { ProjectionViolationCode, ReplayErrorCode, ReplayPosition } from './check.ts'
export { appendedNodes, contextNodes, sessionEventAt } from './nodes.ts'
export type { NodesMark } from './nodes.ts'
export { isUserInput, NodeIndex, standingSource } from './rules.ts'
export { policyFinding } from './policy.ts'
export type { PolicyFinding, PolicyFindingCode } from './policy.ts'
export { AgentContextError, describeFailure, normalizeOffer, normalizeSelection } from './host.ts'
export type { AgentContextErrorCode, NormalizeInput, NormalizedProjection } from './host.ts'
export { pendingProjection, pendingProjectionOf, projectionEvents, requestMessagesFromLog } from './projection.ts'
export type { LoggedSession } from './projection.ts'
export { diffRequest, opensRequest, replayRequests, RequestReplay } from './replay.ts'
export { SurfaceFold } from './surface.ts'
export type { NodesChange } from './surface.ts'
export type { ComparableRequest, ReplayedRequest } from './replay.ts'
export { firstRequestDivergence } from './received.ts'
export type { RequestDivergence, RequestDivergenceCode } from './received.ts'
export { readSessionLog, SessionLogError } from './jsonl.ts'
export { TurnIndex } from './turns.ts'
export type { SessionLog, SessionLogErrorCode } from './jsonl.ts'
