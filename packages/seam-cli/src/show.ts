/**
 * `dsh-seam show <log> --request N`: one request as the model was sent it, rebuilt from the log by the same pass
 * `verify` makes: its figures, system prompt, tools and every message in full, in the order sent.
 * @module @dsh-seam/cli/show
 */

import type { Message } from '@deepseek-ai/dsh-llm'
import type { RequestSummary, RequestView, TokenPricer } from './analyze.ts'
import { sourceLabel, textOf } from './figures.ts'

/** One request as sent, for the terminal or `--json`. */
export interface ShownRequest {
  /** 1-based, as `inspect` and the page number requests. */
  readonly request: number
  readonly summary: RequestSummary
  /** The context window the log recorded for it, when it recorded one. */
  readonly window?: number
  readonly system: string
  readonly tools: readonly string[]
  readonly messages: readonly { readonly seq: number; readonly role: Message['role']; readonly source: string; readonly tokens: number; readonly text: string }[]
}

/**
 * @param request - the request's 1-based number.
 * @param summary - its figures.
 * @param view - its surface and what it sent.
 * @param pricer - token estimates.
 * @param window - the newest context window recorded before it.
 * @returns the request as sent.
 */
export function shownRequest(request: number, summary: RequestSummary, view: RequestView, pricer: TokenPricer, window: number | undefined): ShownRequest {
  const { header, messages } = view.request
  return {
    request,
    summary,
    ...window === undefined ? {} : { window },
    system: header?.system ?? '',
    tools: (header?.tools ?? []).map(tool => tool.name),
    messages: messages.map((message, i) => ({
      seq: view.index.seqs[view.included[i] as number] as number,
      role: message.role,
      source: sourceLabel(message),
      tokens: pricer.estimateMessage(message),
      text: textOf(message),
    })),
  }
}

/**
 * @param shown - the request.
 * @param total - the log's requests.
 * @param printable - escapes log text for a terminal.
 * @returns a heading line, the system prompt and tools, then each message: a line naming it, its text indented.
 */
export function shownText(shown: ShownRequest, total: number, printable: (text: string) => string): string {
  const { summary, window } = shown
  const count = (n: number): string => n.toLocaleString('en-US')
  const indent = (text: string): string[] => text.split('\n').map(line => `    ${printable(line)}`)
  const lines = [
    `request ${shown.request} of ${total}: turn ${summary.turn} step ${summary.step} (seq ${summary.seq}), sent ${summary.includedNodes} of ${summary.surfaceNodes} surface nodes, ${count(summary.tokens)} tokens`
    + `${window === undefined ? '' : ` (${(summary.tokens / window * 100).toFixed(1)}% of the ${count(window)}-token window)`}, revision ${summary.revision === undefined ? '-' : `"${printable(summary.revision)}"`}`,
    `system prompt (${count(shown.system.length)} characters):`, ...indent(shown.system),
    `tools: ${shown.tools.length === 0 ? '-' : shown.tools.map(printable).join(', ')}`,
  ]
  shown.messages.forEach((message, i) => {
    lines.push(`[${i + 1}] seq ${message.seq} ${message.role} (${printable(message.source)}), ${count(message.tokens)} tokens:`, ...indent(message.text))
  })
  return `${lines.join('\n')}\n`
}
