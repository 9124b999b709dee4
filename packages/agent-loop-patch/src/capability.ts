/**
 * Runtime detection of the seam through what it adds: the app's dsh-session knows the `request/projection` event type.
 * @module @dsh-seam/agent-loop-patch/capability
 */

import type { Context } from '@deepseek-ai/cordis'

/** The part of the app's `ctx.sessions` the probe uses: a session built outside the store. */
interface ProbeStore {
  prepare(id: string): { append(type: string, data: unknown): unknown }
}

/** How the seam's `Session.append` refuses a `request/projection` whose data is not a projection. */
const SHAPE_REFUSAL = 'session event "request/projection" is not '

const answers = new WeakMap<object, boolean>()
let probes = 0

/** What {@link assertAgentContextSeam} found missing. */
export type AgentContextSeamMissing =
  /** `ctx` has no `agentLoop` service: nothing would dispatch `agent/context`. */
  | 'agent-loop'
  /** `ctx` has no `sessions` service to ask. */
  | 'session-store'
  /** The app's dsh-session does not know `request/projection`: a stock DSH build. */
  | 'request-projection'

/** The app runs DSH without the `agent/context` seam, so an `agent/context` listener would never run. */
export class AgentContextSeamError extends Error {
  override readonly name = 'AgentContextSeamError'

  /**
   * @param missing - what the app lacks.
   * @param plugin - the plugin that needs the seam, when it named itself.
   */
  constructor(readonly missing: AgentContextSeamMissing, readonly plugin: string | undefined) {
    super(`${plugin ?? 'this plugin'} needs the agent/context seam, and this app has ${MISSING[missing]}; an agent/context listener would never run (install the patched @deepseek-ai/* 0.1.0-rc.8 set)`)
  }
}

const MISSING: Record<AgentContextSeamMissing, string> = {
  'agent-loop': 'no agentLoop service',
  'session-store': 'no sessions service',
  'request-projection': 'a stock DSH build (its dsh-session does not know the request/projection event)',
}

/** What the app lacks for the seam, or undefined when it has it; the store's answer is kept. */
function seamMissing(ctx: Context): AgentContextSeamMissing | undefined {
  if (ctx.get('agentLoop') === undefined) return 'agent-loop'
  const sessions = ctx.get('sessions') as ProbeStore | undefined
  if (sessions === undefined) return 'session-store'
  let known = answers.get(sessions)
  if (known === undefined) {
    const probe = sessions.prepare(`agent-context-seam-probe-${++probes}`)
    try {
      probe.append('request/projection', {})
      known = false
    } catch (error: unknown) {
      known = error instanceof Error && error.message.startsWith(SHAPE_REFUSAL)
    }
    answers.set(sessions, known)
  }
  return known ? undefined : 'request-projection'
}

/**
 * Whether the app in `ctx` runs DSH with the `agent/context` seam. The seam's dsh-session lists `request/projection`
 * in `KNOWN_SESSION_EVENT_TYPES` and checks its data on append; the app's own session module answers, not this
 * package's import of it: a session prepared by `ctx.sessions` (outside the store, so nothing is published) refuses a
 * `request/projection` whose data is not a projection before its log changes, and a stock build, which does not know
 * the type, appends it. The answer is kept per session store.
 * @param ctx - any context of the app.
 * @returns false on a stock DSH build, or without an agent loop or a session store.
 */
export function hasAgentContextSeam(ctx: Context): boolean {
  return seamMissing(ctx) === undefined
}

/**
 * Fail loud where an `agent/context` listener would silently never run: call it in a plugin's `apply` before
 * registering one. On a stock build `ctx.on('agent/context', ...)` registers without complaint and is never
 * dispatched.
 * @param ctx - the plugin's context.
 * @param plugin - the plugin's name, for the message.
 * @throws {AgentContextSeamError} naming what the app lacks.
 */
export function assertAgentContextSeam(ctx: Context, plugin?: string): void {
  const missing = seamMissing(ctx)
  if (missing !== undefined) throw new AgentContextSeamError(missing, plugin)
}
