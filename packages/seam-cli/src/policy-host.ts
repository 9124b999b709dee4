/**
 * The host side of a `simulate` policy: the module runs in its own worker thread (`policy-worker.ts`), so a call that
 * never settles, busy-loops or keeps a timer alive is ended at the per-listener timeout, and a worker that ends or
 * throws outside a call (`process.exit`, an error in a timer) fails the call it was serving, naming the policy and the
 * request. The module's stdout and stderr reach the command's stderr.
 * @module @dsh-seam/cli/policy-host
 */

import { Worker } from 'node:worker_threads'
import { describeFailure } from '@dsh-seam/agent-context'
import type { FromPolicyWorker, PolicyWorkerData, ToPolicyWorker } from './policy-worker.ts'

/** Why a policy cannot be simulated. */
export type PolicyErrorCode =
  /** No module at the path or specifier. */
  | 'policy-not-found'
  /** The module does not load, exports no `createListener` function, or its `probes` fail or return no probes. */
  | 'invalid-policy'
  /** The listener touched the live agent (its context, tools, or the session beyond reading its log). */
  | 'live-agent'
  /** The listener threw or rejected, or the module threw outside it (an error in a timer). */
  | 'listener-failed'
  /** A call (loading the module, building or running the listener) did not return within the per-listener timeout. */
  | 'listener-timeout'
  /** The module's worker ended (`process.exit`) before the call returned a result. */
  | 'policy-exited'
  /**
   * The listener's result is not a `ContextSelection` (an object with an `include` array of numbers and an optional
   * string `revision`, optionally `reasons` by seq), or the host's normalizer refused it (`AgentContextError`).
   */
  | 'invalid-selection'

/** A policy that cannot be simulated, named by its module and, once replay started, the request. */
export class PolicyError extends Error {
  override readonly name = 'PolicyError'

  constructor(readonly code: PolicyErrorCode, readonly policy: string, message: string, options?: ErrorOptions) {
    super(`policy ${policy}: ${message}`, options)
  }
}

/** How long one call of a policy (loading it, building or running its listener) may take by default, in ms. */
export const LISTENER_TIMEOUT_MS = 10_000

/** How a policy's worker is run. */
export interface PolicyOptions {
  /** Longest call of the policy, in ms ({@link LISTENER_TIMEOUT_MS} by default). */
  readonly timeoutMs?: number
  /** Where the module's own output goes (its `console`, `process.stdout`, `process.stderr`); `process.stderr` by default. */
  readonly output?: (text: string) => void
}

interface Pending {
  readonly where: string
  readonly resolve: (reply: FromPolicyWorker) => void
  readonly reject: (error: PolicyError) => void
}

/** A policy module loaded in its worker. {@link LoadedPolicy.close} ends the worker. */
export class LoadedPolicy {
  private pending: Pending | undefined
  private failure: PolicyError | undefined
  private closing = false
  private readonly timeoutMs: number

  private constructor(private readonly worker: Worker, private label: string, options: PolicyOptions) {
    this.timeoutMs = options.timeoutMs ?? LISTENER_TIMEOUT_MS
    const output = options.output ?? ((text: string) => { process.stderr.write(text) })
    worker.stdout.on('data', (chunk: Buffer) => output(chunk.toString()))
    worker.stderr.on('data', (chunk: Buffer) => output(chunk.toString()))
    worker.on('message', (reply: FromPolicyWorker) => {
      const pending = this.pending
      this.pending = undefined
      if (reply.type === 'failed') pending?.reject(new PolicyError(reply.code, this.label, reply.message))
      else pending?.resolve(reply)
    })
    worker.on('error', error => this.fail(new PolicyError('listener-failed', this.label, `${this.pending?.where ?? 'its module'} failed outside the listener's result: ${describeFailure(error)}`, { cause: error })))
    worker.on('exit', code => {
      if (!this.closing) this.fail(new PolicyError('policy-exited', this.label, `its worker ended (exit code ${code}) before ${this.pending?.where ?? 'the next request'} returned a result`))
    })
    worker.unref()
  }

  /** The policy's name: its `name` export, or the module. */
  get name(): string {
    return this.label
  }

  /**
   * Import a policy module in a worker of its own.
   * @param module - a file path (relative to the working directory) or a package specifier.
   * @param options - the per-call timeout and where the module's output goes.
   * @returns the policy, named by its `name` export or the module.
   * @throws {PolicyError} `policy-not-found`, `invalid-policy`, `listener-timeout`, `policy-exited`.
   */
  static async load(module: string, options: PolicyOptions = {}): Promise<LoadedPolicy> {
    const workerData: PolicyWorkerData = { module }
    const worker = new Worker(new URL('./policy-worker.js', import.meta.url), { workerData, stdout: true, stderr: true })
    const policy = new LoadedPolicy(worker, module, options)
    try {
      await policy.wait('starting its worker', false)
      const loaded = await policy.call({ type: 'load' }, 'loading the module')
      if (loaded.type === 'loaded') policy.label = loaded.name
    } catch (error: unknown) {
      await policy.close()
      throw error
    }
    return policy
  }

  /**
   * Send the worker one message and wait for its answer, at most the timeout.
   * @param message - what to ask.
   * @param where - the call, as errors name it (`listener at turn T step S (seq Q)`).
   * @returns the answer.
   * @throws {PolicyError} the worker's refusal, `listener-timeout`, `policy-exited`, `listener-failed`.
   */
  call(message: ToPolicyWorker, where: string): Promise<FromPolicyWorker> {
    const answer = this.wait(where, true)
    if (this.failure === undefined) this.worker.postMessage(message)
    return answer
  }

  /** End the worker, after its output so far has reached the host. */
  async close(): Promise<void> {
    if (this.failure === undefined && !this.closing) {
      // A policy that fails here (it exited or timed out at the end) is ended below all the same.
      await this.call({ type: 'flush' }, 'flushing its output').catch(() => undefined)
    }
    this.closing = true
    await this.worker.terminate()
  }

  /** The worker's next answer; `timed`: within the per-call timeout (a call of the module's code). */
  private wait(where: string, timed: boolean): Promise<FromPolicyWorker> {
    if (this.failure !== undefined) return Promise.reject(this.failure)
    return new Promise((resolve, reject) => {
      const timer = !timed ? undefined : setTimeout(() => {
        this.fail(new PolicyError('listener-timeout', this.label, `${where} did not return within ${this.timeoutMs} ms (--listener-timeout): it never settles, loops or waits on a timer`))
        this.closing = true
        void this.worker.terminate()
      }, this.timeoutMs)
      this.pending = {
        where,
        resolve: reply => { clearTimeout(timer); resolve(reply) },
        reject: error => { clearTimeout(timer); reject(error) },
      }
    })
  }

  private fail(error: PolicyError): void {
    this.failure ??= error
    const pending = this.pending
    this.pending = undefined
    pending?.reject(this.failure)
  }
}

/**
 * Import a policy module in a worker of its own: a file path (relative to the working directory) or a package specifier.
 * @param module - the path or specifier given to `--policy`.
 * @param options - the per-call timeout and where the module's output goes.
 * @returns the policy, named by its `name` export or the module; {@link simulate} closes it.
 * @throws {PolicyError} `policy-not-found`, `invalid-policy`, `listener-timeout`, `policy-exited`.
 */
export function loadPolicy(module: string, options?: PolicyOptions): Promise<LoadedPolicy> {
  return LoadedPolicy.load(module, options)
}
