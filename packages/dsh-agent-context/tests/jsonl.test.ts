import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { StreamChunk } from '@deepseek-ai/dsh-llm'
import type { SessionEvent } from '@deepseek-ai/dsh-session'
import type { BootedLoop } from '@dsh-seam/loop-testkit'
import { bootLoop, patchedDsh, textReply, toolCallReply } from '@dsh-seam/loop-testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { SessionLogErrorCode } from '../src/jsonl.ts'
import { readSessionLog, SessionLogError } from '../src/jsonl.ts'
import { expectFaithfulReplay, keepLast } from './oracle.ts'

/** A text reply streamed as several deltas, which the JSONL backend packs into one `text-chunks` row. */
function streamedReply(parts: readonly string[]): StreamChunk[] {
  return [
    { type: 'block-start', index: 0, blockType: 'text' },
    ...parts.map(text => ({ type: 'text-delta', index: 0, text })),
    { type: 'block-end', index: 0, block: { type: 'text', text: parts.join('') } },
    { type: 'finish', reason: { kind: 'stop' } },
  ] as StreamChunk[]
}

async function findLog(root: string): Promise<string> {
  const files = await readdir(root, { recursive: true })
  const log = files.find(file => /session\.jsonl(\.zstd)?$/.test(file))
  if (log === undefined) throw new Error(`no session log under ${root}`)
  return join(root, log)
}

interface Persisted {
  readonly loop: BootedLoop
  readonly events: readonly SessionEvent[]
  readonly path: string
}

let scratch: string

beforeAll(async () => { scratch = await mkdtemp(join(tmpdir(), 'agent-context-jsonl-')) })
afterAll(async () => { await rm(scratch, { recursive: true, force: true }) })

async function persist(compression: 'none' | 'zstd'): Promise<Persisted> {
  const dsh = await patchedDsh()
  const root = await mkdtemp(join(scratch, `${compression}-`))
  const loop = await bootLoop(dsh, {
    script: [
      toolCallReply([{ id: 'c1', name: 'echo', args: { text: 'one' } }]),
      streamedReply(['The ', 'tool ', 'said ', 'one.']),
      textReply('second turn'),
    ],
    ...compression === 'none'
      ? { persistRoot: root }
      : { plugins: [[dsh.persistenceJsonl.default, { root, compression }]] as const },
  })
  const agent = loop.create(`persisted-${compression}`)
  keepLast(agent, 2)
  await loop.say(agent, 'go')
  await loop.say(agent, 'again')
  expect(loop.errors).toEqual([])
  await loop.ctx.sessions.flush(agent.session)
  return { loop, events: agent.session.events, path: await findLog(root) }
}

async function refusal(path: string): Promise<SessionLogError> {
  try {
    await readSessionLog(path)
  } catch (error: unknown) {
    if (error instanceof SessionLogError) return error
    throw error
  }
  throw new Error(`readSessionLog accepted ${path}`)
}

describe('readSessionLog on real persisted sessions', () => {
  let plain: Persisted

  beforeAll(async () => { plain = await persist('none') })

  it('reads a plain JSONL log back to the live events, expanding packed chunk rows, and replays every request', async () => {
    const text = await readFile(plain.path, 'utf8')
    expect(text).toContain('"type":"text-chunks"')
    expect(text).toContain('"type":"request/projection"')
    const log = await readSessionLog(plain.path)
    expect(log.header).toMatchObject({ version: 0, id: 'persisted-none' })
    expect(JSON.stringify(log.events)).toBe(JSON.stringify(plain.events))
    const replayed = expectFaithfulReplay(plain.loop, log.events)
    expect(replayed.some(request => request.projection !== undefined)).toBe(true)
  })

  it('reads a Zstandard-compressed log the same way', async () => {
    const zstd = await persist('zstd')
    expect(zstd.path.endsWith('.jsonl.zstd')).toBe(true)
    const log = await readSessionLog(zstd.path)
    expect(JSON.stringify(log.events)).toBe(JSON.stringify(zstd.events))
    expectFaithfulReplay(zstd.loop, log.events)

    const torn = join(scratch, 'torn.jsonl.zstd')
    const bytes = await readFile(zstd.path)
    await writeFile(torn, bytes.subarray(0, bytes.length - 5))
    const error = await refusal(torn)
    expect(error.code).toBe('truncated')
    expect(error.message).toMatch(/ends inside the Zstandard frame at byte \d+/)

    const damaged = join(scratch, 'damaged.jsonl.zstd')
    const lastFrame = bytes.lastIndexOf(Buffer.from([0x28, 0xB5, 0x2F, 0xFD]))
    const flipped = Buffer.from(bytes.subarray(0, bytes.length - 5))
    for (let at = lastFrame + 8; at < lastFrame + 24 && at < flipped.length; at++) flipped[at] = (flipped[at] as number) ^ 0x5A
    await writeFile(damaged, flipped)
    const garbage = await refusal(damaged)
    expect(garbage.code).toBe('malformed')
    expect(garbage.message).toMatch(/Zstandard/)
  })

  it('reads a log event by event without keeping it, with the line of each event', async () => {
    const kept = await readSessionLog(plain.path)
    const visited: [number, number][] = []
    const read: [number, number][] = []
    const scanned = await readSessionLog(plain.path, (event, line) => visited.push([event.seq, line]), (bytes, size) => read.push([bytes, size]))
    expect(scanned).toEqual({ header: kept.header, events: kept.events.length })
    expect(visited).toEqual(kept.events.map(event => [event.seq, kept.lineOf(event.seq)]))
    const lines = (await readFile(plain.path, 'utf8')).split('\n')
    for (const [seq, line] of visited) expect(JSON.parse(lines[line - 1] as string)).toMatchObject(lines[line - 1]!.includes('-chunks"') ? {} : { seq })
    expect(read.at(-1)).toEqual([(await readFile(plain.path)).length, (await readFile(plain.path)).length])
  })

  describe('refusals', () => {
    async function variant(name: string, edit: (lines: string[]) => string): Promise<string> {
      const lines = (await readFile(plain.path, 'utf8')).split('\n')
      const path = join(scratch, name)
      await writeFile(path, edit(lines))
      return path
    }

    const lineOf = (lines: readonly string[], type: string): number => lines.findIndex(line => line.includes(`"type":"${type}"`)) + 1

    function retype(lines: string[], type: string, extra: Record<string, unknown> = {}): string {
      const index = lineOf(lines, 'request/projection') - 1
      lines[index] = JSON.stringify({ ...JSON.parse(lines[index] as string) as object, type, ...extra })
      return lines.join('\n')
    }

    async function expectRefusal(path: string, code: SessionLogErrorCode, line: number | undefined): Promise<void> {
      const error = await refusal(path)
      expect(error.code).toBe(code)
      expect(error.line).toBe(line)
      expect(error.message).toContain(path)
      if (line !== undefined) expect(error.message).toContain(`line ${line}`)
    }

    it('refuses a missing file', async () => {
      await expectRefusal(join(scratch, 'absent', 'session.jsonl'), 'missing-file', undefined)
    })

    it('refuses a log whose last line was cut off, naming that line', async () => {
      const path = await variant('cut.jsonl', lines => lines.join('\n').slice(0, -12))
      const lines = (await readFile(path, 'utf8')).split('\n')
      await expectRefusal(path, 'truncated', lines.length)
    })

    it('refuses an event type unknown to this build, naming its line', async () => {
      const path = await variant('unknown.jsonl', lines => retype(lines, 'vendor/future-event'))
      const error = await refusal(path)
      expect(error.message).toContain('"vendor/future-event"')
      await expectRefusal(path, 'unknown-event-type', lineOf((await readFile(path, 'utf8')).split('\n'), 'vendor/future-event'))
    })

    it('accepts an unknown event type marked ignorable', async () => {
      const path = await variant('ignorable.jsonl', lines => retype(lines, 'vendor/future-event', { ignorable: true }))
      const log = await readSessionLog(path)
      expect(log.events.filter(event => (event.type as string) === 'vendor/future-event')).toHaveLength(1)
    })

    it('refuses another session format version before reading any event', async () => {
      const path = await variant('v1.jsonl', lines => {
        lines[0] = JSON.stringify({ ...JSON.parse(lines[0] as string) as object, version: 1 })
        lines[3] = 'not json'
        return lines.join('\n')
      })
      await expectRefusal(path, 'format-version', 1)
      expect((await refusal(path)).message).toMatch(/format v1; this build reads only v0/)
    })

    it('refuses a complete line that is not JSON', async () => {
      const path = await variant('garbage.jsonl', lines => {
        lines[3] = '{"type":'
        return lines.join('\n')
      })
      await expectRefusal(path, 'malformed', 4)
    })

    it('refuses a seq gap, naming the line after it', async () => {
      const path = await variant('gap.jsonl', lines => lines.filter((_, i) => i !== 2).join('\n'))
      await expectRefusal(path, 'malformed', 3)
      expect((await refusal(path)).message).toMatch(/holds seq 2 where seq 1 is next/)
    })
  })
})
