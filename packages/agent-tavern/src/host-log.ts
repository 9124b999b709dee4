/**
 * AgentTavern's one reader of what DSH 0.1.0-rc.8 keeps: the session's event log and the sources of its messages. Every
 * other module reads the log and message sources through these functions, so moving to DSH 0.2 (session format v4)
 * changes this module only (see the README, "On DSH 0.2").
 * @module @dsh-seam/agent-tavern/host-log
 */

import type { Agent } from '@deepseek-ai/dsh-agent'
import type { Message } from '@deepseek-ai/dsh-llm'
import type { Session, SessionEvent } from '@deepseek-ai/dsh-session'
import { standingSource } from '@dsh-seam/agent-context'

/** A message source as rc.8 writes it. */
type Source = Message['source']

/**
 * @param session - a live session.
 * @returns its durable event log, oldest first (rc.8: `session.events`).
 */
export function logOf(session: Session): readonly SessionEvent[] {
  return session.events
}

/**
 * @param source - a message source.
 * @returns the plugin id of a plugin-sourced message (rc.8: `{ kind: 'plugin', plugin }`), else undefined.
 */
export function pluginOf(source: Source): string | undefined {
  return source.kind === 'plugin' ? source.plugin : undefined
}

/**
 * @param source - a message source.
 * @returns whether the user typed it.
 */
export function isUserSource(source: Source): boolean {
  return source.kind === 'user'
}

/**
 * A plugin-sourced message source.
 * @param plugin - the plugin id.
 * @param form - how the host treats it.
 * @returns the source.
 */
export function pluginSource(plugin: string, form: 'instructions'): Source {
  return { kind: 'plugin', plugin, form }
}

/** Plugin context forms that carry story lines: chat imported from another log (`recall`) or relayed to this agent. */
const STORY_FORMS: ReadonlySet<unknown> = new Set(['recall', 'relay'])

/**
 * Whether a user-role message is a line of the story the user sees: typed by the user, or a plugin's message that is
 * of form `recall` or `relay` (imported or relayed chat); never standing context, instructions (reminders) or notices.
 * @param message - a user-role message.
 * @returns true for a story line.
 */
export function isStoryLine(message: Message): boolean {
  const { source } = message
  if (isUserSource(source)) return true
  if (pluginOf(source) === undefined || standingSource(message) !== undefined) return false
  return STORY_FORMS.has((source as { form?: unknown }).form)
}

/**
 * The route the agent's next request goes to: the newest logged request header's, else the agent's options.
 * @param agent - the agent.
 * @returns provider and model, '' when unknown.
 */
export function currentRoute(agent: Agent): { provider: string; model: string } {
  const routed = agent.session.requestHeader()?.config
  if (routed !== undefined && routed.provider.length > 0 && routed.model.length > 0) return { provider: routed.provider, model: routed.model }
  return { provider: agent.options.provider ?? '', model: agent.options.model ?? '' }
}
