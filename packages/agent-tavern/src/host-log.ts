/**
 * AgentTavern's one reader and writer of what DSH keeps: the session's event log, the sources of its messages and
 * where the context mode is recorded. Every other module goes through these functions, so the session format is
 * switched here only: `rc.8` (DSH 0.1.0-rc.8: `{kind: 'plugin', plugin}` sources) or `v4` (DSH 0.2 session format
 * v4: producer-owned `plugin:<name>` source kinds). Sources of either shape are read in both, so a log read unmigrated
 * still decodes. In neither is the mode a session event: both hosts' resume refuses an event type they do not know,
 * so the mode is recorded beside the session, in its binding.
 * @module @dsh-seam/agent-tavern/host-log
 */

import type { Agent } from '@deepseek-ai/dsh-agent'
import type { Message } from '@deepseek-ai/dsh-llm'
import type { Session, SessionEvent } from '@deepseek-ai/dsh-session'

/** A message source as DSH writes it. */
type Source = Message['source']

/** The session format AgentTavern writes: DSH 0.1.0-rc.8's, or DSH 0.2's format v4. */
export type SessionFormat = 'rc.8' | 'v4'

/** Every session format. */
export const SESSION_FORMATS: readonly SessionFormat[] = ['rc.8', 'v4']

/**
 * @param session - a live session.
 * @returns its durable event log, oldest first (rc.8: `session.events`).
 */
export function logOf(session: Session): readonly SessionEvent[] {
  return session.events
}

/** The v4 source-kind prefix of a plugin's messages. */
const PLUGIN_KIND = 'plugin:'

/**
 * @param source - a message source.
 * @returns the plugin id of a plugin-sourced message: rc.8's `{kind: 'plugin', plugin}` or v4's `{kind: 'plugin:<id>'}`;
 *   else undefined.
 */
export function pluginOf(source: Source): string | undefined {
  if (source.kind === 'plugin') return source.plugin
  const kind: string = source.kind
  return kind.startsWith(PLUGIN_KIND) ? kind.slice(PLUGIN_KIND.length) : undefined
}

/**
 * @param source - a message source.
 * @returns its declared form (`instructions`, `snapshot`, the real app's `tavern-anchor`, `history`, …), if any.
 */
export function formOf(source: Source): string | undefined {
  const { form } = source as { readonly form?: unknown }
  return typeof form === 'string' ? form : undefined
}

/**
 * @param source - a message source.
 * @returns whether the user typed it.
 */
export function isUserSource(source: Source): boolean {
  return source.kind === 'user'
}

/**
 * @param message - a message.
 * @returns whether it is user-role input (the user's, a plugin's, a snapshot), not a tool result or the model's reply.
 */
export function isUserInput(message: Message): boolean {
  return message.role === 'user' && message.content.every(block => block.type !== 'tool-result')
}

/** Context forms that stay in force while on the surface: their producers show them once and check the surface. */
const STANDING_FORMS: ReadonlySet<string | undefined> = new Set(['instructions', 'catalog', 'snapshot'])

/**
 * The producer of standing context: a message its producer declares of form `instructions`, `catalog` or `snapshot`.
 * @param message - a message.
 * @returns the producer key (`plugin:<id>` for a plugin, else the source kind), or undefined for any other message.
 */
export function standingProducer(message: Message): string | undefined {
  const { source } = message
  if (!STANDING_FORMS.has(formOf(source))) return undefined
  const plugin = pluginOf(source)
  return plugin === undefined ? source.kind : `${PLUGIN_KIND}${plugin}`
}

/**
 * A plugin-sourced message source in the session format.
 * @param format - the session format.
 * @param plugin - the plugin id.
 * @param fields - `form` and the fields it carries (a snapshot's `sections`, a reminder's `turn`).
 * @returns the source.
 */
export function pluginSource(format: SessionFormat, plugin: string, fields: { readonly form: string } & Record<string, unknown>): Source {
  return (format === 'v4' ? { kind: `${PLUGIN_KIND}${plugin}`, ...fields } : { kind: 'plugin', plugin, ...fields }) as Source
}

/**
 * Plugin forms that carry story lines: chat imported from another log (DSH's `recall`, the real app's `history` and
 * `greeting`) or relayed to this agent (`relay`).
 */
const STORY_FORMS: ReadonlySet<string | undefined> = new Set(['recall', 'relay', 'history', 'greeting'])

/**
 * Whether a user-role message is a line of the story the user sees: typed by the user, or a plugin's message of a
 * story form (imported or relayed chat); never standing context, reminders or notices.
 * @param message - a user-role message.
 * @returns true for a story line.
 */
export function isStoryLine(message: Message): boolean {
  const { source } = message
  if (isUserSource(source)) return true
  if (pluginOf(source) === undefined || standingProducer(message) !== undefined) return false
  return STORY_FORMS.has(formOf(source))
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
