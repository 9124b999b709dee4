/**
 * P11: log bytes per request, the seam's `request/projection` as the JSONL persistence wrote it against a full request
 * snapshot as an assemble-request design would log it (one `request/assembly` line per request), on the AgentTavern
 * demo's managed session at 300 and 5,000 turns.
 * @module bench/p11-log-bytes
 */

import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { SessionEvent } from '@deepseek-ai/dsh-session'
import { readSessionLog, replayRequests } from '@dsh-seam/agent-context'
import type { SessionReport } from '@dsh-seam/agent-tavern-demo'
import { runSession } from '@dsh-seam/agent-tavern-demo'
import type { Section } from './report.ts'
import { verdict } from './report.ts'
import { median } from './stats.ts'

/** The demo's defaults (`examples/agent-tavern-demo/bin/demo.mjs`), as P4 runs them. */
const DEMO = { contextWindow: 90_000, seed: 7, lang: 'en' as const }

/** Bytes of one JSONL line as the persistence writes it: the JSON text and its newline. */
const lineBytes = (line: string): number => Buffer.byteLength(line, 'utf8') + 1

/** What one session's log measured. */
interface Measured {
  readonly turns: number
  readonly session: SessionReport
  readonly requests: number
  /** Bytes of every `request/projection` line of the file. */
  readonly projection: readonly number[]
  /** Per request: a `request/assembly` line with turn, step, system, tools and messages. */
  readonly snapshot: readonly number[]
  /** Per request: the same line without `tools` (what the prompt assembler's record is shown to hold). */
  readonly snapshotNoTools: readonly number[]
  readonly fileBytes: number
}

/**
 * The line an assemble-request design appends before a request: the session envelope (`type`, `seq`, `time`) of the
 * request's first event, `ignorable: true`, and the request as sent. Its `metadata` (assembly nodes, diagnostics,
 * preset revision) is left out, so the figure is a lower bound for such a design.
 */
function snapshotLine(envelope: SessionEvent, data: Record<string, unknown>): string {
  return JSON.stringify({ type: 'request/assembly', seq: envelope.seq, time: envelope.time, ignorable: true, data })
}

async function measure(turns: number, root: string): Promise<Measured> {
  const session = await runSession('agent-managed', { ...DEMO, turns, persistRoot: root })
  if (session.log === undefined || session.errors.length > 0) throw new Error(`P11: the ${turns}-turn session failed: ${session.errors[0] ?? 'no log'}`)
  const text = readFileSync(session.log, 'utf8')
  const projection = text.split('\n').filter(line => line.startsWith('{"type":"request/projection"')).map(lineBytes)
  const { events } = await readSessionLog(session.log)
  const bySeq = new Map(events.map(event => [event.seq, event]))
  const snapshot: number[] = []
  const snapshotNoTools: number[] = []
  for (const request of replayRequests(events)) {
    const first = bySeq.get(request.seq) as SessionEvent
    const { system, tools } = request.header ?? {}
    const base = { turn: request.turn, step: request.step, ...system === undefined ? {} : { system } }
    snapshot.push(lineBytes(snapshotLine(first, { ...base, ...tools === undefined ? {} : { tools }, messages: request.messages })))
    snapshotNoTools.push(lineBytes(snapshotLine(first, { ...base, messages: request.messages })))
  }
  return { turns, session, requests: snapshot.length, projection, snapshot, snapshotNoTools, fileBytes: Buffer.byteLength(text, 'utf8') }
}

const sum = (values: readonly number[]): number => values.reduce((a, b) => a + b, 0)
const count = (value: number): string => Math.round(value).toLocaleString('en-US')
const mib = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(2)} MiB`

/**
 * @param quick - 100 and 1,000 turns instead of 300 and 5,000.
 * @param log - progress sink.
 * @returns the P11 section.
 */
export async function benchLogBytes(quick: boolean, log: (line: string) => void): Promise<Section> {
  const sizes = quick ? [100, 1_000] : [300, 5_000]
  const root = mkdtempSync(join(tmpdir(), 'dsh-seam-p11-'))
  const runs: Measured[] = []
  try {
    for (const turns of sizes) {
      const started = performance.now()
      runs.push(await measure(turns, join(root, `${turns}`)))
      log(`P11 ${turns} turns: ${((performance.now() - started) / 1000).toFixed(0)} s`)
    }
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
  const rebuilt = runs.every(run => run.session.rows.length === run.requests && run.session.rows.every(row => row.diff === undefined))
  const ratios = runs.map(run => median(run.snapshot) / median(run.projection))
  const rows = runs.flatMap(run => {
    const withSnapshots = (perRequest: readonly number[]): number => run.fileBytes - sum(run.projection) + sum(perRequest)
    return [
      [`${count(run.turns)}`, '`request/projection` (ours, as written)', `${count(run.requests)} / ${count(run.projection.length)}`,
        count(median(run.projection)), count(Math.max(...run.projection)), count(sum(run.projection) / run.requests), mib(run.fileBytes)],
      [`${count(run.turns)}`, '`request/assembly`: system, tools, messages', `${count(run.requests)} / ${count(run.snapshot.length)}`,
        count(median(run.snapshot)), count(Math.max(...run.snapshot)), count(sum(run.snapshot) / run.requests), mib(withSnapshots(run.snapshot))],
      [`${count(run.turns)}`, '`request/assembly`: system, messages (no tools)', `${count(run.requests)} / ${count(run.snapshotNoTools.length)}`,
        count(median(run.snapshotNoTools)), count(Math.max(...run.snapshotNoTools)), count(sum(run.snapshotNoTools) / run.requests), mib(withSnapshots(run.snapshotNoTools))],
    ]
  })
  return {
    id: 'P11',
    title: 'Log bytes per request: seq-range selection vs. full request snapshots',
    method: `\`runSession('agent-managed')\` from \`@dsh-seam/agent-tavern-demo\` (seed ${DEMO.seed}, English, ${count(DEMO.contextWindow)}-token window, `
      + 'DSH\'s invariants on, projection-aware compaction), persisted by DSH\'s JSONL persistence, at '
      + `${sizes.map(count).join(' and ')} turns. Ours: the bytes of every \`request/projection\` line in the file (UTF-8 JSON and its newline). `
      + 'Snapshot: for every request the log rebuilds (`replayRequests`, checked equal to what the provider received), one JSONL line '
      + '`{ type: "request/assembly", seq, time, ignorable: true, data }` with `data` = `{ turn, step, system, tools, messages }` of the '
      + 'request as sent (the prompt assembler\'s record holds `turn`, `step`, the request\'s `messages` and an assembly `metadata`; on '
      + '0.2 the system prompt is an in-history message, so it is counted; `metadata` is not, so the snapshot figures are lower bounds). '
      + 'A second snapshot row leaves `tools` out. Whole log: the file as written, and the same file with every `request/projection` '
      + 'line removed and one snapshot line per request added.',
    target: 'measured, not estimated: per-request median and max both ways, and the whole log both ways',
    verdict: verdict(rebuilt, rebuilt
      ? runs.map((run, i) => `${count(run.turns)} turns: snapshot median ×${(ratios[i] as number).toFixed(0)} of a projection`).join('; ')
      : 'a request did not rebuild from the log, so the snapshot sizes are not the sent requests'),
    table: {
      columns: ['turns', 'per-request record', 'requests / lines', 'median bytes per line', 'max bytes per line', 'mean bytes per request', 'whole log'],
      rows,
    },
    notes: runs.map(run => `${count(run.turns)} turns: ${count(run.requests)} requests, ${count(run.projection.length)} projected `
      + `(a default request logs no \`request/projection\`), ${run.session.compactions} compactions; the JSONL file is ${count(run.fileBytes)} bytes.`),
  }
}
