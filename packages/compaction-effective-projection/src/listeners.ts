/**
 * Whether an agent's requests are projected: some `agent/context` listener admits it.
 * @module @dsh-seam/compaction-effective-projection/listeners
 */

import type { Agent } from '@deepseek-ai/dsh-agent'
import { hasContextListener } from '@dsh-seam/agent-loop-patch'

/**
 * Whether the host will project the agent's next request, so step pressure is judged on that request
 * (`agent/context-selected`) rather than on the surface before the step.
 * @param agent - the agent whose requests are asked about.
 * @returns true when an `agent/context` listener would run for the agent's next request.
 */
export function hasProjectedRequests(agent: Agent): boolean {
  return hasContextListener(agent)
}
