/**
 * A log written under an earlier host rule (RFC 0001, "Replay decodes; the writer checks policy"): the fixture was
 * recorded with the seam's previous packages, whose required set did not keep standing context, so its projections
 * leave the AGENTS.md baseline, the skill catalog and an invoked skill body out. Readers decode what it says: it
 * replays, resumes with DSH's invariants on, and `dsh-seam verify` rebuilds it and warns about what today's host would
 * have sent; the requests after the resume keep the standing context still on the surface.
 */

import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { readSessionLog, replayRequests } from '@dsh-seam/agent-context'
import { bootLoop, patchedDsh, textReply } from '@dsh-seam/loop-testkit'
import { afterAll, describe, expect, it } from 'vitest'
import { runCli } from '../cli/support.ts'
import { requestsOf } from './support.ts'

const FIXTURE = new URL('../fixtures/standing-dropped.session.jsonl', import.meta.url).pathname
const dsh = await patchedDsh()
const roots: string[] = []
afterAll(() => { for (const root of roots) rmSync(root, { recursive: true, force: true }) })

const standingKinds = ['agent-instructions', 'skill-catalog', 'skill-invocation']

describe('a log whose projections left standing context out', () => {
  it('replays request by request as logged', async () => {
    const { events } = await readSessionLog(FIXTURE)
    const requests = replayRequests(events)
    expect(requests).toHaveLength(14)
    const projected = requests.filter(request => request.projection !== undefined)
    expect(projected).toHaveLength(13)
    for (const request of projected) expect(request.messages).toHaveLength(request.projection!.includedNodes)
    const lastKinds = requests.at(-1)!.messages.map(m => m.source.kind)
    for (const kind of standingKinds) expect(lastKinds, `the recorded request left ${kind} out`).not.toContain(kind)
  })

  it('verifies with one warning per projection that left standing context out, exit 3', async () => {
    const { status, stdout, stderr } = runCli('verify', FIXTURE)
    expect(status).toBe(3)
    expect(stdout).toMatch(/verified .*: 14 requests rebuilt from 186 events; 13 request\/projection events decode; 13 do not meet today's host policy/)
    const warnings = stderr.trim().split('\n')
    expect(warnings).toHaveLength(13)
    for (const line of warnings) expect(line).toMatch(/^verify: warning: .*standing-dropped\.session\.jsonl:\d+: seq \d+, turn \d+ step 1, revision "keep-last-2": \[required-missing\] request\/projection omits required seq/)
    const json = JSON.parse(runCli('verify', FIXTURE, '--json').stdout) as { ok: boolean; warnings: { code: string }[] }
    expect(json.ok).toBe(true)
    expect(json.warnings.map(w => w.code)).toEqual(Array.from({ length: 13 }, () => 'required-missing'))
  })

  it('resumes with DSH invariants on; its next requests keep the standing context', async () => {
    const root = mkdtempSync(join(tmpdir(), 'old-log-'))
    roots.push(root)
    const header = JSON.parse(readFileSync(FIXTURE, 'utf8').split('\n')[0]!) as { cwd: string; id: string }
    const folder = join(root, `-${header.cwd.replaceAll('/', '-')}--`, header.id)
    mkdirSync(folder, { recursive: true })
    copyFileSync(FIXTURE, join(folder, 'session.jsonl'))
    const loop = await bootLoop(dsh, { persistRoot: root, fallback: textReply('resumed') })
    const { agent } = await loop.ctx.agentLoop.resume(loop.ctx, {
      resumeSessionId: dsh.session.SessionId(header.id),
      agentOptions: { provider: 'fake', model: 'fake-model' },
    })
    const recorded = agent.session.events.length
    agent.ctx.on('agent/context', async (_payload, next) => ({ include: (await next()).include.slice(-2), revision: 'keep-last-2' }))
    await loop.say(agent, 'after the resume')
    await loop.say(agent, 'and once more')
    expect(loop.errors).toEqual([])
    const requests = requestsOf(loop, agent)
    expect(requests).toHaveLength(2)
    for (const request of requests) {
      const kinds = request.messages.map(m => m.source.kind)
      for (const kind of standingKinds) expect(kinds, kind).toContain(kind)
    }
    // Every request of the resumed log, the recorded ones included, still replays.
    const { events } = agent.session
    const replayed = replayRequests(events)
    expect(replayed).toHaveLength(16)
    expect(replayed.slice(-2).map(r => JSON.stringify(r.messages))).toEqual(requests.map(r => JSON.stringify(r.messages)))
    expect(events.length).toBeGreaterThan(recorded)
    // What the new host wrote meets today's policy; the recorded projections are what they were.
    await loop.ctx.sessions.flush(agent.session)
    const verified = runCli('verify', join(folder, 'session.jsonl'))
    expect(verified.status).toBe(3)
    expect(verified.stdout).toMatch(/16 requests rebuilt .*; 15 request\/projection events decode; 13 do not meet/)
  })
})
