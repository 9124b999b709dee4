/**
 * AgentTavern's `agent-managed` policy as a policy module: the listener AgentTavern mounts, built from the demo's
 * character config and context window, with the demo story's recall probes (each probe turn refers to the turn that
 * planted its fact, and names the fact its answer holds). The listener reads the log through `agent.session` (usage calibration), never the live agent.
 * @module @dsh-seam/context-policies/agent-tavern
 */

import { managedListener } from '@dsh-seam/agent-tavern'
import { DEMO_CONTEXT_WINDOW, story, tavernConfig } from '@dsh-seam/agent-tavern-demo'
import type { PolicyHost, PolicyListener, RecallProbe } from '@dsh-seam/cli'

/** The policy's name. */
export const name = 'agent-tavern'

/**
 * @param host - the agent and DSH's token meter.
 * @returns AgentTavern's managed listener on the demo's window.
 */
export function createListener({ agent, meter }: PolicyHost): PolicyListener {
  return managedListener(agent, tavernConfig('en'), { meter, contextWindow: () => Promise.resolve(DEMO_CONTEXT_WINDOW) })
}

/**
 * @param turns - the recorded session's turns.
 * @returns the English demo story's recall probes for a session of that length, each with the fact its answer names.
 */
export function probes(turns: number): RecallProbe[] {
  return story({ turns }).flatMap((turn, i) => turn.kind === 'probe' ? [{ turn: i + 1, refersTo: [turn.plantTurn], fact: turn.expect }] : [])
}
