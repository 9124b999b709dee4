/**
 * P3-cli: `dsh-seam verify` as an operator runs it, a child process on recorded session logs of 1k, 4k and 8k
 * turns, timed and with its peak resident memory.
 * @module bench/p3-cli
 */

import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { CLI_BIN } from '@dsh-seam/cli'
import { bootLoop, conversationReply, conversationTurn, keepLastNodes, patchedDsh, sessionLogPath } from '@dsh-seam/loop-testkit'
import type { Section } from './report.ts'
import { verdict } from './report.ts'
import { median, significant } from './stats.ts'

/** Largest growth of verify time per 4× turns, start-up subtracted. */
const TARGET_GROWTH_PER_4X = 5
/** Largest peak resident memory above start-up, as a multiple of the log file's size. */
const TARGET_MEMORY_PER_FILE_BYTE = 2
const RUNS = 3

/**
 * Written beside the logs and preloaded into each child (the command's worker inherits it and stays silent): when the
 * process exits, its peak RSS (KiB) and CPU time (µs, all threads) go to fd 3.
 */
const USAGE_PRELOAD = `if (require('node:worker_threads').isMainThread) process.on('exit', () => {
  const usage = process.resourceUsage()
  require('node:fs').writeSync(3, usage.maxRSS + ' ' + (usage.userCPUTime + usage.systemCPUTime))
})
`

/**
 * Record one conversation on the patched loop, persisted as JSONL (every third turn calls `echo`; an agent-scoped
 * listener keeps the last 6 nodes), and cut it after the `turn/end` of each size.
 * @returns the log file of each size.
 */
export async function recordLogs(dir: string, sizes: readonly number[], log: (line: string) => void): Promise<Map<number, string>> {
  const loop = await bootLoop(await patchedDsh(), { invariants: false, persistRoot: join(dir, 'sessions'), fallback: conversationReply() })
  const agent = loop.create('p3-cli')
  agent.ctx.on('agent/context', keepLastNodes(6))
  const turns = sizes.at(-1) as number
  const started = performance.now()
  for (let turn = 1; turn <= turns; turn++) {
    await loop.say(agent, conversationTurn(turn))
    if (turn % 2000 === 0) log(`P3-cli recording: turn ${turn}/${turns} (${((performance.now() - started) / 1000).toFixed(0)} s)`)
  }
  if (loop.errors.length > 0) throw new Error(`P3-cli recording failed: ${String(loop.errors[0]?.error)}`)
  await loop.ctx.sessions.flush(agent.session)
  const lines = readFileSync(sessionLogPath(loop, agent), 'utf8').split('\n')
  const files = new Map<number, string>([[0, join(dir, 'header-only.jsonl')]])
  writeFileSync(files.get(0) as string, `${lines[0]}\n`)
  for (const size of sizes) {
    const end = lines.findIndex(line => line.startsWith('{"type":"turn/end"') && (JSON.parse(line) as { data: { turn: number } }).data.turn === size)
    if (end === -1) throw new Error(`P3-cli: the recorded log has no turn ${size}`)
    const path = join(dir, `turns-${size}.jsonl`)
    writeFileSync(path, `${lines.slice(0, end + 1).join('\n')}\n`)
    files.set(size, path)
  }
  await (loop.ctx as unknown as { fiber: { dispose(): Promise<unknown> } }).fiber.dispose()
  return files
}

interface Run {
  readonly ms: number
  readonly cpuMs: number
  readonly peakRssBytes: number
  readonly summary: string
}

function verifyOnce(path: string, preload: string): Run {
  const started = performance.now()
  const child = spawnSync(process.execPath, ['--require', preload, CLI_BIN, 'verify', path, '--quiet'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe', 'pipe'] })
  const ms = performance.now() - started
  if (child.status !== 0) throw new Error(`P3-cli: dsh-seam verify ${path} exited ${child.status}: ${child.stderr}`)
  const [rssKib, cpuMicros] = String(child.output[3]).split(' ').map(Number) as [number, number]
  return { ms, cpuMs: cpuMicros / 1000, peakRssBytes: rssKib * 1024, summary: child.stdout.trim() }
}

function verifyMedian(path: string, preload: string): Run {
  const runs = Array.from({ length: RUNS }, () => verifyOnce(path, preload))
  return {
    ms: median(runs.map(run => run.ms)),
    cpuMs: median(runs.map(run => run.cpuMs)),
    peakRssBytes: median(runs.map(run => run.peakRssBytes)),
    summary: (runs[0] as Run).summary,
  }
}

const MIB = 1 << 20

/**
 * @param quick - logs of 250, 1,000 and 2,000 turns.
 * @param log - progress sink.
 * @returns the P3-cli section.
 */
export async function benchCli(quick: boolean, log: (line: string) => void): Promise<Section> {
  const sizes = quick ? [250, 1_000, 2_000] : [1_000, 4_000, 8_000]
  const dir = mkdtempSync(join(tmpdir(), 'bench-p3-cli-'))
  try {
    const files = await recordLogs(dir, sizes, log)
    const preload = join(dir, 'usage.cjs')
    writeFileSync(preload, USAGE_PRELOAD)
    const startup = verifyMedian(files.get(0) as string, preload)
    const points = sizes.map(size => {
      const path = files.get(size) as string
      const run = verifyMedian(path, preload)
      log(`P3-cli ${size} turns: ${significant(run.ms / 1000)} s (CPU ${significant(run.cpuMs / 1000)} s), peak RSS ${significant(run.peakRssBytes / MIB)} MiB`)
      return { size, path, bytes: statSync(path).size, run, workMs: Math.max(run.cpuMs - startup.cpuMs, 1), memory: (run.peakRssBytes - startup.peakRssBytes) / statSync(path).size }
    })
    const growth = points.slice(1).map((point, i) => {
      const previous = points[i] as (typeof points)[number]
      return (point.workMs / previous.workMs) ** (Math.log(4) / Math.log(point.size / previous.size))
    })
    const rows = points.map((point, i) => {
      const counts = /(\d+) requests rebuilt from (\d+) events/.exec(point.run.summary)
      return [
        point.size.toLocaleString('en-US'),
        counts === null ? '?' : `${Number(counts[2]).toLocaleString('en-US')} / ${Number(counts[1]).toLocaleString('en-US')}`,
        significant(point.bytes / MIB),
        significant(point.run.ms / 1000),
        significant(point.run.cpuMs / 1000),
        significant(point.workMs / 1000),
        i === 0 ? '-' : `×${significant(growth[i - 1] as number, 2)}`,
        significant(point.run.peakRssBytes / MIB),
        `×${significant(point.memory, 2)}`,
      ]
    })
    const worstGrowth = Math.max(...growth)
    const largest = points.at(-1) as (typeof points)[number]
    return {
      id: 'P3-cli',
      title: '`dsh-seam verify` on recorded logs',
      method: 'A real patched loop records one conversation persisted as JSONL (every third turn calls `echo`; an '
        + 'agent-scoped listener keeps the last 6 nodes, so nearly every request carries a `request/projection`); the '
        + `logs are its first ${sizes.map(size => size.toLocaleString('en-US')).join(', ')} turns. \`dsh-seam verify --quiet\` `
        + `runs as a child process (median of ${RUNS}); start-up is the same run on the header-only log. CPU time (all `
        + 'threads) and peak RSS are the child\'s `process.resourceUsage()`, taken at exit by a preloaded module; growth is '
        + 'measured on CPU time, which other load on a shared machine does not inflate, and normalized to a 4× step in turns.',
      target: `verify CPU time (start-up subtracted) grows ≤ ×${TARGET_GROWTH_PER_4X} per 4× turns; peak RSS above start-up ≤ ${TARGET_MEMORY_PER_FILE_BYTE}× the file size on the largest log`,
      verdict: verdict(
        worstGrowth <= TARGET_GROWTH_PER_4X && largest.memory <= TARGET_MEMORY_PER_FILE_BYTE,
        `growth ≤ ×${significant(worstGrowth, 2)} per 4×, memory ×${significant(largest.memory, 2)} the file at ${largest.size.toLocaleString('en-US')} turns`,
      ),
      table: {
        columns: ['turns', 'events / requests', 'file MiB', 'verify s', 'CPU s', 'CPU minus start-up s', 'growth per 4×', 'peak RSS MiB', 'RSS above start-up / file'],
        rows,
      },
      notes: [
        `Start-up (header-only log): ${significant(startup.ms / 1000)} s, CPU ${significant(startup.cpuMs / 1000)} s, peak RSS ${significant(startup.peakRssBytes / MIB)} MiB.`,
        'The command reads the log a megabyte at a time and keeps only the surface\'s message-bearing nodes; it runs in a '
          + 'worker with a 4 MiB young generation, so parse garbage does not inflate the peak. On small logs a fixed few MiB '
          + 'of heap growth (compiled code, heap pages) weighs more, hence the larger ratio there.',
        'Before issue 12 the CLI rebuilt the tool-call units of the whole surface for every projected request, so verify '
          + 'grew with requests × surface (1k/2k/4k/8k turns: 0.66/1.4/4.1/17.5 s). It now checks each projection with '
          + 'the core\'s `decodeProjection` over an index kept as the surface grows, so a request costs what it sends.',
      ],
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
