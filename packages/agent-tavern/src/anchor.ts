/**
 * AgentTavern's reminders: an opening brief on the first turn and an anchor every `anchorEvery` turns, appended at
 * step 1 to the end of the batch the step enters (after DSH's runtime context), so they are logged plugin-sourced user
 * messages and never touch a cached prefix. Their sources mark them as standing instructions (`form: 'instructions'`),
 * and the managed policy keeps the newest of each.
 * @module @dsh-seam/agent-tavern/anchor
 */

import type { Context } from '@deepseek-ai/cordis'
import type { Agent } from '@deepseek-ai/dsh-agent'
import type { Message, UserMessage } from '@deepseek-ai/dsh-llm'
import type { SessionEvent } from '@deepseek-ai/dsh-session'
import { isUserSource, logOf, pluginOf, pluginSource } from './host-log.ts'

/** Source plugins of the two reminders. */
export const REMINDER_SOURCES = {
  opening: '@dsh-seam/agent-tavern/opening',
  anchor: '@dsh-seam/agent-tavern/anchor',
} as const

/** Which reminder. */
export type ReminderKind = keyof typeof REMINDER_SOURCES

const REMINDER_TEXT: Record<ReminderKind, string> = {
  opening: [
    '<tavern-opening>',
    'Opening brief (a system note, not story content; do not narrate, quote or mention it):',
    'Only the recent part of this story is in your context, and no memories are loaded yet. Before relying on a name, place or earlier event, look it up: tavern_lore_search for world info, memory_search for kept facts, tavern_history_search and tavern_history_read for what was said. Then continue the scene.',
    '</tavern-opening>',
  ].join('\n'),
  anchor: [
    '<tavern-anchor>',
    'Periodic reminder (a system note, not story content; do not narrate, quote or mention it):',
    'Keep new durable facts with memory_write (correct them with memory_update, drop stale ones with memory_forget). Recover unclear continuity with tavern_history_search or memory_search instead of inventing it. When nothing applies, simply continue the scene.',
    '</tavern-anchor>',
  ].join('\n'),
}

/**
 * Which reminder a step gets: none after step 1; the opening brief when the log holds no user-sourced message yet
 * (the session's first user turn); an anchor on every `anchorEvery`-th turn.
 * @param position - the step's turn and step.
 * @param anchorEvery - the anchor cadence in turns; 0 turns reminders off.
 * @param events - the session log before the step.
 * @returns the reminder, if any.
 */
export function reminderDue(position: { readonly turn: number; readonly step: number }, anchorEvery: number, events: readonly SessionEvent[]): ReminderKind | undefined {
  const { turn, step } = position
  if (anchorEvery === 0 || step !== 1 || turn < 1) return undefined
  if (!events.some(event => event.type === 'user/message' && isUserSource(event.data.source))) return 'opening'
  return turn % anchorEvery === 0 ? 'anchor' : undefined
}

/**
 * @param message - a message.
 * @returns the reminder it is, if it is one.
 */
export function reminderOf(message: Pick<Message, 'source'>): ReminderKind | undefined {
  const plugin = pluginOf(message.source)
  return plugin === REMINDER_SOURCES.opening ? 'opening' : plugin === REMINDER_SOURCES.anchor ? 'anchor' : undefined
}

/**
 * A reminder message.
 * @param kind - which reminder.
 * @param turn - the turn it is for (part of its id).
 * @returns a plugin-sourced user message with the `instructions` form.
 */
export function reminderMessage(kind: ReminderKind, turn: number): UserMessage {
  return {
    id: `agent-tavern-${kind}-${turn}` as UserMessage['id'],
    role: 'user',
    content: [{ type: 'text', text: REMINDER_TEXT[kind] }],
    source: pluginSource(REMINDER_SOURCES[kind], 'instructions'),
  }
}

/**
 * Register the reminders on an agent's context: a prepended `agent/pre-step` listener that appends the due reminder
 * to the batch the rest of the chain decided to enter.
 * @param ctx - the agent's context.
 * @param agent - the agent.
 * @param anchorEvery - the anchor cadence; 0 registers nothing.
 */
export function registerReminders(ctx: Context, agent: Agent, anchorEvery: number): void {
  if (anchorEvery === 0) return
  ctx.on('agent/pre-step', async (payload, next) => {
    const decision = await next()
    if (decision.kind !== 'enter' || decision.messages.length === 0 || payload.signal.aborted) return decision
    const kind = reminderDue(payload, anchorEvery, logOf(agent.session))
    return kind === undefined ? decision : { kind: 'enter', messages: [...decision.messages, reminderMessage(kind, payload.turn)] }
  }, { prepend: true })
}
