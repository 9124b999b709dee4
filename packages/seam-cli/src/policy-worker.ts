/**
 * The worker thread one `simulate` policy module runs in: it imports the module, builds its listener over a read-only
 * view of the log, and answers one request at a time with a plain copy of the listener's selection. The host
 * (`PolicyWorker` in `policy-host.ts`) times every call out, and learns of a worker that ends or throws outside a call,
 * so nothing a module does (`process.exit`, a promise that never settles, a busy loop, a live timer) stops `simulate`
 * from failing on one line. Each worker holds its own copy of the offer, frozen.
 * @module @dsh-seam/cli/policy-worker
 */

import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { parentPort, workerData } from 'node:worker_threads'
import type { Agent, ContextNode, ContextSelection } from '@deepseek-ai/dsh-agent'
import type { Message, ToolSchema } from '@deepseek-ai/dsh-llm'
import type { SessionEvent, SessionHeader } from '@deepseek-ai/dsh-session'
import { describeFailure } from '@dsh-seam/agent-context'
import type { TokenPricer } from './analyze.ts'
import { meterPricer } from './pricer.ts'
import type { PolicyErrorCode } from './policy-host.ts'
import type { ContextPolicy, PolicyListener, PolicyPayload, RecallProbe } from './simulate.ts'

/** One request's offer, as the host sends it: the log and the surface since the previous request. */
export interface OfferMessage {
  readonly type: 'request'
  /** How the request is named in errors: `listener at turn T step S (seq Q)`. */
  readonly where: string
  /** Events of the log after those already sent, up to the request. */
  readonly events: readonly SessionEvent[]
  /** Whether the surface was replaced (a compaction) and the offered nodes start over. */
  readonly reset: boolean
  /** Nodes appended to the offer since the previous request (all of them after a reset). */
  readonly added: readonly { readonly seq: number; readonly message: Message }[]
  readonly seq: number
  readonly options: { readonly provider: string | undefined; readonly model: string | undefined }
  readonly turn: number
  readonly step: number
  readonly generation: number
  readonly requiredSeqs: readonly number[]
  readonly system: string
  readonly tools: readonly ToolSchema[]
}

/** What the host asks of a policy worker. */
export type ToPolicyWorker =
  | { readonly type: 'load' }
  | { readonly type: 'start'; readonly header: SessionHeader }
  | { readonly type: 'probes'; readonly turns: number }
  | OfferMessage
  | { readonly type: 'flush' }

/** A listener's selection, copied out of the worker: `everything` when it returned what `next()` gave it. */
export type SelectionReply =
  | { readonly type: 'selection'; readonly everything: true }
  | { readonly type: 'selection'; readonly everything: false; readonly selection: ContextSelection; readonly reasons: readonly (readonly [number, string])[] }

/** What a policy worker answers. */
export type FromPolicyWorker =
  | { readonly type: 'ready' }
  | { readonly type: 'loaded'; readonly name: string }
  | { readonly type: 'done' }
  | { readonly type: 'probes'; readonly probes: readonly RecallProbe[] }
  | SelectionReply
  | { readonly type: 'failed'; readonly code: PolicyErrorCode; readonly message: string }

/** What the worker is started with. */
export interface PolicyWorkerData {
  readonly module: string
}

class Refusal extends Error {
  constructor(readonly code: PolicyErrorCode, message: string) {
    super(message)
  }
}

/** Agent members a listener may read in `simulate`: the log, never the live agent. */
const READABLE_AGENT = new Set(['id', 'options', 'session'])
const READABLE_SESSION = new Set(['id', 'seq', 'events', 'header'])

/**
 * A read-only stand-in for the agent over the log before one request: `id`, `options` (provider and model from the
 * request header), `session.id`, `session.header`, `session.seq` and `session.events` (the log before the request).
 * Reading anything else (the agent's context, its tools, `session.append`, `followUp`, ...) is recorded in `touched`
 * and throws.
 */
function logAgent(header: SessionHeader, events: readonly SessionEvent[], at: { seq: number; options: object }, touched: string[]): Agent {
  const refuse = (name: string): never => {
    touched.push(name)
    throw new Error(`simulate replays a log: ${name} is the live agent's`)
  }
  let before: { seq: number; events: readonly SessionEvent[] } | undefined
  const session = new Proxy({}, {
    get(_, key) {
      if (typeof key === 'symbol') return undefined
      if (!READABLE_SESSION.has(key)) return refuse(`agent.session.${key}`)
      if (key === 'seq') return at.seq
      if (key === 'events') {
        if (before?.seq !== at.seq) before = { seq: at.seq, events: Object.freeze(events.slice(0, at.seq)) }
        return before.events
      }
      return key === 'id' ? header.id : header
    },
    set: (_, key) => refuse(`agent.session.${String(key)}`),
  })
  return new Proxy({}, {
    get(_, key) {
      if (typeof key === 'symbol' || key === 'then') return undefined
      if (!READABLE_AGENT.has(key)) return refuse(`agent.${key}`)
      if (key === 'id') return header.id
      return key === 'options' ? at.options : session
    },
    set: (_, key) => refuse(`agent.${String(key)}`),
  }) as Agent
}

function touchedOr(touched: readonly string[], where: string, error: unknown): Refusal {
  if (touched.length > 0) return new Refusal('live-agent', `its ${where} touched ${[...new Set(touched)].join(', ')}: a listener that calls the agent or its tools cannot be replayed from a log`)
  return new Refusal('listener-failed', `${where} failed: ${describeFailure(error)}`)
}

/** Freeze a value received from the host and everything it holds: the offer is the policy's to read, not to change. */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key])
  }
  return value
}

/** A copy of `result` if it has the shape of a selection; reading it may throw (a module's getter). */
function readSelection(result: unknown): { selection: ContextSelection; reasons: [number, string][] } | undefined {
  if (typeof result !== 'object' || result === null) return undefined
  const { include, revision, reasons } = result as { include?: unknown; revision?: unknown; reasons?: unknown }
  if (!Array.isArray(include) || !include.every(seq => typeof seq === 'number')) return undefined
  if (revision !== undefined && typeof revision !== 'string') return undefined
  const given = reasons === undefined ? [] : reasonsOf(reasons)
  if (given === undefined) return undefined
  return { selection: { include: [...include], ...revision === undefined ? {} : { revision } }, reasons: given }
}

/** `reasons`: an object or Map from seq to a string. */
function reasonsOf(reasons: unknown): [number, string][] | undefined {
  if (typeof reasons !== 'object' || reasons === null) return undefined
  const entries = reasons instanceof Map ? [...reasons.entries()] : Object.entries(reasons)
  const out: [number, string][] = []
  for (const [key, value] of entries) {
    const seq = Number(key)
    if (!Number.isSafeInteger(seq) || typeof value !== 'string') return undefined
    out.push([seq, value])
  }
  return out
}

/** A policy module's listener result, checked at the file boundary before it leaves the worker. */
function selectionReply(where: string, result: unknown): SelectionReply {
  let read: ReturnType<typeof readSelection>
  try {
    read = readSelection(result)
  } catch (error: unknown) {
    throw new Refusal('invalid-selection', `${where} returned a result that cannot be read: ${describeFailure(error)}`)
  }
  if (read === undefined) throw new Refusal('invalid-selection', `${where} returned ${describeFailure(result)}, not { include: number[], revision?: string, reasons?: { [seq]: string } }`)
  return { type: 'selection', everything: false, ...read }
}

function probesOf(result: unknown): RecallProbe[] {
  const isTurn = (value: unknown): boolean => Number.isSafeInteger(value) && (value as number) > 0
  if (!Array.isArray(result)) throw new Refusal('invalid-policy', `probes returned ${describeFailure(result)}, not an array of { turn, refersTo: number[], fact?: string }`)
  return result.map((probe: unknown, i) => {
    const { turn, refersTo, fact } = (probe ?? {}) as Partial<RecallProbe>
    if (!isTurn(turn) || !Array.isArray(refersTo) || !refersTo.every(isTurn) || (fact !== undefined && (typeof fact !== 'string' || fact === ''))) {
      throw new Refusal('invalid-policy', `probes returned ${describeFailure(probe)} at ${i}, not { turn, refersTo: number[], fact?: string }`)
    }
    return { turn: turn as number, refersTo: [...refersTo], ...fact === undefined ? {} : { fact } }
  })
}

async function importPolicy(module: string): Promise<{ name: string; policy: ContextPolicy }> {
  const path = resolve(module)
  const target = existsSync(path) ? pathToFileURL(path).href : module
  let loaded: Partial<ContextPolicy>
  try {
    loaded = await import(target) as Partial<ContextPolicy>
  } catch (error: unknown) {
    const code = (error as { code?: unknown }).code
    if (code === 'ERR_MODULE_NOT_FOUND' && target === module) throw new Refusal('policy-not-found', 'no such file or package')
    throw new Refusal('invalid-policy', `does not load: ${describeFailure(error)}`)
  }
  if (typeof loaded.createListener !== 'function') throw new Refusal('invalid-policy', 'exports no createListener function (see dsh-seam --help)')
  if (loaded.probes !== undefined && typeof loaded.probes !== 'function') throw new Refusal('invalid-policy', 'exports probes that is not a function of the turn count')
  return { name: typeof loaded.name === 'string' && loaded.name.length > 0 ? loaded.name : module, policy: loaded as ContextPolicy }
}

/** The worker's state: the module, its listener, and its own copy of the log and the offer. */
class PolicyRun {
  private policy: ContextPolicy | undefined
  private listener: PolicyListener | undefined
  private readonly touched: string[] = []
  private readonly events: SessionEvent[] = []
  private readonly at = { seq: 0, options: {} as object }
  private nodes: readonly ContextNode[] = Object.freeze([])
  private agent: Agent | undefined

  constructor(private readonly meter: TokenPricer, private readonly module: string) {}

  async load(): Promise<string> {
    const { name, policy } = await importPolicy(this.module)
    this.policy = policy
    return name
  }

  start(header: SessionHeader): void {
    this.agent = logAgent(deepFreeze(header), this.events, this.at, this.touched)
    try {
      this.listener = (this.policy as ContextPolicy).createListener({ agent: this.agent, meter: this.meter })
    } catch (error: unknown) {
      throw touchedOr(this.touched, 'createListener', error)
    }
    if (this.touched.length > 0) throw touchedOr(this.touched, 'createListener', undefined)
    if (typeof this.listener !== 'function') throw new Refusal('invalid-policy', `createListener returned ${describeFailure(this.listener)}, not a listener function`)
  }

  probes(turns: number): RecallProbe[] {
    const { probes } = this.policy as ContextPolicy
    if (probes === undefined) return []
    let result: unknown
    try {
      result = probes(turns)
    } catch (error: unknown) {
      throw new Refusal('invalid-policy', `probes(${turns}) failed: ${describeFailure(error)}`)
    }
    return probesOf(result)
  }

  async select(offer: OfferMessage): Promise<SelectionReply> {
    for (const event of offer.events) this.events.push(deepFreeze(event))
    const added = offer.added.map(node => Object.freeze({ seq: node.seq, message: deepFreeze(node.message) }))
    this.nodes = offer.reset ? Object.freeze(added) : added.length === 0 ? this.nodes : Object.freeze([...this.nodes, ...added])
    this.at.seq = offer.seq
    this.at.options = Object.freeze({ ...offer.options })
    const nodes = this.nodes
    let everything: ContextSelection | undefined
    const payload: PolicyPayload = {
      agent: this.agent as Agent,
      turn: offer.turn,
      step: offer.step,
      generation: offer.generation,
      nodes,
      requiredSeqs: deepFreeze(offer.requiredSeqs),
      system: offer.system,
      tools: deepFreeze(offer.tools),
      signal: new AbortController().signal,
    }
    let result: unknown
    try {
      result = await (this.listener as PolicyListener)(payload, () => Promise.resolve(everything ??= Object.freeze({ include: Object.freeze(nodes.map(node => node.seq)) })))
    } catch (error: unknown) {
      throw touchedOr(this.touched, offer.where, error)
    }
    if (this.touched.length > 0) throw touchedOr(this.touched, offer.where, undefined)
    if (everything !== undefined && result === everything) return { type: 'selection', everything: true }
    return selectionReply(offer.where, result)
  }
}

/** stdout and stderr of this worker have reached the host when their write callbacks run. */
function flushed(): Promise<void> {
  return Promise.all([process.stdout, process.stderr].map(stream => new Promise<void>(done => stream.write('', () => done())))).then(() => undefined)
}

async function serve(port: NonNullable<typeof parentPort>, { module }: PolicyWorkerData): Promise<void> {
  const reply = (message: FromPolicyWorker): void => port.postMessage(message)
  const failed = (error: unknown): void => {
    if (error instanceof Refusal) reply({ type: 'failed', code: error.code, message: error.message })
    else reply({ type: 'failed', code: 'listener-failed', message: describeFailure(error) })
  }
  const run = new PolicyRun((await meterPricer()).pricer, module)
  port.on('message', (message: ToPolicyWorker) => {
    const answer = async (): Promise<FromPolicyWorker> => {
      switch (message.type) {
        case 'load': return { type: 'loaded', name: await run.load() }
        case 'start': run.start(message.header); return { type: 'done' }
        case 'probes': return { type: 'probes', probes: run.probes(message.turns) }
        case 'request': return await run.select(message)
        case 'flush': await flushed(); return { type: 'done' }
      }
    }
    answer().then(reply, failed)
  })
  reply({ type: 'ready' })
}

if (parentPort !== null) await serve(parentPort, workerData as PolicyWorkerData)
