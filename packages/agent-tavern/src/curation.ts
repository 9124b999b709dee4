/**
 * What AgentTavern's compaction curator needs to know of each agent AgentTavern serves: its mode as it runs now, and
 * whether its config lets a model summarize it in `agent-managed` (`curator.summarizer`). Mounting AgentTavern enrolls
 * the agent; disposing the mount withdraws it.
 * @module @dsh-seam/agent-tavern/curation
 */

import type { Agent } from '@deepseek-ai/dsh-agent'
import type { ContextMode } from './mode.ts'

/** One served agent, as the curator sees it. */
export interface Curation {
  /** The agent's mode now. */
  mode(): ContextMode
  /** `curator.summarizer`: a model may summarize the agent's story in `agent-managed`. */
  readonly summarizer: boolean
}

const enrolled = new WeakMap<Agent, Curation>()

/**
 * Enroll an agent AgentTavern serves.
 * @param agent - the agent.
 * @param curation - its mode and summarizer setting.
 * @returns the withdrawal (the mount's dispose).
 */
export function enrollCuration(agent: Agent, curation: Curation): () => void {
  enrolled.set(agent, curation)
  return () => {
    if (enrolled.get(agent) === curation) enrolled.delete(agent)
  }
}

/**
 * @param agent - any agent.
 * @returns how the curator treats it, or undefined when AgentTavern does not serve it.
 */
export function curationOf(agent: Agent): Curation | undefined {
  return enrolled.get(agent)
}
