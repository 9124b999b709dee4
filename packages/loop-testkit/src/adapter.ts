/**
 * An offline scripted LLM adapter and the chunk sequences it replays.
 * @module @dsh-seam/loop-testkit/adapter
 */

import type { GenerateOptions, LlmAdapter, LlmFailure, LlmResolvedModelInfo, StreamChunk } from '@deepseek-ai/dsh-llm'
import type { DshModules } from './modules.ts'

/** One scripted reply: chunks, or a function of the request that returns them. */
export type ScriptEntry = readonly StreamChunk[] | ((request: GenerateOptions, index: number) => readonly StreamChunk[])

/** What a scripted adapter is configured with. */
export interface ScriptedAdapterOptions {
  /** Replies in order; when exhausted, `fallback` answers. */
  readonly script?: ScriptEntry[]
  /** Reply used when the script is exhausted; without it an exhausted script throws. */
  readonly fallback?: ScriptEntry
  /** The route's context window reported by `resolveModel`, or one per model. */
  readonly contextWindow?: number | ((model: string) => number)
}

/** The adapter surface tests read. */
export interface ScriptedAdapter extends LlmAdapter {
  /** Every request the adapter received, in order. */
  readonly requests: GenerateOptions[]
  /** Replies still to be served before `fallback`. */
  readonly script: ScriptEntry[]
}

/**
 * Build a scripted adapter class on the given module set's `LlmAdapter` base.
 * @param dsh - the DSH module set.
 * @param options - script, fallback and context window.
 * @returns a new adapter instance.
 */
export function scriptedAdapter(dsh: DshModules, options: ScriptedAdapterOptions = {}): ScriptedAdapter {
  const { contextWindow = 64_000 } = options
  class Scripted extends dsh.llm.LlmAdapter {
    readonly requests: GenerateOptions[] = []
    readonly script: ScriptEntry[] = [...options.script ?? []]

    override resolveModel(provider: string, model: string): Promise<LlmResolvedModelInfo> {
      return Promise.resolve({ provider, id: model, name: model, context: { contextWindow: typeof contextWindow === 'number' ? contextWindow : contextWindow(model) } })
    }

    async * stream(request: GenerateOptions): AsyncIterable<StreamChunk> {
      const index = this.requests.push(request) - 1
      const entry = this.script.shift() ?? options.fallback
      if (entry === undefined) throw new Error(`scripted adapter: script exhausted at request ${index + 1}`)
      for (const chunk of typeof entry === 'function' ? entry(request, index) : entry) {
        request.signal?.throwIfAborted()
        yield chunk
      }
    }
  }
  return new Scripted()
}

/**
 * A text reply.
 * @param text - the reply text.
 * @param usage - provider usage to report; omitted when undefined.
 * @returns the chunk sequence.
 */
export function textReply(text: string, usage?: { inputTokens: number; outputTokens: number }): StreamChunk[] {
  return [
    { type: 'block-start', index: 0, blockType: 'text' },
    { type: 'text-delta', index: 0, text },
    { type: 'block-end', index: 0, block: { type: 'text', text } },
    ...usage === undefined ? [] : [{ type: 'usage', usage } as StreamChunk],
    { type: 'finish', reason: { kind: 'stop' } },
  ] as StreamChunk[]
}

/**
 * A reply that calls one or more tools.
 * @param calls - call id, tool name and arguments of each call.
 * @param text - leading text.
 * @returns the chunk sequence.
 */
export function toolCallReply(calls: readonly { id: string; name: string; args: unknown }[], text = 'Calling a tool.'): StreamChunk[] {
  const chunks: unknown[] = [
    { type: 'block-start', index: 0, blockType: 'text' },
    { type: 'text-delta', index: 0, text },
    { type: 'block-end', index: 0, block: { type: 'text', text } },
  ]
  calls.forEach(({ id, name, args }, i) => {
    const json = JSON.stringify(args)
    chunks.push(
      { type: 'block-start', index: i + 1, blockType: 'tool-call' },
      { type: 'tool-call-delta', index: i + 1, id, name, argumentsDelta: json },
      { type: 'block-end', index: i + 1, block: { type: 'tool-call', id, name, arguments: json } },
    )
  })
  chunks.push({ type: 'finish', reason: { kind: 'tool-calls' } })
  return chunks as StreamChunk[]
}

/**
 * A reply that fails at the provider.
 * @param failure - the provider failure, e.g. `{ code: 'CONTEXT_WINDOW_EXCEEDED', message }`.
 * @returns the chunk sequence.
 */
export function failureReply(failure: LlmFailure): StreamChunk[] {
  return [{ type: 'finish', reason: { kind: 'error', failure } }] as StreamChunk[]
}
