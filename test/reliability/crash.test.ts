/**
 * A process running a JSONL-persisted session is killed after the `request/projection` of a request is on disk and
 * before the model's reply lands; a new process resumes the session and carries on.
 *
 * JSONL persistence appends events in batches (`writeBatchMaxDelayMs`, 200 ms by default) and fsyncs each batch, so
 * an event is durable only once its batch is written. The child reports how many events it has logged when the
 * request reaches the model; the parent waits until the file holds all of them, then sends SIGKILL: everything the
 * session logged before the crash is on disk, and nothing is written during the kill.
 */

import { fork } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import type { SessionLog } from '@dsh-seam/agent-context'
import { diffRequest, pendingProjection, readSessionLog, replayRequests, SessionLogError } from '@dsh-seam/agent-context'
import { EXIT } from '@dsh-seam/cli'
import { bootLoop, conversationReply, conversationTurn, keepLastNodes, patchedDsh, sessionLogPath } from '@dsh-seam/loop-testkit'
import { afterAll, describe, expect, it } from 'vitest'
import { runCli } from '../cli/support.ts'

const CHILD = new URL('./crash-child.mjs', import.meta.url)
const TURNS_BEFORE_CRASH = 4
const root = mkdtempSync(join(tmpdir(), 'dsh-seam-crash-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))

/** Read the log once the file holds at least `events` complete events. */
async function durable(path: string, events: number): Promise<SessionLog> {
  for (let attempt = 0; attempt < 200; attempt++) {
    try {
      const log = await readSessionLog(path)
      if (log.events.length >= events) return log
    } catch (error: unknown) {
      if (!(error instanceof SessionLogError) || (error.code !== 'missing-file' && error.code !== 'truncated')) throw error
    }
    await sleep(25)
  }
  throw new Error(`${path} never held ${events} events`)
}

describe('a crash between request/projection and the reply', () => {
  it('loses nothing on disk; a new process resumes, finishes the prompt, and the log verifies', async () => {
    const child = fork(CHILD, [root, 'crash', String(TURNS_BEFORE_CRASH)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
    const exited = once(child, 'exit')
    const [report] = await Promise.race([
      once(child, 'message') as Promise<[{ path: string; events: number }]>,
      exited.then(([code]) => { throw new Error(`the child exited (${String(code)}) before its request hung`) }),
    ])
    const onDisk = await durable(report.path, report.events)
    child.kill('SIGKILL')
    expect(await exited).toEqual([null, 'SIGKILL'])

    const pending = pendingProjection(onDisk.events)
    expect(pending?.data.turn).toBe(TURNS_BEFORE_CRASH + 1)
    expect(onDisk.events.length).toBe(report.events)
    expect(runCli('verify', report.path).status).toBe(EXIT.ok)

    const loop = await bootLoop(await patchedDsh(), { persistRoot: root, fallback: conversationReply() })
    const { agent } = await loop.ctx.agentLoop.resume(loop.ctx, {
      resumeSessionId: onDisk.header.id,
      agentOptions: { provider: 'fake', model: 'fake-model' },
    })
    agent.ctx.on('agent/context', keepLastNodes(4))
    expect(JSON.stringify(agent.session.events.slice(0, onDisk.events.length))).toBe(JSON.stringify(onDisk.events))
    const closed = agent.session.events.find(event => event.seq >= onDisk.events.length && event.type === 'turn/end')
    expect(closed?.data).toMatchObject({ turn: TURNS_BEFORE_CRASH + 1, reason: { kind: 'interrupted' } })

    await loop.say(agent, conversationTurn(TURNS_BEFORE_CRASH + 1))
    expect(loop.errors).toEqual([])
    await loop.ctx.sessions.flush(agent.session)
    expect(sessionLogPath(loop, agent)).toBe(report.path)
    const replayed = replayRequests(agent.session.events).slice(-loop.adapter.requests.length)
    expect(replayed.map((request, i) => diffRequest(request, loop.adapter.requests[i]!))).toEqual(loop.adapter.requests.map(() => undefined))
    expect(replayed[0]?.projection?.turn).toBe(TURNS_BEFORE_CRASH + 2)

    const verified = runCli('verify', report.path)
    expect(verified.stderr).toBe('')
    expect(verified.status).toBe(EXIT.ok)
  })
})
