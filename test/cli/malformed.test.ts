/**
 * `dsh-seam` on every kind of file that is not a complete, current session log, tried as an operator would: each
 * exits 2 with one line naming the file, the line where one is at fault, the problem and its code, and never a stack
 * trace. The broken logs are copies of one a real patched loop persisted (tool calls and projections).
 */

import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { zstdCompressSync } from 'node:zlib'
import { EXIT, main } from '@dsh-seam/cli'
import { keepLastNodes } from '@dsh-seam/loop-testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { conversationLog, runCli } from './support.ts'

const root = mkdtempSync(join(tmpdir(), 'dsh-seam-malformed-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))

let logPath: string
let lines: string[]

beforeAll(async () => {
  logPath = await conversationLog(join(root, 'sessions'), 'malformed', 4, { listener: keepLastNodes(4) })
  lines = readFileSync(logPath, 'utf8').split('\n')
})

interface Outcome {
  readonly status: number
  readonly stdout: string
  readonly stderr: string
}

async function dshContext(...args: string[]): Promise<Outcome> {
  let stdout = ''
  let stderr = ''
  const status = await main(args, { stdout: { write: (text: string) => { stdout += text } }, stderr: { write: (text: string) => { stderr += text } } })
  return { status, stdout, stderr }
}

let files = 0
function file(content: string | Buffer, name = `log-${++files}.jsonl`): string {
  const path = join(root, name)
  writeFileSync(path, content)
  return path
}

const KEEP_LAST_TURNS = fileURLToPath(import.meta.resolve('@dsh-seam/context-policies/keep-last-turns'))
/** Every command with the options it needs; none writes or prints anything for a file that is not a session log. */
const COMMANDS = [['verify'], ['inspect'], ['report', '-o', join(root, 'never-written.html')], ['simulate', '--policy', KEEP_LAST_TURNS]]

/** Every command refuses the file with exit 2 and one line: file, line, problem, code; and return the problem. */
async function expectRefused(path: string, code: string, line: number | undefined): Promise<string> {
  let problem = ''
  for (const [command, ...options] of COMMANDS) {
    const run = await dshContext(command as string, path, '--quiet', ...options)
    expect(run.status).toBe(EXIT.unreadable)
    expect(run.stdout).toBe('')
    const at = line === undefined ? '' : ` line ${line}`
    const match = new RegExp(`^dsh-seam ${command}: session log ${path}${at}: (.+) \\[${code}\\]\\n$`).exec(run.stderr)
    expect(match, run.stderr).not.toBeNull()
    problem = match![1]!
  }
  expect(existsSync(COMMANDS[2]![2]!)).toBe(false)
  return problem
}

const lineOfType = (type: string): number => lines.findIndex((text, i) => i > 0 && JSON.parse(text || 'null')?.type === type) + 1

function edited(edit: (copy: string[]) => void): string {
  const copy = [...lines]
  edit(copy)
  return file(copy.join('\n'))
}

describe('files that are not session logs', () => {
  it('a missing file, a directory and a FIFO', async () => {
    expect(await expectRefused(join(root, 'absent.jsonl'), 'missing-file', undefined)).toBe('does not exist')
    const directory = join(root, 'a-directory.jsonl')
    mkdirSync(directory)
    expect(await expectRefused(directory, 'not-a-file', undefined)).toBe('is a directory, not a session log file')
    const fifo = join(root, 'a-fifo.jsonl')
    execFileSync('mkfifo', [fifo])
    expect(await expectRefused(fifo, 'not-a-file', undefined)).toBe('is a FIFO, not a session log file')
  })

  it('an empty file', async () => {
    expect(await expectRefused(file(''), 'empty', undefined)).toBe('is empty: it has no session header line')
  })

  it('binary garbage, with or without line ends, is malformed, never truncated', async () => {
    const bytes = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) % 256))
    expect(await expectRefused(file(bytes), 'malformed', 1)).toBe('is not UTF-8 text')
    const noNewline = Buffer.from(bytes.filter(byte => byte !== 0x0A))
    expect(await expectRefused(file(noNewline), 'malformed', 1)).toMatch(/^is \d+ bytes without a line end that are not the start of a JSON line/)
    expect(await expectRefused(file(`${lines[0]}\n${lines[1]}\n\u0000\u0001\u0002garbage`), 'malformed', 3)).toMatch(/not the start of a JSON line/)
  })

  it('Zstandard garbage is malformed, two stray bytes after the last frame too; a Zstandard log cut inside its last frame is truncated', async () => {
    const frames = lines.slice(0, -1).map(text => zstdCompressSync(`${text}\n`))
    const whole = Buffer.concat(frames)
    expect((await dshContext('verify', file(whole, 'whole.jsonl.zstd'), '--quiet')).status).toBe(EXIT.ok)
    const torn = file(whole.subarray(0, whole.length - 7), 'torn.jsonl.zstd')
    expect(await expectRefused(torn, 'truncated', undefined)).toMatch(/^ends inside the Zstandard frame at byte \d+: its write did not complete$/)
    const strayTail = file(Buffer.concat([whole, Buffer.from('\n\n')]), 'stray-tail.jsonl.zstd')
    expect(await expectRefused(strayTail, 'malformed', undefined)).toBe(`is not Zstandard data that DSH wrote: invalid frame magic at byte ${whole.length}`)
    const magic = Buffer.from([0x28, 0xB5, 0x2F, 0xFD])
    const noise = Buffer.from(Array.from({ length: 2048 }, (_, i) => (i * 104729 + 7) % 251))
    expect(await expectRefused(file(Buffer.concat([magic, Buffer.from([0x00]), noise])), 'malformed', undefined)).toMatch(/Zstandard/)
    const garbageBlock = Buffer.concat([Buffer.from([(20 << 3) | (2 << 1), 0, 0]), noise.subarray(0, 20)])
    const tornBlock = Buffer.from([(1000 << 3 | (2 << 1) | 1) & 0xFF, (1000 << 3) >> 8 & 0xFF, 0])
    const damagedTail = Buffer.concat([whole, magic, Buffer.from([0x00, 0x58]), garbageBlock, tornBlock, noise.subarray(0, 40)])
    expect(await expectRefused(file(damagedTail, 'damaged.jsonl.zstd'), 'malformed', undefined)).toMatch(/^the Zstandard frame at byte \d+ is incomplete and its bytes do not decode: not a torn write but damaged data$/)
    const bitFlipped = Buffer.from(whole)
    const at = (frames[0] as Buffer).length + 12
    bitFlipped[at] = (bitFlipped[at] as number) ^ 0xFF
    expect(await expectRefused(file(bitFlipped, 'flipped.jsonl.zstd'), 'malformed', undefined)).toMatch(/does not decode|Zstandard/)
  })

  it('a line that is not UTF-8 text', async () => {
    const path = file(Buffer.concat([Buffer.from(`${lines.slice(0, 3).join('\n')}\n`), Buffer.from([0x7B, 0xFF, 0xFE, 0x7D, 0x0A])]))
    expect(await expectRefused(path, 'malformed', 4)).toBe('is not UTF-8 text')
  })
})

describe('session logs that are not complete and current', () => {
  it('a last line cut off by an incomplete write', async () => {
    const path = file(lines.join('\n').slice(0, -15))
    expect(await expectRefused(path, 'truncated', lines.length - 1)).toBe('ends inside this line: its write did not complete')
    expect(await expectRefused(file(lines[0]!.slice(0, 40)), 'truncated', 1)).toBe('ends before the session header line is complete')
  })

  it('a complete line that is not JSON, and an empty line', async () => {
    expect(await expectRefused(edited(copy => { copy[3] = '{"type":' }), 'malformed', 4)).toBe('is not JSON')
    expect(await expectRefused(edited(copy => { copy[3] = '' }), 'malformed', 4)).toBe('is empty, not JSON')
  })

  it('a header of another session format version, or no header at all', async () => {
    const version = edited(copy => { copy[0] = JSON.stringify({ ...JSON.parse(copy[0]!) as object, version: 1 }) })
    expect(await expectRefused(version, 'format-version', 1)).toBe('uses session log format v1; this build reads only v0')
    expect(await expectRefused(edited(copy => { copy[0] = '{}' }), 'malformed', 1)).toMatch(/^is not a session header/)
    expect(await expectRefused(edited(copy => { copy.shift() }), 'malformed', 1)).toMatch(/^is not a session header/)
  })

  it('an event type this build does not know, unless the event is marked ignorable', async () => {
    const line = lineOfType('request/context')
    const retyped = (extra: object) => edited(copy => { copy[line - 1] = JSON.stringify({ ...JSON.parse(copy[line - 1]!) as object, type: 'vendor/future', ...extra }) })
    expect(await expectRefused(retyped({}), 'unknown-event-type', line)).toMatch(/^holds event type "vendor\/future" \(seq \d+\), unknown to this build and not marked ignorable$/)
    expect((await dshContext('verify', retyped({ ignorable: true }), '--quiet')).status).toBe(EXIT.ok)
    expect(await expectRefused(retyped({ ignorable: 'yes' }), 'malformed', line)).toMatch(/^is not a session event envelope/)
  })

  it('a seq gap, a repeated seq, and a packed chunk row that does not decode', async () => {
    expect(await expectRefused(edited(copy => { copy.splice(2, 1) }), 'malformed', 3)).toBe('holds seq 2 where seq 1 is next')
    expect(await expectRefused(edited(copy => { copy.splice(3, 0, copy[2]!) }), 'malformed', 4)).toBe('holds seq 1 where seq 2 is next')
    const chunk = lineOfType('assistant/chunk')
    const { seq, time } = JSON.parse(lines[chunk - 1]!) as { seq: number; time: number }
    const broken = edited(copy => { copy[chunk - 1] = JSON.stringify({ type: 'text-chunks', seq0: seq, time0: time, data: null }) })
    expect(await expectRefused(broken, 'malformed', chunk)).toMatch(/^is not a storage record: malformed text-chunks storage row/)
  })

  it('a huge line is read when it is an event, and refused by line when it is garbage', async () => {
    const line = lineOfType('request/context')
    const huge = edited(copy => {
      const record = JSON.parse(copy[line - 1]!) as { data: object }
      copy[line - 1] = JSON.stringify({ ...record, data: { ...record.data, note: 'x'.repeat(24 << 20) } })
    })
    expect((await dshContext('verify', huge, '--quiet')).status).toBe(EXIT.ok)
    expect(await expectRefused(edited(copy => { copy[line - 1] = 'x'.repeat(24 << 20) }), 'malformed', line)).toBe('is not JSON')
  })
})

describe('events whose data is not what their type declares', () => {
  /** One line per event type the log holds as a single-event line. */
  function singleEventLines(): Map<string, number> {
    const byType = new Map<string, number>()
    lines.forEach((text, i) => {
      if (i === 0 || text === '') return
      const { type } = JSON.parse(text) as { type: string }
      if (!type.endsWith('-chunks') && !byType.has(type)) byType.set(type, i + 1)
    })
    return byType
  }

  function withData(line: number, data: (old: Record<string, unknown>) => unknown): string {
    return edited(copy => {
      const record = JSON.parse(copy[line - 1]!) as { data: Record<string, unknown> }
      copy[line - 1] = JSON.stringify({ ...record, data: data(record.data) })
    })
  }

  it('null, {}, an array or a string as the data of every event type in the log', async () => {
    const byType = singleEventLines()
    expect([...byType.keys()]).toEqual(expect.arrayContaining(['turn/start', 'step/start', 'user/message', 'assistant/message', 'tool/call', 'tool/result', 'request/header', 'request/projection', 'turn/end', 'step/end']))
    for (const [type, line] of byType) {
      const seq = (JSON.parse(lines[line - 1]!) as { seq: number }).seq
      expect(await expectRefused(withData(line, () => null), 'invalid-event', line)).toBe(`holds a ${type} event (seq ${seq}) whose data is null, not an object`)
      expect(await expectRefused(withData(line, () => ({})), 'invalid-event', line)).toBe(`holds a ${type} event (seq ${seq}) whose data is empty ({})`)
      expect(await expectRefused(withData(line, () => [1]), 'invalid-event', line)).toMatch(/whose data is an array, not an object$/)
      expect(await expectRefused(withData(line, () => 'text'), 'invalid-event', line)).toMatch(/whose data is string, not an object$/)
    }
  })

  it('user, assistant, tool-result and header events whose fields the request rebuild reads are wrong', async () => {
    const byType = singleEventLines()
    const cases: [type: string, data: (old: Record<string, unknown>) => unknown, problem: string][] = [
      ['user/message', old => ({ ...old, role: 'assistant' }), 'data.role is not "user"'],
      ['user/message', old => ({ ...old, content: null }), 'data.content is not an array of content blocks'],
      ['user/message', old => ({ ...old, content: [null] }), 'data.content[0] is not a content block ({ type, ... })'],
      ['user/message', old => ({ ...old, content: [{ type: 'text' }] }), 'data.content[0].text is not a string'],
      ['assistant/message', old => ({ ...old, message: {} }), 'message.role is not "assistant"'],
      ['assistant/message', old => ({ ...old, message: null }), 'message is not a message object'],
      ['assistant/message', old => ({ ...old, turn: -1 }), '"turn" is not a non-negative integer'],
      ['assistant/message', old => ({ ...old, message: { ...old['message'] as object, content: [{ type: 'tool-call', id: 'c' }] } }), 'message.content[0] is a tool call without string name and arguments'],
      ['tool/result', old => ({ ...old, message: { ...old['message'] as object, content: [{ type: 'tool-result', content: 'x' }] } }), 'message.content[0].content is not an array of content blocks'],
      ['request/header', () => ({ reason: 'initial' }), 'header is not a request header object'],
      ['request/header', old => ({ ...old, header: { ...old['header'] as object, system: 5 } }), 'header.system is not a string'],
      ['request/header', old => ({ ...old, header: { ...old['header'] as object, tools: {} } }), 'header.tools is not an array'],
      ['step/start', old => ({ ...old, step: '1' }), '"step" is not a non-negative integer'],
    ]
    for (const [type, data, problem] of cases) {
      const line = byType.get(type)!
      expect(await expectRefused(withData(line, data), 'invalid-event', line)).toMatch(new RegExp(`^holds a ${type} event \\(seq \\d+\\) whose data is not what its type declares: ${problem.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`))
    }
  })

  it('a surface replace of a range that is not on the surface is a violation DSH\'s own fold names', async () => {
    const line = lines.findLastIndex(text => JSON.parse(text || 'null')?.type === 'assistant/message') + 1
    const path = edited((copy) => {
      const record = JSON.parse(copy[line - 1]!) as Record<string, unknown>
      copy[line - 1] = JSON.stringify({ ...record, surfaceOp: { op: 'replace', start: 100_000, end: 100_001 } })
    })
    const run = await dshContext('verify', path, '--quiet')
    expect(run.status).toBe(EXIT.violation)
    expect(run.stderr).toMatch(new RegExp(`^dsh-seam verify: .* line ${line} \\(seq \\d+, turn \\d+ step \\d+.*\\): \\[invalid-surface\\] .*refused by DSH's surface fold: \\w*Error: `))
  })

  it('a projection whose fields are not the encoded form is a violation naming its request', async () => {
    const line = lineOfType('request/projection')
    const run = await dshContext('verify', withData(line, old => ({ ...old, include: 'all' })), '--quiet')
    expect(run.status).toBe(EXIT.violation)
    expect(run.stderr).toMatch(new RegExp(`^dsh-seam verify: .* line ${line} \\(seq \\d+, turn \\d+ step \\d+, revision "keep-last-4"\\): \\[malformed-projection\\] .*\\n$`))
  })

  it.each([
    ['5,000 characters', 'r'.repeat(5_000)],
    ['101 emoji (202 code units)', '🌊'.repeat(101)],
  ])('a projection whose revision has %s, which today\'s host never writes, is rebuilt and warned about (exit 3)', async (_name, revision) => {
    const line = lineOfType('request/projection')
    const run = await dshContext('verify', withData(line, old => ({ ...old, revision })))
    expect(run.status).toBe(EXIT.policy)
    expect(run.stdout).toMatch(/: \d+ requests rebuilt from \d+ events; \d+ request\/projection events decode; 1 do not meet today's host policy/)
    expect(run.stderr).toMatch(new RegExp(`^verify: warning: .*:${line}: seq \\d+, turn \\d+ step \\d+, revision ".*": \\[revision\\] request/projection names a revision that is not a string of at most 200 code units; .*\\n$`))
    expect(run.stderr.split('\n')).toHaveLength(2)
  })

  it('a projection whose revision is 100 emoji (200 code units) or carries a control character verifies: the rule is the length', async () => {
    const line = lineOfType('request/projection')
    const run = await dshContext('verify', withData(line, old => ({ ...old, revision: '🌊'.repeat(100) })), '--quiet')
    expect(run).toMatchObject({ status: EXIT.ok, stderr: '' })
    const controlled = await dshContext('verify', withData(line, old => ({ ...old, revision: 'keep\u001b[2Jforged' })), '--quiet')
    expect(controlled).toMatchObject({ status: EXIT.ok, stderr: '' })
  })
})

describe('arguments', () => {
  it.each([
    [[], 'no command: expected inspect, verify, report, show, simulate or setup'],
    [['replay', 'x.jsonl'], 'unknown command "replay": expected inspect, verify, report, show, simulate or setup'],
    [['report', 'a.jsonl'], 'report needs the page to write: -o <report.html>'],
    [['verify', 'a.jsonl', '-o', 'x.html'], 'verify writes no file: -o is for report'],
    [['simulate', 'a.jsonl'], 'simulate needs at least one --policy <module>'],
    [['inspect', 'a.jsonl', '--policy', 'p.js'], 'inspect takes no policy: --policy is for simulate'],
    [['simulate', 'a.jsonl', '--policy'], /^Option '--policy <value>' argument missing/],
    [['verify'], 'verify needs the path of a session log'],
    [['verify', 'a.jsonl', 'b.jsonl'], 'verify takes one session log, but got 1 more argument: "b.jsonl"'],
    [['inspect', 'a.jsonl', '--colour'], /^Unknown option '--colour'/],
    [['inspect', 'a.jsonl', '--json=yes'], /^Option '--json' does not take an argument/],
    [['setup', 'app', 'other'], 'setup takes one app folder, but got 1 more argument: "other"'],
    [['setup', '--pm', 'yarn'], '--pm "yarn": expected pnpm or npm'],
    [['setup', '--pm'], /^Option '--pm <value>' argument missing/],
    [['setup', '--json'], /^Unknown option '--json'/],
    [['--check', 'setup', '-o', 'x.html'], /^Unknown option '-o'/],
  ])('%j exits 2 saying what is wrong, on one line', async (args, problem) => {
    const run = await dshContext(...args)
    expect(run).toMatchObject({ status: EXIT.unreadable, stdout: '' })
    const [, said] = /^dsh-seam: (.*) \(run dsh-seam --help for usage\)\n$/.exec(run.stderr) ?? []
    expect(said).toMatch(problem)
  })

  it('prints its usage with --help', async () => {
    const run = await dshContext('--help')
    expect(run.status).toBe(EXIT.ok)
    expect(run.stdout).toMatch(/^usage: dsh-seam inspect <session.jsonl> \[--json\] \[--quiet\]\n {7}dsh-seam verify <session.jsonl> \[--json\] \[--quiet\]\n/)
  })
})

describe('the executable', () => {
  it('exits 2 with one line and no stack trace for a directory, a null projection and an unknown option', () => {
    const line = lineOfType('request/projection')
    const nulled = edited(copy => { copy[line - 1] = JSON.stringify({ ...JSON.parse(copy[line - 1]!) as object, data: null }) })
    const runs = [runCli('verify', root), runCli('inspect', nulled), runCli('verify', nulled, '--json'), runCli('verify', logPath, 'extra')]
    for (const run of runs) {
      expect(run.status).toBe(EXIT.unreadable)
      expect(run.stderr.split('\n')).toHaveLength(2)
      expect(run.stderr).not.toMatch(/\n\s+at /)
    }
    expect(runs[0]!.stderr).toBe(`dsh-seam verify: session log ${root}: is a directory, not a session log file [not-a-file]\n`)
    expect(runs[1]!.stderr).toMatch(new RegExp(`^dsh-seam inspect: session log ${nulled} line ${line}: holds a request/projection event \\(seq \\d+\\) whose data is null, not an object \\[invalid-event\\]\\n$`))
    expect(JSON.parse(runs[2]!.stdout)).toEqual({ file: nulled, ok: false, error: { code: 'invalid-event', line, message: expect.stringContaining('whose data is null') as unknown } })
  })
})
