/**
 * Provider-usage calibration of projected pressure: a usage report is compared only with the heuristic price of the
 * request it answered, rebuilt from the log with that request's own projection.
 * @module @dsh-seam/compaction-effective-projection/calibration
 */

import type { Message, TokenUsage, ToolSchema } from '@deepseek-ai/dsh-llm'
import type { EpochHeader, SessionEvent } from '@deepseek-ai/dsh-session'
import type { ReplayedRequest } from '@dsh-seam/agent-context'
import { RequestReplay } from '@dsh-seam/agent-context'

/** One request's provider-reported prompt size next to its heuristic price. */
export interface CalibrationSample {
  /** Seq of the `assistant/message` whose usage this is. */
  readonly seq: number
  /** Uncached input plus cache reads and writes. */
  readonly promptTokens: number
  /** The meter's price of the same request: its header plus the messages it sent. */
  readonly estimatedTokens: number
}

/** Prices a request with the token meter. */
export interface RequestPricer {
  estimateHeader(header: Pick<EpochHeader, 'system' | 'tools'> | undefined): number
  estimateMessage(message: Message): number
}

/**
 * The prompt a provider reports reading: its disjoint uncached-input, cache-read and cache-write buckets.
 * @param usage - provider usage of one response.
 * @returns prompt tokens; output tokens are not part of the prompt.
 */
export function promptTokens(usage: TokenUsage): number {
  return usage.inputTokens + (usage.cacheReadTokens ?? 0) + (usage.cacheWriteTokens ?? 0)
}

/**
 * How much the heuristic under-prices requests, from the newest sample. The factor never goes below 1: like the
 * meter's own usage anchor, a provider figure only ever raises the heuristic price, so calibration cannot delay
 * compaction past the uncalibrated estimate.
 * @param sample - the newest calibration sample, if any.
 * @returns `max(1, promptTokens / estimatedTokens)`, or 1 without a usable sample.
 */
export function calibrationFactor(sample: CalibrationSample | undefined): number {
  if (sample === undefined || sample.estimatedTokens <= 0) return 1
  return Math.max(1, sample.promptTokens / sample.estimatedTokens)
}

/**
 * A request's system prompt and tools in the canonical header form the meter prices: empty fields are absent.
 * @param system - the rendered system prompt.
 * @param tools - the tool schemas.
 * @returns the envelope fields.
 */
export function requestEnvelope(system: string | undefined, tools: readonly ToolSchema[] | undefined): Pick<EpochHeader, 'system' | 'tools'> {
  return {
    ...system === undefined || system.length === 0 ? {} : { system },
    ...tools === undefined || tools.length === 0 ? {} : { tools: [...tools] },
  }
}

/**
 * Price one rebuilt request the way pressure is priced: header plus sent messages.
 * @param meter - the token meter.
 * @param request - a request rebuilt from the log.
 * @returns heuristic tokens.
 */
export function priceRequest(meter: RequestPricer, request: { readonly header: Pick<EpochHeader, 'system' | 'tools'> | undefined; readonly messages: readonly Message[] }): number {
  let tokens = meter.estimateHeader(request.header)
  for (const message of request.messages) tokens += meter.estimateMessage(message)
  return tokens
}

/**
 * Follows one session's log: rebuilds its requests incrementally and keeps the newest usage report priced against
 * the request it answered (the last request the log started before it, with its `request/projection`). Each event is
 * read once, so following a live session costs the events appended since the last call.
 */
export class UsageCalibration {
  private readonly replay = new RequestReplay()
  private fed = 0
  /** The newest usage report and the price of its request. */
  sample: CalibrationSample | undefined

  /** @param meter - the token meter. */
  constructor(private readonly meter: RequestPricer) {}

  /**
   * Fold the events appended since the last call.
   * @param length - the log length, grown since the last call (`Session.seq`).
   * @param eventAt - the event of a seq (a log's events by seq).
   * @returns the newest request the log records.
   * @throws {ReplayError} when a projection the log records does not match its request.
   */
  follow(length: number, eventAt: (seq: number) => SessionEvent | undefined): ReplayedRequest | undefined {
    for (; this.fed < length; this.fed++) {
      const event = eventAt(this.fed) as SessionEvent
      this.replay.push(event)
      const request = this.replay.last
      if (event.type === 'assistant/message' && event.data.usage !== undefined && request !== undefined) {
        this.sample = { seq: event.seq, promptTokens: promptTokens(event.data.usage), estimatedTokens: priceRequest(this.meter, request) }
      }
    }
    return this.replay.last
  }
}
