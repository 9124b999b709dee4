/**
 * The agent/context seam for `@deepseek-ai/dsh-agent-loop` 0.1.0-rc.8: the host step the patched loop calls, and
 * the runtime capability check consumers use to fail closed on a stock build.
 * @module @dsh-seam/agent-loop-patch
 */

export { projectRequestMessages } from './host.ts'
export type { ProjectionRequest } from './host.ts'
export { AgentContextSeamError, assertAgentContextSeam, hasAgentContextSeam } from './capability.ts'
export type { AgentContextSeamMissing } from './capability.ts'
export { hasContextListener } from './listeners.ts'
