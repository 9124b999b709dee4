/**
 * AgentTavern's reminders as the real app writes them (LingyeSoul/dsh-tavern `packages/plugin/src/agent-tavern/
 * anchor.ts`): an opening brief on the session's first real user turn and an anchor every `anchorEvery` turns,
 * plugin `dsh-tavern`, forms `tavern-opening` and `tavern-anchor`, the turn in the source. They are appended at step 1
 * to the end of the batch the step enters (after DSH's runtime context), so they are logged and never touch a cached
 * prefix, and a same-turn guard keeps a turn from getting a second one (a retried step, or the real app's own listener
 * mounted beside this one). The managed policy keeps the newest of each kind and never forgets at one.
 * @module @dsh-seam/agent-tavern/anchor
 */

import type { Context } from '@deepseek-ai/cordis'
import type { Agent } from '@deepseek-ai/dsh-agent'
import type { Message, UserMessage } from '@deepseek-ai/dsh-llm'
import type { SessionEvent } from '@deepseek-ai/dsh-session'
import type { SessionFormat } from './host-log.ts'
import { formOf, isUserSource, logOf, pluginOf, pluginSource } from './host-log.ts'

/** The plugin id the real app's messages carry. */
export const TAVERN_PLUGIN = 'dsh-tavern'

/** The source form of each reminder. */
const REMINDER_FORMS = {
  opening: 'tavern-opening',
  anchor: 'tavern-anchor',
} as const

/** Which reminder. */
export type ReminderKind = keyof typeof REMINDER_FORMS

/** The plugin ids this package's reminders carried before they took the real app's shape; still read in old logs. */
const LEGACY_SOURCES: Readonly<Record<string, ReminderKind>> = {
  '@dsh-seam/agent-tavern/opening': 'opening',
  '@dsh-seam/agent-tavern/anchor': 'anchor',
}

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
 * @param message - a message.
 * @returns the reminder it is, if it is one: the real app's (`dsh-tavern`, `tavern-opening` / `tavern-anchor`, in
 *   either session format) or this package's older ids.
 */
export function reminderOf(message: Pick<Message, 'source'>): ReminderKind | undefined {
  const plugin = pluginOf(message.source)
  if (plugin === undefined) return undefined
  if (plugin !== TAVERN_PLUGIN) return LEGACY_SOURCES[plugin]
  const form = formOf(message.source)
  return form === REMINDER_FORMS.opening ? 'opening' : form === REMINDER_FORMS.anchor ? 'anchor' : undefined
}

/**
 * The turn of the newest reminder in a log (the real app's `latestReminderTurn`).
 * @param events - a session log.
 * @returns its source's `turn`, else the turn it was logged in; 0 when there is none.
 */
export function latestReminderTurn(events: readonly SessionEvent[]): number {
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i] as SessionEvent
    if (event.type !== 'user/message' || reminderOf(event.data) === undefined) continue
    const { turn } = event.data.source as { readonly turn?: unknown }
    if (typeof turn === 'number') return turn
    const start = events.findLast(found => found.seq < event.seq && found.type === 'turn/start')
    return start?.type === 'turn/start' ? start.data.turn : 0
  }
  return 0
}

/**
 * Which reminder a step gets: none after step 1, none when the turn already has one (in the log, or in the batch
 * another listener decided); the opening brief while the log holds no user-typed message (imported history and
 * reminders are plugin-sourced); an anchor on every `anchorEvery`-th turn.
 * @param position - the step's turn and step.
 * @param anchorEvery - the anchor cadence in turns; 0 turns reminders off.
 * @param events - the session log before the step.
 * @param batch - the messages the step enters.
 * @returns the reminder, if any.
 */
export function reminderDue(position: { readonly turn: number; readonly step: number }, anchorEvery: number, events: readonly SessionEvent[], batch: readonly Pick<Message, 'source'>[] = []): ReminderKind | undefined {
  const { turn, step } = position
  if (anchorEvery === 0 || step !== 1 || turn < 1) return undefined
  if (latestReminderTurn(events) >= turn || batch.some(message => reminderOf(message) !== undefined)) return undefined
  if (!events.some(event => event.type === 'user/message' && isUserSource(event.data.source))) return 'opening'
  return turn % anchorEvery === 0 ? 'anchor' : undefined
}

/**
 * A reminder message in the real app's shape.
 * @param kind - which reminder.
 * @param turn - the turn it is for (in its source, and part of its id).
 * @param format - the session format.
 * @returns a `dsh-tavern`-sourced user message.
 */
export function reminderMessage(kind: ReminderKind, turn: number, format: SessionFormat = 'rc.8'): UserMessage {
  return {
    id: `agent-tavern-${kind}-${turn}` as UserMessage['id'],
    role: 'user',
    content: [{ type: 'text', text: REMINDER_TEXT[kind] }],
    source: pluginSource(format, TAVERN_PLUGIN, { form: REMINDER_FORMS[kind], turn }),
  }
}

/**
 * Register the reminders on an agent's context: a prepended `agent/pre-step` listener that appends the due reminder
 * to the batch the rest of the chain decided to enter.
 * @param ctx - the agent's context.
 * @param agent - the agent.
 * @param anchorEvery - the anchor cadence; 0 registers nothing.
 * @param format - the session format.
 */
export function registerReminders(ctx: Context, agent: Agent, anchorEvery: number, format: SessionFormat): void {
  if (anchorEvery === 0) return
  ctx.on('agent/pre-step', async (payload, next) => {
    const decision = await next()
    if (decision.kind !== 'enter' || decision.messages.length === 0 || payload.signal.aborted) return decision
    const kind = reminderDue(payload, anchorEvery, logOf(agent.session), decision.messages)
    return kind === undefined ? decision : { kind: 'enter', messages: [...decision.messages, reminderMessage(kind, payload.turn, format)] }
  }, { prepend: true })
}
