/**
 * The AgentTavern cordis plugin. Mounted on one agent's context (`agent.ctx.plugin(AgentTavern, config)`, in
 * `createAgent` or `resume`'s `setup`, or as a row of an agent preset), it binds the agent's session to AgentTavern and
 * registers, in that agent's scope only: the character as the persona section, the kernel contract section, the
 * tools, the reminders, the assets preloaded once at activation, and, while the session's mode is `agent-managed`, the
 * `agent/context` listener.
 * @module @dsh-seam/agent-tavern/plugin
 */

import type { Context } from '@deepseek-ai/cordis'
import type { Agent } from '@deepseek-ai/dsh-agent'
import type { UserMessage } from '@deepseek-ai/dsh-llm'
import { compactionSummary, offerReferenceHint } from '@dsh-seam/compaction-effective-projection'
import { PERSONA_ORDER, PERSONA_SECTION } from '@deepseek-ai/dsh-system-prompt'
import type {} from '@deepseek-ai/dsh-token-meter'
import { registerReminders, TAVERN_PLUGIN } from './anchor.ts'
import TavernCompactionCurator from './compaction.ts'
import { enrollCuration } from './curation.ts'
import type { TavernBindings } from './binding.ts'
import { tavernBindings } from './binding.ts'
import { assertModeAvailable } from './capabilities.ts'
import type { Config as TavernConfig } from './config.ts'
import { Config as ConfigSchema, resolveConfig, TAVERN_REFERENCE_HINT } from './config.ts'
import { AgentTavernError, TavernArchitectureConflictError } from './errors.ts'
import { currentRoute, logOf, pluginOf, pluginSource } from './host-log.ts'
import { managedProjector } from './listener.ts'
import type { ManagedProjector } from './listener.ts'
import { contentText, transcript } from './log.ts'
import { loreContext, loreTriggeredBy } from './lore.ts'
import { activeMemories, currentScene } from './memory.ts'
import type { ContextMode, ModeRefusal } from './mode.ts'
import { assertContextMode } from './mode.ts'
import { budgetFor } from './policy.ts'
import { tavernTools } from './tools.ts'

/** Plugin name. */
export const name = 'agent-tavern'

/** Services the plugin uses. */
export const inject = ['systemPrompt', 'tools', 'tokenMeter', 'llm']

/** Config schema. */
export const Config = ConfigSchema

/** Prompt order of the kernel section: right after the persona. */
const KERNEL_ORDER = 10

/** The source form of the assets preloaded at activation: a snapshot, so standing context by the contract's rule. */
const PRELOAD_FORM = 'snapshot'

/**
 * One agent's mode, the one fact `contextModeOf` reports, the session's binding records and the agent runs. It is
 * entered only here, synchronously with its record (never through a `session/event` observer, which DSH does not call before a
 * session is published, e.g. inside `createAgent` or `resume`'s `setup`).
 */
class ModeController {
  mode: ContextMode = 'dsh-native'
  /** Why the mode a resumed session had recorded was refused, when it was. */
  refused: ModeRefusal | undefined
  private leave: (() => void) | undefined

  constructor(
    private readonly ctx: Context,
    private readonly agent: Agent,
    readonly projector: ManagedProjector,
    private readonly check: (mode: ContextMode) => Promise<void>,
    private readonly bindings: TavernBindings,
  ) {}

  private get id(): string {
    return String(this.agent.id)
  }

  /**
   * The mode the session has recorded: its binding's record. The log holds none: DSH's resume refuses an event type it
   * does not know, so the mode lives beside the session, as the real app keeps it.
   * @returns the mode, or undefined when the session was never bound to AgentTavern.
   */
  recorded(): ContextMode | undefined {
    const binding = this.bindings.get(this.id)
    return binding?.architecture === 'agent-tavern' ? binding.contextMode : undefined
  }

  /**
   * Bind the session (activation) or resume its recorded mode. Activation of a mode the host cannot run is refused
   * closed: nothing is recorded or registered and the error is thrown. A resumed mode the host can no longer run is
   * recorded as a switch to `dsh-native`, warned, and its refusal kept on {@link refused}.
   * @param fresh - the mode a session with no turns is bound in; a session with turns is bound `dsh-native`.
   * @param preload - whether activation preloads the assets.
   * @throws {TavernArchitectureConflictError} for an activation the host cannot run.
   */
  async start(fresh: ContextMode, preload: boolean): Promise<void> {
    const recorded = this.recorded()
    if (recorded === undefined) {
      const started = logOf(this.agent.session).some(event => event.type === 'turn/start')
      const wanted = started ? 'dsh-native' : fresh
      await this.checkActivation(wanted)
      this.commit(wanted, preload && !started)
      return
    }
    try {
      await this.check(recorded)
    } catch (error: unknown) {
      if (!(error instanceof AgentTavernError)) throw error
      this.refused = { requested: recorded, code: error.code, reason: error.message, missing: error.missing }
      this.ctx.logger('agent-tavern').warn(`${error.message}; it runs dsh-native`)
      this.commit('dsh-native', false)
      return
    }
    this.enter(recorded)
  }

  /** Switch at an idle turn boundary; resolves once the switch is recorded and in effect. */
  async set(mode: ContextMode): Promise<void> {
    assertContextMode(mode, this.id)
    if (mode === this.mode) return
    await this.checkActivation(mode)
    let task: Promise<void>
    try {
      task = this.agent.runMaintenance(async () => {
        this.commit(mode, false)
      })
    } catch (error: unknown) {
      throw new AgentTavernError('agent-busy', this.id, `cannot switch to ${mode} while the agent is running; switch at an idle turn boundary`, [], { cause: error })
    }
    await task
  }

  private async checkActivation(mode: ContextMode): Promise<void> {
    try {
      await this.check(mode)
    } catch (error: unknown) {
      if (error instanceof AgentTavernError) throw new TavernArchitectureConflictError(this.id, mode, error)
      throw error
    }
  }

  /** Record a mode in the session's binding and enter it. */
  private commit(mode: ContextMode, preload: boolean): void {
    this.bind(mode, preload)
    this.enter(mode)
  }

  private bind(mode: ContextMode, preload: boolean): void {
    const before = this.bindings.get(this.id)
    this.bindings.set(this.id, {
      ...before,
      architecture: 'agent-tavern',
      contextMode: mode,
      since: this.agent.session.seq,
      ...preload ? { preloadPending: true } : {},
    })
  }

  private enter(mode: ContextMode): void {
    this.mode = mode
    if (mode === 'agent-managed') this.leave ??= this.ctx.on('agent/context', this.projector)
    else {
      this.leave?.()
      this.leave = undefined
    }
  }
}

const controllers = new WeakMap<Agent, ModeController>()

function controllerOf(agent: Agent): ModeController {
  const controller = controllers.get(agent)
  if (controller === undefined) throw new AgentTavernError('not-mounted', String(agent.id), 'AgentTavern is not mounted on this agent')
  return controller
}

/**
 * The route's context window, read for every request, so a route change takes effect on the next one.
 * @param ctx - the agent's context.
 * @param agent - the agent.
 * @param signal - cancellation.
 * @returns the window, undefined when the route reports none.
 */
async function routeWindow(ctx: Context, agent: Agent, signal: AbortSignal): Promise<number | undefined> {
  const { provider, model } = currentRoute(agent)
  const key = `${provider}/${model}`
  let window = windows.get(agent)
  if (window?.key !== key) windows.set(agent, window = { key, value: (await ctx.llm.resolveModelInfo(provider, model, signal)).context?.contextWindow })
  return window.value
}

/** Each agent's newest route and its context window: a route change re-reads the window. */
const windows = new WeakMap<Agent, { readonly key: string; readonly value: number | undefined }>()

/**
 * Check that `agent-managed` can run: the host's capabilities, no model summaries unless a curator allows them
 * (`curator.summarizer`), and the policy against the route's context window, so
 * a config that could never project a request is refused at once and not on every turn. `dsh-native` always can:
 * its capacity is DSH's, never Tavern configuration.
 * @throws {AgentTavernError} `mode-unavailable`, `hidden-summarizer`, `invalid-config` with the budgets and the
 *   window, or `no-context-window`.
 */
async function assertCanRun(ctx: Context, agent: Agent, config: TavernConfig, mode: ContextMode): Promise<void> {
  assertModeAvailable(ctx, String(agent.id), mode)
  if (mode === 'dsh-native') return
  // Model summaries only through the explicit curator, which gives this agent the reference unless curator.summarizer.
  if (!(ctx.get('compaction') instanceof TavernCompactionCurator) && compactionSummary(ctx) === 'model') {
    throw new AgentTavernError('hidden-summarizer', String(agent.id), 'agent-managed makes no hidden model calls, but the compaction engine summarizes with one; mount @dsh-seam/compaction-effective-projection with summary: reference, or AgentTavern\'s curator (@dsh-seam/agent-tavern/compaction), which summarizes with a model only with curator.summarizer: true')
  }
  const { provider, model } = currentRoute(agent)
  const contextWindow = await routeWindow(ctx, agent, new AbortController().signal)
  if (contextWindow === undefined) {
    throw new AgentTavernError('no-context-window', String(agent.id), `route ${provider}/${model} reports no context window, so the agent-managed budget cannot be derived`)
  }
  try {
    budgetFor(config.policy, contextWindow)
  } catch (error: unknown) {
    if (!(error instanceof AgentTavernError)) throw error
    throw new AgentTavernError(error.code, String(agent.id), `route ${provider}/${model}: ${error.message.replace(/^AgentTavern: /, '')}`, [], { cause: error })
  }
}

/**
 * The assets preloaded at activation: the scene, the newest facts and the lore the story so far and the first batch
 * trigger, as one `dsh-tavern` snapshot.
 * @returns the message, or undefined when there is nothing to preload.
 */
function preloadMessage(agent: Agent, config: TavernConfig, batch: readonly UserMessage[]): UserMessage | undefined {
  const events = logOf(agent.session)
  const scene = currentScene(events, config.scene).text
  const facts = activeMemories(events).filter(record => record.tags.includes('fact')).slice(-config.factsLimit)
  const story = [...transcript(events).map(entry => entry.text), ...batch.map(message => contentText(message.content))].join('\n')
  const sections = [
    { name: 'agent-tavern:scene', text: scene.length === 0 ? '' : `Current scene: ${scene}` },
    { name: 'agent-tavern:facts', text: facts.length === 0 ? '' : `Facts of the story:\n${facts.map(record => `- ${record.text}`).join('\n')}` },
    { name: 'agent-tavern:lore', text: loreContext(loreTriggeredBy(config.lore.entries, story)) },
  ].filter(section => section.text.length > 0)
  if (sections.length === 0) return undefined
  return {
    id: `agent-tavern-preload-${String(agent.id)}` as UserMessage['id'],
    role: 'user',
    content: [{ type: 'text', text: sections.map(section => section.text).join('\n\n') }],
    source: pluginSource(config.sessionFormat, TAVERN_PLUGIN, { form: PRELOAD_FORM, sections }),
  }
}

/**
 * Preload the assets once (`preloadAssets: true`, the real app's `agentTavernPreloadAssets`): into the first batch
 * after activation, never into a session bound before (no retroactive preload), never again.
 */
function registerPreload(ctx: Context, agent: Agent, config: TavernConfig, bindings: TavernBindings): void {
  const id = String(agent.id)
  ctx.on('agent/pre-step', async (payload, next) => {
    const decision = await next()
    const binding = bindings.get(id)
    if (binding?.preloadPending !== true || decision.kind !== 'enter' || decision.messages.length === 0 || payload.step !== 1 || payload.signal.aborted) return decision
    bindings.set(id, { ...binding, preloadPending: false })
    const preloaded = logOf(agent.session).some(event => event.type === 'user/message' && pluginOf(event.data.source) === TAVERN_PLUGIN && (event.data.source as { form?: unknown }).form === PRELOAD_FORM)
    const message = preloaded ? undefined : preloadMessage(agent, config, decision.messages)
    return message === undefined ? decision : { kind: 'enter', messages: [...decision.messages, message] }
  }, { prepend: true })
}

/**
 * Apply AgentTavern to the agent whose context this is: bind its session and enter its mode.
 * @param ctx - the agent's context (`agent.ctx`) or a preset context derived from it.
 * @param raw - the plugin config.
 * @throws {AgentTavernError} `no-agent` off an agent context, or `invalid-config`.
 * @throws {TavernArchitectureConflictError} when the session is bound in a mode the host cannot run (nothing is
 *   recorded or registered). A resumed session whose recorded mode the host can no longer run does not throw: it runs
 *   `dsh-native`, recorded in its binding, the refusal kept ({@link contextModeRefusal}).
 */
export async function apply(ctx: Context, raw: TavernConfig): Promise<void> {
  const config = resolveConfig(raw)
  const agent = ctx.agent
  if (agent === undefined) throw new AgentTavernError('no-agent', undefined, 'mount the plugin on an agent\'s context (agent.ctx) or in an agent preset')
  const bindings = tavernBindings(ctx)

  // Decide the mode first: a refused activation registers nothing.
  const projector = managedProjector(agent, config.policy, { meter: ctx.tokenMeter, contextWindow: signal => routeWindow(ctx, agent, signal) })
  const controller = new ModeController(ctx, agent, projector, mode => assertCanRun(ctx, agent, config, mode), bindings)
  await controller.start(config.contextMode, config.preloadAssets)

  const { session } = agent
  const { character } = config
  ctx.systemPrompt.section({ name: PERSONA_SECTION, order: PERSONA_ORDER, text: `You are ${character.name}. ${character.identity}` })
  ctx.systemPrompt.section({ name: 'agent-tavern:kernel', order: KERNEL_ORDER, text: config.kernel })
  if (config.tools.register) for (const tool of tavernTools(session, config)) ctx.tools.register(tool)
  if (config.preloadAssets) registerPreload(ctx, agent, config, bindings)
  registerReminders(ctx, agent, config.anchorEvery, config.sessionFormat)
  // A compaction's reference names the history tools that read the span back, unless the engine has its own hint.
  ctx.effect(() => offerReferenceHint(ctx, agent, TAVERN_REFERENCE_HINT), 'agent-tavern.referenceHint()')
  ctx.effect(() => enrollCuration(agent, { mode: () => controller.mode, summarizer: config.curator.summarizer }), 'agent-tavern.curation()')
  ctx.effect(() => {
    controllers.set(agent, controller)
    return () => controllers.delete(agent)
  }, 'agent-tavern.mode()')
}

/**
 * Switch an agent's context mode at an idle turn boundary, recorded in the session's binding, so a resumed session
 * runs the mode it was left in (across a restart when the bindings are kept in a file, `bindingsFile`).
 * @param agent - an agent with AgentTavern mounted.
 * @param mode - the mode from the next request on.
 * @returns once the switch is recorded and in effect; at once when the agent already runs `mode`.
 * @throws {AgentTavernError} `not-mounted`, `invalid-config` for a value that is not a mode, or `agent-busy` while a
 *   turn or maintenance task runs.
 * @throws {TavernArchitectureConflictError} when the host cannot run `mode` (nothing is recorded, the mode stays).
 */
export function setContextMode(agent: Agent, mode: ContextMode): Promise<void> {
  return controllerOf(agent).set(mode)
}

/**
 * @param agent - an agent with AgentTavern mounted.
 * @returns its current context mode: the one it runs and its session records.
 * @throws {AgentTavernError} `not-mounted`.
 */
export function contextModeOf(agent: Agent): ContextMode {
  return controllerOf(agent).mode
}

/**
 * @param agent - an agent with AgentTavern mounted.
 * @returns the mode its session's binding records, else undefined.
 * @throws {AgentTavernError} `not-mounted`.
 */
export function recordedContextMode(agent: Agent): ContextMode | undefined {
  return controllerOf(agent).recorded()
}

/**
 * @param agent - an agent with AgentTavern mounted.
 * @returns why the mode its resumed session had recorded was refused (it runs `dsh-native` instead), else undefined.
 * @throws {AgentTavernError} `not-mounted`.
 */
export function contextModeRefusal(agent: Agent): ModeRefusal | undefined {
  return controllerOf(agent).refused
}

/**
 * The managed listener's newest selection (budgets, tokens, cache epoch), for inspection and demos.
 * @param agent - an agent with AgentTavern mounted.
 * @returns the selection, or undefined before the first managed request.
 * @throws {AgentTavernError} `not-mounted`.
 */
export function lastSelection(agent: Agent): ReturnType<ManagedProjector['last']> {
  return controllerOf(agent).projector.last()
}
