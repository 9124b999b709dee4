/**
 * `dsh-seam report` on logs `verify` accepts but whose figures are not counts, and with outputs that would destroy
 * the log or leak it: usage and context-window numbers that are null, strings, `1e308`, fractions or negative are
 * left out of the page (never an internal error); `-o` naming the log itself (directly, through a symlink, a hard link
 * or another spelling) is refused with the log unchanged; `-o -` writes the page to stdout and no file; the page holds
 * neither the log's path nor its folder, and its Content-Security-Policy allows exactly its own inline script and style.
 */

import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, linkSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, dirname, join, relative } from 'node:path'
import { CLI_BIN, EXIT } from '@dsh-seam/cli'
import { keepLastNodes } from '@dsh-seam/loop-testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { conversationLog, rewriteEvent, runCli } from './support.ts'

const root = mkdtempSync(join(tmpdir(), 'dsh-seam-report-hostile-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))

let path: string
let lines: Record<string, unknown>[]

beforeAll(async () => {
  path = await conversationLog(join(root, 'sessions'), 'hostile-report', 5, { listener: keepLastNodes(4), contextWindow: 90_000 })
  lines = readFileSync(path, 'utf8').split('\n').slice(1).filter(line => line !== '').map(line => JSON.parse(line) as Record<string, unknown>)
})

const seqOf = (type: string): number => lines.find(line => line['type'] === type)?.['seq'] as number

interface ReportJson {
  unreadableCounts: number
  requests: { reported?: number; window?: number; tokens: number }[]
}

describe('numbers that are not token counts', () => {
  it.each([
    ['usage: null', { usage: null }],
    ['a string token count', { usage: { inputTokens: '512', outputTokens: 3 } }],
    ['1e308 input tokens', { usage: { inputTokens: 1e308, outputTokens: 3 } }],
    ['a fraction of a cache read', { usage: { inputTokens: 10, outputTokens: 3, cacheReadTokens: 0.5 } }],
    ['a negative cache write', { usage: { inputTokens: 10, outputTokens: 3, cacheWriteTokens: -7 } }],
  ])('an assistant/message with %s: verify accepts it, report leaves it out', (_, data) => {
    const broken = join(root, `usage-${basename(JSON.stringify(data)).replace(/\W+/g, '')}.jsonl`)
    rewriteEvent(path, broken, seqOf('assistant/message'), event => ({ ...event, data: { ...event['data'] as object, ...data } }))
    expect(runCli('verify', broken).status).toBe(EXIT.ok)
    const run = runCli('report', broken, '-o', join(root, 'usage.html'), '--json')
    expect(run).toMatchObject({ status: EXIT.ok, stderr: '' })
    const report = JSON.parse(run.stdout) as ReportJson
    expect(report.unreadableCounts).toBe(1)
    expect(report.requests[0]!.reported).toBeUndefined()
    expect(readFileSync(join(root, 'usage.html'), 'utf8')).toContain('usage figures not drawn (not token counts)')
  })

  it.each([['a string', '90000'], ['1e308', 1e308], ['null', null]])('a request/context whose context window is %s is left out', (_, window) => {
    const broken = join(root, `window-${typeof window}.jsonl`)
    rewriteEvent(path, broken, seqOf('request/context'), event => ({ ...event, data: { ...event['data'] as object, contextWindow: window } }))
    expect(runCli('verify', broken).status).toBe(EXIT.ok)
    const run = runCli('report', broken, '-o', join(root, 'window.html'), '--json')
    expect(run.status).toBe(EXIT.ok)
    const report = JSON.parse(run.stdout) as ReportJson
    expect(report.unreadableCounts).toBe(1)
    expect(report.requests[0]!.window).toBeUndefined()
  })

  it('the recorded window reaches every request', () => {
    const report = JSON.parse(runCli('report', path, '-o', join(root, 'plain.html'), '--json').stdout) as ReportJson
    expect(report.requests.map(request => request.window)).toEqual(report.requests.map(() => 90_000))
    expect(report.unreadableCounts).toBe(0)
  })
})

describe('where the page goes', () => {
  it('refuses -o naming the log itself, however it is spelled, and leaves the log as it was', () => {
    const before = readFileSync(path)
    const folder = dirname(path)
    const linked = join(root, 'hard-link.jsonl')
    const symlinked = join(root, 'symlink.jsonl')
    linkSync(path, linked)
    symlinkSync(path, symlinked)
    for (const output of [path, join(folder, '.', basename(path)), relative(process.cwd(), path), linked, symlinked]) {
      const run = runCli('report', path, '-o', output)
      expect(run.status).toBe(EXIT.unreadable)
      expect(run.stdout).toBe('')
      expect(run.stderr).toBe(`dsh-seam report: -o ${output} is the session log being read: name another file for the page\n`)
    }
    expect(readFileSync(path).equals(before)).toBe(true)
  })

  it('-o - writes the page to stdout and no file named -', () => {
    const cwd = join(root, 'stdout')
    mkdirSync(cwd)
    const { status, stdout, stderr } = spawnSync(process.execPath, [CLI_BIN, 'report', path, '-o', '-'], { cwd, encoding: 'utf8', maxBuffer: 1 << 28 })
    expect({ status, stderr }).toEqual({ status: EXIT.ok, stderr: '' })
    expect(stdout.startsWith('<!doctype html>')).toBe(true)
    expect(stdout.trimEnd().endsWith('</html>')).toBe(true)
    expect(readdirSync(cwd)).toEqual([])
    expect(runCli('report', path, '-o', '-', '--json')).toMatchObject({ status: EXIT.unreadable, stdout: '' })
  })

  it('the page holds neither the log\'s path nor its folders, and its CSP allows only its own inline script and style', () => {
    const html = join(root, 'page.html')
    expect(runCli('report', path, '-o', html).status).toBe(EXIT.ok)
    const page = readFileSync(html, 'utf8')
    expect(existsSync(path)).toBe(true)
    for (const leak of [path, dirname(path), root, basename(root)]) expect(page).not.toContain(leak)
    const csp = /<meta http-equiv="Content-Security-Policy" content="([^"]+)">/.exec(page)?.[1] ?? ''
    expect(csp).not.toContain('unsafe-inline')
    const hash = (text: string): string => `'sha256-${createHash('sha256').update(text).digest('base64')}'`
    const script = /<script>([\s\S]*?)<\/script>/.exec(page)?.[1] as string
    const style = /<style>([\s\S]*?)<\/style>/.exec(page)?.[1] as string
    expect(csp).toBe(`default-src 'none'; style-src ${hash(style)}; script-src ${hash(script)}; img-src data:; base-uri 'none'; form-action 'none'`)
    expect(page).not.toMatch(/ style="/)
  })
})
