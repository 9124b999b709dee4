/**
 * Runtime detection of the seam through what it adds: the app's dsh-session knows the `request/projection` event type.
 * @module @dsh-context/agent-loop-patch/capability
 */

import type { Context } from '@deepseek-ai/cordis'

/** The part of the app's `ctx.sessions` the probe uses: a session built outside the store. */
interface ProbeStore {
  prepare(id: string): { append(type: string, data: unknown, options: { ignorable: true }): unknown }
}

const answers = new WeakMap<object, boolean>()
let probes = 0

/**
 * Whether the app in `ctx` runs DSH with the `agent/context` seam. The seam's dsh-session lists `request/projection`
 * in `KNOWN_SESSION_EVENT_TYPES`; the app's own session module answers, not this package's import of it: a session
 * prepared by `ctx.sessions` (outside the store, so nothing is published) refuses to mark a known type ignorable, and a
 * stock build, which does not know the type, accepts it. The answer is kept per session store.
 * @param ctx - any context of the app.
 * @returns false on a stock DSH build, or without an agent loop or a session store.
 */
export function hasAgentContextSeam(ctx: Context): boolean {
  const sessions = ctx.get('sessions') as ProbeStore | undefined
  if (ctx.get('agentLoop') === undefined || sessions === undefined) return false
  let known = answers.get(sessions)
  if (known === undefined) {
    const probe = sessions.prepare(`agent-context-seam-probe-${++probes}`)
    try {
      probe.append('request/projection', {}, { ignorable: true })
      known = false
    } catch (error: unknown) {
      known = (error as { code?: unknown } | null)?.code === 'IGNORABLE_KNOWN_TYPE'
    }
    answers.set(sessions, known)
  }
  return known
}
