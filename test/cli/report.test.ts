/**
 * `dsh-seam report` without a browser: on the AgentTavern demo's managed session its figures are `inspect`'s,
 * request for request, with the provider's usage from the log beside them; the page references nothing outside itself.
 */

import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { readSessionLog } from '@dsh-seam/agent-context'
import { promptTokens } from '@dsh-seam/compaction-effective-projection'
import type { RequestSummary } from '@dsh-seam/cli'
import { EXIT } from '@dsh-seam/cli'
import { afterAll, describe, expect, it } from 'vitest'
import { managedDemoSession, runCli } from './support.ts'

const root = mkdtempSync(join(tmpdir(), 'dsh-seam-report-json-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))

describe('dsh-seam report', () => {
  it('reports inspect\'s figures for every request, with the provider-reported usage, in a page that loads nothing', async () => {
    const { path, errors } = await managedDemoSession(join(root, 'sessions'), 30)
    expect(errors).toEqual([])
    const html = join(root, 'report.html')
    const run = runCli('report', path, '-o', html, '--json')
    expect(run).toMatchObject({ status: EXIT.ok, stderr: '' })
    const report = JSON.parse(run.stdout) as { output: string; requests: (RequestSummary & { reported?: number; composition: Record<string, number> })[] }
    const inspected = (JSON.parse(runCli('inspect', path, '--json').stdout) as { requests: RequestSummary[] }).requests
    expect(report.output).toBe(html)
    expect(report.requests).toHaveLength(inspected.length)
    report.requests.forEach((request, i) => {
      expect(request).toMatchObject(inspected[i]!)
      expect(Object.values(request.composition).reduce((a, b) => a + b, 0)).toBe(request.tokens)
    })
    const { events } = await readSessionLog(path)
    const usage = events.flatMap(event => event.type === 'assistant/message' && event.data.usage !== undefined ? [promptTokens(event.data.usage)] : [])
    expect(report.requests.map(request => request.reported)).toEqual(usage)
    const page = readFileSync(html, 'utf8')
    expect(page).not.toMatch(/(?:src|href|url)\s*[=(]\s*["']?(?:https?:)?\/\//i)
    expect(page).toContain('default-src \'none\'')
  })

  it('prints one line naming the page it wrote', async () => {
    const { path } = await managedDemoSession(join(root, 'line'), 20)
    const html = join(root, 'line.html')
    const run = runCli('report', path, '-o', html)
    expect(run.status).toBe(EXIT.ok)
    expect(run.stdout).toMatch(new RegExp(`^wrote ${html}: \\d+ requests × \\d+ surface nodes, 1 map page of 200 requests, \\d+ KiB\\n$`))
    expect(runCli('report', path, '-o', join(root, 'no-such-dir', 'x.html'))).toMatchObject({ status: EXIT.unreadable, stdout: '', stderr: `dsh-seam report: cannot write ${join(root, 'no-such-dir', 'x.html')}: ENOENT\n` })
  })
})
