/**
 * The demo's live mode: a short `agent-managed` session on the real DeepSeek provider through DSH's own adapter
 * (`@deepseek-ai/dsh-llm-deepseek`, route `deepseek-official`), chosen when `DEEPSEEK_API_KEY` is set. The key and
 * `DEEPSEEK_BASE_URL` reach the adapter through a launch-environment snapshot of the given environment (the adapter's
 * fallback when no credential service is mounted); nothing else in the loop differs from the scripted demo.
 * @module @dsh-seam/agent-tavern-demo/live
 */

import type { Agent } from '@deepseek-ai/dsh-agent'
import type { LaunchEnvironmentSnapshot } from '@deepseek-ai/dsh-launch-environment'
import { createLaunchEnvironmentSnapshot } from '@deepseek-ai/dsh-launch-environment'
import type { GenerateOptions, TokenUsage } from '@deepseek-ai/dsh-llm'
import * as DeepSeek from '@deepseek-ai/dsh-llm-deepseek'
import * as DeepSeekInvariant from '@deepseek-ai/dsh-llm-deepseek/invariant'
import type { BootedLoop } from '@dsh-seam/loop-testkit'
import { bootLoop, patchedDsh } from '@dsh-seam/loop-testkit'
import { providerUsage } from './metrics.ts'
import type { SessionReport } from './run.ts'
import { demoCompaction, measureSession, mountTavern, tavernConfig } from './run.ts'
import type { StoryLanguage } from './story.ts'
import { shortStory } from './story.ts'

/** The provider route `@deepseek-ai/dsh-llm-deepseek` registers. */
export const LIVE_PROVIDER = 'deepseek-official'

/** The environment variable holding the API key (the adapter's default `apiKeyEnv`). */
export const LIVE_KEY_ENV = 'DEEPSEEK_API_KEY'

/** Defaults of the live session. */
export const LIVE_DEFAULTS = {
  /** The first model of the adapter's default catalog. */
  model: 'deepseek-v4-flash',
  turns: 8,
  /**
   * The context window declared for the route, so the managed policy forgets within a few turns (the adapter's
   * default is the model's 1,000,000 tokens, which a short session never presses).
   */
  contextWindow: 20_000,
  /** Policy block for that window (its recent budget is 1,200 tokens). */
  blockTokens: 600,
  /** Output cap per request. */
  maxTokens: 1024,
  /** Thinking off: a short, cheap smoke run. */
  reasoningEffort: 'off',
} as const

/** An environment: variable name to value. */
export type Environment = Readonly<Record<string, string | undefined>>

/** The model the demo runs. */
export type DemoModel =
  | { readonly kind: 'scripted' }
  | { readonly kind: 'live'; readonly provider: typeof LIVE_PROVIDER; readonly model: string }

/**
 * Choose the demo's model: DeepSeek when the environment holds a non-blank `DEEPSEEK_API_KEY` (a blank value is
 * absent, as in DSH's credential seam) and the scripted model is not forced; the scripted model otherwise.
 * @param env - the environment, e.g. `process.env`.
 * @param options - `scripted` forces the scripted model; `model` overrides the live model id.
 * @returns the choice.
 */
export function demoModel(env: Environment, options: { readonly scripted?: boolean; readonly model?: string } = {}): DemoModel {
  const key = env[LIVE_KEY_ENV]
  if (options.scripted === true || key === undefined || key.trim() === '') return { kind: 'scripted' }
  return { kind: 'live', provider: LIVE_PROVIDER, model: options.model ?? LIVE_DEFAULTS.model }
}

/** How the live session runs. */
export interface LiveOptions {
  /** The environment the adapter resolves `DEEPSEEK_API_KEY` and `DEEPSEEK_BASE_URL` from (one `process` layer). */
  readonly env: Environment
  readonly model?: string
  readonly turns?: number
  /** The context window declared for the model in the adapter's catalog. */
  readonly contextWindow?: number
  readonly maxTokens?: number
  readonly seed?: number
  /** The story's language (default `en`). */
  readonly lang?: StoryLanguage
  /** AgentTavern config fields merged over the demo's (e.g. `policy`). */
  readonly tavern?: Record<string, unknown>
  /** Called after every turn. */
  readonly progress?: (turn: number) => void
}

/** The adapter's settings for a live session. */
interface LiveRoute {
  readonly provider: typeof LIVE_PROVIDER
  readonly model: string
  /** The endpoint the adapter resolved (config, then `DEEPSEEK_BASE_URL`, then the public API). */
  readonly baseURL: string
  readonly contextWindow: number
  readonly maxTokens: number
  readonly reasoningEffort: DeepSeek.Config['reasoningEffort']
}

/** A loop with the DeepSeek adapter mounted. */
export interface LiveLoop {
  readonly loop: BootedLoop
  readonly route: LiveRoute
  /** Every request the provider route received, in order (an `llm/stream` recorder). */
  readonly requests: GenerateOptions[]
  /**
   * Create an agent on the DeepSeek route.
   * @param id - its session id.
   * @returns the agent.
   */
  create(id: string): Agent
}

/**
 * The adapter config of a live session: thinking off, an output cap, and the model in the catalog with the declared
 * context window.
 * @param model - the wire model id.
 * @param contextWindow - the window `resolveModelInfo` reports for it.
 * @param maxTokens - the output cap per request.
 * @returns the `@deepseek-ai/dsh-llm-deepseek` config.
 */
function liveAdapterConfig(model: string, contextWindow: number, maxTokens: number): DeepSeek.Config {
  return { reasoningEffort: LIVE_DEFAULTS.reasoningEffort, maxTokens, models: [{ id: model, contextWindow }] }
}

/** The environment as one `process` layer; blank values are left out, so a blank `DEEPSEEK_BASE_URL` means unset. */
function environmentSnapshot(env: Environment): LaunchEnvironmentSnapshot {
  const values = Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined && entry[1].trim() !== ''))
  return createLaunchEnvironmentSnapshot([{ source: 'process', values }])
}

/**
 * Boot the demo's patched loop (invariants on, projection-aware compaction) with the DeepSeek adapter and its
 * invariant companion mounted, and `env` as the launch environment. Makes no request.
 * @param options - environment, model, window and output cap.
 * @returns the loop, the resolved route and the request recorder.
 */
export async function bootLiveLoop(options: LiveOptions): Promise<LiveLoop> {
  const model = options.model ?? LIVE_DEFAULTS.model
  const contextWindow = options.contextWindow ?? LIVE_DEFAULTS.contextWindow
  const maxTokens = options.maxTokens ?? LIVE_DEFAULTS.maxTokens
  const loop = await bootLoop(await patchedDsh(), { plugins: [demoCompaction('agent-managed')] })
  const environment = environmentSnapshot(options.env)
  loop.ctx.provide('launchEnvironment', environment)
  const config = liveAdapterConfig(model, contextWindow, maxTokens)
  await loop.ctx.plugin(DeepSeekInvariant)
  await loop.ctx.plugin(DeepSeek, config)
  const requests: GenerateOptions[] = []
  loop.ctx.on('llm/stream', (request, next) => {
    if (request.provider === LIVE_PROVIDER) requests.push(request)
    return next()
  })
  const { baseURL } = DeepSeek.resolveAdapterOptions(config, environment)
  return {
    loop,
    route: { provider: LIVE_PROVIDER, model, baseURL, contextWindow, maxTokens, reasoningEffort: config.reasoningEffort },
    requests,
    create: id => loop.ctx.agentLoop.create(loop.dsh.session.SessionId(id), { provider: LIVE_PROVIDER, model }),
  }
}

/** The live session's measurements. */
export interface LiveReport {
  readonly route: LiveRoute
  readonly turns: number
  readonly session: SessionReport
  /** Provider-reported usage of each request row, undefined where none was reported. */
  readonly usage: readonly (TokenUsage | undefined)[]
}

/**
 * Play a short story in `agent-managed` mode on the DeepSeek route and measure it as the scripted demo does. Stops
 * at the first `agent/error` (e.g. a rejected key), which the report lists.
 * @param options - environment, model, length, window and overrides.
 * @returns the measurements, with the provider's usage per request.
 */
export async function runLive(options: LiveOptions): Promise<LiveReport> {
  const started = performance.now()
  const turns = options.turns ?? LIVE_DEFAULTS.turns
  const lang = options.lang ?? 'en'
  const script = shortStory({ turns, lang, ...options.seed === undefined ? {} : { seed: options.seed } })
  const live = await bootLiveLoop(options)
  const { loop } = live
  const agent = live.create('agent-tavern-live')
  const mode = 'agent-managed'
  const unavailable = await mountTavern(agent, mode, { ...tavernConfig(lang), policy: { blockTokens: LIVE_DEFAULTS.blockTokens }, ...options.tavern })
  if (unavailable !== undefined) throw new Error(`AgentTavern refused agent-managed mode on the live loop: ${unavailable}`)
  for (const [i, turn] of script.entries()) {
    await loop.say(agent, turn.text)
    options.progress?.(i + 1)
    if (loop.errors.length > 0) break
  }
  const { events } = agent.session
  const session = measureSession({ mode, meter: loop.ctx.tokenMeter, script, events, requests: live.requests, errors: loop.errors, started })
  return { route: live.route, turns, session, usage: providerUsage(events, session.rows) }
}
