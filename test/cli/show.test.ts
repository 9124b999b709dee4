/**
 * `dsh-seam show <log> --request N` on a compacted, projected session a real patched loop persisted: the request's
 * messages are the ones the log rebuilds for it, in the order sent and in full; its figures are `inspect`'s; text from
 * the log is escaped for the terminal; a request the log does not hold, or a bad `--request`, is one line and exit 2.
 */

import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { SessionEvent } from '@deepseek-ai/dsh-session'
import { readSessionLog, replayRequests } from '@dsh-seam/agent-context'
import type { RequestSummary } from '@dsh-seam/cli'
import { EXIT } from '@dsh-seam/cli'
import { bootLoop, conversationReply, patchedDsh, sessionLogPath } from '@dsh-seam/loop-testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { compactedSession, runCli } from './support.ts'

const root = mkdtempSync(join(tmpdir(), 'dsh-seam-show-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))

let log: string
let events: SessionEvent[]
let inspected: RequestSummary[]

beforeAll(async () => {
  const run = await compactedSession(join(root, 'compacted'))
  log = sessionLogPath(run.loop, run.agent)
  events = (await readSessionLog(log)).events
  inspected = (JSON.parse(runCli('inspect', log, '--json').stdout) as { requests: RequestSummary[] }).requests
})

interface Shown {
  summary: RequestSummary
  window?: number
  system: string
  tools: string[]
  messages: { seq: number; role: string; text: string }[]
}

describe('dsh-seam show', () => {
  it('prints every request as the log rebuilds it: its messages in the order sent, in full, with inspect\'s figures', () => {
    const requests = replayRequests(events)
    for (const n of [1, Math.floor(requests.length / 2), requests.length]) {
      const run = runCli('show', log, '--request', String(n), '--json')
      expect(run).toMatchObject({ status: EXIT.ok, stderr: '' })
      const shown = JSON.parse(run.stdout) as Shown
      const request = requests[n - 1]!
      expect(shown.summary).toEqual(inspected[n - 1])
      expect(shown.system).toBe(request.header?.system ?? '')
      expect(shown.tools).toEqual((request.header?.tools ?? []).map(tool => tool.name))
      expect(shown.messages.map(message => message.role)).toEqual(request.messages.map(message => message.role))
      const texts = request.messages.map(message => message.content.flatMap(block => block.type === 'text' ? [block.text] : []))
      shown.messages.forEach((message, i) => { for (const text of texts[i]!) expect(message.text).toContain(text) })
      const table = runCli('show', log, '--request', String(n))
      expect(table.stdout.split('\n')[0]).toBe(`request ${n} of ${requests.length}: turn ${request.turn} step ${request.step} (seq ${request.seq}), sent ${inspected[n - 1]!.includedNodes} of ${inspected[n - 1]!.surfaceNodes} surface nodes, ${inspected[n - 1]!.tokens.toLocaleString('en-US')} tokens (${(inspected[n - 1]!.tokens / shown.window! * 100).toFixed(1)}% of the ${shown.window!.toLocaleString('en-US')}-token window), revision ${inspected[n - 1]!.revision === undefined ? '-' : `"${inspected[n - 1]!.revision}"`}`)
      expect(table.stdout.match(/^\[\d+\] seq \d+ /gm)).toHaveLength(request.messages.length)
    }
  })

  it('escapes log text for the terminal', async () => {
    const loop = await bootLoop(await patchedDsh(), { persistRoot: join(root, 'escape'), fallback: conversationReply() })
    const agent = loop.create('escape')
    await loop.say(agent, 'red \u001b[31malert\u001b[0m and a\u202Ereversed tail')
    await loop.ctx.sessions.flush(agent.session)
    const run = runCli('show', sessionLogPath(loop, agent), '--request', '1')
    expect(run.status).toBe(EXIT.ok)
    expect(run.stdout).toContain('    red \\u001B[31malert\\u001B[0m and a\\u202Ereversed tail')
    expect(run.stdout).not.toContain('\u001b')
    expect(run.stdout).not.toContain('\u202E')
  })

  it('refuses a request the log does not hold, and a bad --request, on one line with exit 2', () => {
    expect(runCli('show', log, '--request', String(inspected.length + 1))).toEqual({ status: EXIT.unreadable, stdout: '', stderr: `dsh-seam show: ${log} holds ${inspected.length} requests: there is no request ${inspected.length + 1}\n` })
    for (const args of [['show', log], ['show', log, '--request', '0'], ['show', log, '--request', 'last'], ['verify', log, '--request', '1']]) {
      const run = runCli(...args)
      expect(run.status).toBe(EXIT.unreadable)
      expect(run.stderr).toMatch(/^dsh-seam: .+ \(run dsh-seam --help for usage\)\n$/)
    }
  })
})
