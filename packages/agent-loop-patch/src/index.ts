/**
 * Detection of the agent/context seam in `@deepseek-ai/dsh-agent-loop` 0.1.0-rc.8, for consumers that must fail
 * closed on a stock build: the capability check and the one-call guard. The host step itself ships
 * inside the patched loop, compiled from `@dsh-seam/agent-context`'s `host` module.
 * @module @dsh-seam/agent-loop-patch
 */

export { AgentContextSeamError, assertAgentContextSeam, hasAgentContextSeam } from './capability.ts'
export type { AgentContextSeamMissing } from './capability.ts'
