/**
 * `summary: 'reference'`: a compacted span replaced by a fixed paragraph naming its seqs, with no model call, and the
 * hint that says how to fetch it. This package's layer over the engine (the engine DSH proposes summarizes with a
 * model only).
 * @module @dsh-seam/compaction-effective-projection/reference
 */

import type { BasicCompactionEngine } from '@deepseek-ai/dsh-compaction-basic'
import type { Session } from '@deepseek-ai/dsh-session'
import { contextNodes, sessionEventAt } from '@dsh-seam/agent-context'

/** The basic engine's summarizer input, which its package index does not export. */
export type SummarizationInput = Parameters<BasicCompactionEngine['summarize']>[0]

/**
 * The text that stands for a compacted span when no model summarizes it: which seqs it held, that the log keeps them
 * word for word, and the deployment's hint on how to fetch them.
 * @param span - the span's first and last seq and its message count.
 * @param hint - `referenceHint`; `{start}` and `{end}` become the seqs.
 * @returns one paragraph, the same for the same span and hint.
 */
export function referenceText(span: { readonly start: number; readonly end: number; readonly messages: number }, hint: string): string {
  const head = `Earlier conversation (session seqs ${span.start}-${span.end}, ${span.messages} messages) is not shown here; the session log keeps it word for word.`
  const fetch = hint.replaceAll('{start}', String(span.start)).replaceAll('{end}', String(span.end)).trim()
  return fetch.length === 0 ? head : `${head} ${fetch}`
}

/**
 * The seqs of the surface nodes holding `messages`: the span of a compaction the basic engine chose itself
 * (`compactNow`, the `/compact` command), which does not pass through the plugin's `compactRegion`.
 * @param session - the session being compacted.
 * @param messages - the span's messages, as the summarizer receives them.
 * @returns the first and last seq, or undefined when no surface node holds them.
 */
export function spanOf(session: Session, messages: SummarizationInput['messages']): { start: number; end: number } | undefined {
  const ids = new Set(messages.map(message => message.id))
  const seqs = contextNodes(session.surface.nodes, sessionEventAt(session)).filter(node => ids.has(node.message.id)).map(node => node.seq)
  const [start, end] = [seqs[0], seqs.at(-1)]
  /* v8 ignore next -- the summarizer's messages are derived from the surface nodes searched here */
  return start === undefined || end === undefined ? undefined : { start, end }
}
