/**
 * Session bindings, as the real app keeps them (`sessionBindings` in LingyeSoul/dsh-tavern
 * `packages/tavern-store/src/store.ts`): which sessions AgentTavern serves (`architecture: 'agent-tavern'`; `st` and
 * group chats are left alone), the mode each runs, and the default mode of new bindings. The binding is where a
 * session's mode is recorded: DSH's resume refuses a log holding an event type it does not know, so the mode is not a
 * session event. One store per app (its root context), in memory, or a JSON file when the app names one, so bindings
 * and their modes survive a restart.
 * @module @dsh-seam/agent-tavern/binding
 */

import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'
import type { Context } from '@deepseek-ai/cordis'
import { assertModeAvailable } from './capabilities.ts'
import { AgentTavernError, TavernArchitectureConflictError } from './errors.ts'
import type { ContextMode } from './mode.ts'
import { assertContextMode } from './mode.ts'

/** Which architecture serves a session: AgentTavern, or the SillyTavern pipeline (AgentTavern stays off). */
export type TavernArchitecture = 'agent-tavern' | 'st'

/** One session's binding. */
export interface TavernBinding {
  readonly architecture: TavernArchitecture
  /** The session's context mode, as recorded here. */
  readonly contextMode: ContextMode
  /** The session's log length when the mode was recorded. */
  readonly since: number
  /** A group chat: always served by `st`. */
  readonly group?: boolean
  /** Set at activation when assets are to be preloaded, cleared once they were: a preload happens once. */
  readonly preloadPending?: boolean
}

/** What the store file holds. */
interface BindingState {
  defaultContextMode: ContextMode
  sessionBindings: Record<string, TavernBinding>
}

/** An app's session bindings. */
export class TavernBindings {
  private readonly state: BindingState = { defaultContextMode: 'dsh-native', sessionBindings: {} }

  /**
   * @param file - a JSON file the bindings are kept in (read now, written on every change); in memory without one.
   * @throws {AgentTavernError} `invalid-config` when the file exists and is not a binding store.
   */
  constructor(readonly file?: string) {
    if (file === undefined) return
    let text: string
    try {
      text = readFileSync(file, 'utf8')
    } catch (error: unknown) {
      // A missing file is an empty store; any other read failure is not.
      if ((error as { code?: unknown }).code === 'ENOENT') return
      throw error
    }
    const read = JSON.parse(text) as Partial<BindingState>
    if (typeof read.sessionBindings !== 'object' || read.sessionBindings === null) {
      throw new AgentTavernError('invalid-config', undefined, `${file} is not an AgentTavern binding store (no sessionBindings)`)
    }
    this.state = { defaultContextMode: assertContextMode(read.defaultContextMode ?? 'dsh-native'), sessionBindings: read.sessionBindings }
  }

  /** The mode new bindings take unless their mount asks for another. */
  get defaultContextMode(): ContextMode {
    return this.state.defaultContextMode
  }

  /**
   * @param session - a session id.
   * @returns its binding, if it has one.
   */
  get(session: string): TavernBinding | undefined {
    return this.state.sessionBindings[session]
  }

  /**
   * Bind a session, or record its new mode.
   * @param session - the session id.
   * @param binding - the binding.
   */
  set(session: string, binding: TavernBinding): void {
    this.state.sessionBindings[session] = binding
    this.persist()
  }

  /**
   * Change the default mode of new bindings; a mode the host behind `ctx` cannot run is refused closed.
   * @param ctx - any context of the app.
   * @param mode - the new default.
   * @throws {TavernArchitectureConflictError} when the host cannot run `mode` (the default is kept).
   */
  setDefaultContextMode(ctx: Context, mode: ContextMode): void {
    assertContextMode(mode)
    try {
      assertModeAvailable(ctx, 'default', mode)
    } catch (error: unknown) {
      if (error instanceof AgentTavernError) throw new TavernArchitectureConflictError(undefined, mode, error)
      throw error
    }
    this.state.defaultContextMode = mode
    this.persist()
  }

  private persist(): void {
    if (this.file === undefined) return
    mkdirSync(dirname(this.file), { recursive: true })
    const temporary = `${this.file}.${process.pid}.tmp`
    writeFileSync(temporary, `${JSON.stringify(this.state, undefined, 2)}\n`)
    renameSync(temporary, this.file)
  }
}

const stores = new WeakMap<object, TavernBindings>()

/**
 * The session bindings of the app behind `ctx` (one store per root context).
 * @param ctx - any context of the app.
 * @param file - the store's file, used when the app has no store yet (the host row's `bindingsFile`).
 * @returns the store.
 * @throws {AgentTavernError} `invalid-config` when the app already keeps its bindings in another file.
 */
export function tavernBindings(ctx: Context, file?: string): TavernBindings {
  let store = stores.get(ctx.root)
  if (store === undefined) stores.set(ctx.root, store = new TavernBindings(file))
  else if (file !== undefined && store.file !== file) {
    throw new AgentTavernError('invalid-config', undefined, `the app keeps its AgentTavern bindings in ${store.file ?? 'memory'}, not ${file}`)
  }
  return store
}
