/**
 * The `dsh-context` command: `inspect` prints every request of a persisted session log with its projection, `verify`
 * checks every `request/projection` against the host invariants.
 * @module @dsh-context/cli/cli
 */

import { stat } from 'node:fs/promises'
import { parseArgs } from 'node:util'
import type { SessionLog } from '@dsh-context/agent-context'
import { readSessionLog, SessionLogError } from '@dsh-context/agent-context'
import type { LogAnalysis } from './analyze.ts'
import { analyzeLog } from './analyze.ts'
import { inspectJson, inspectTable } from './format.ts'
import { meterPricer } from './pricer.ts'

/** Where the command writes. */
export interface CliIo {
  readonly stdout: { write(text: string): unknown }
  readonly stderr: { write(text: string): unknown }
}

/** Exit codes. */
export const EXIT = {
  /** Every request rebuilt and every projection holds. */
  ok: 0,
  /** A request or projection breaks a host invariant. */
  violation: 1,
  /** Bad arguments, or a log that cannot be read (missing, truncated, unknown event type, other format version). */
  unreadable: 2,
} as const

/** Logs with at least this many events report folding progress on stderr, in tenths. */
export const PROGRESS_MIN_EVENTS = 20_000

/** Files of at least this many bytes announce their read on stderr. */
const ANNOUNCE_READ_BYTES = 4 << 20

const USAGE = `usage: dsh-context inspect <session.jsonl> [--json] [--quiet]
       dsh-context verify <session.jsonl> [--quiet]

inspect  every request: turn, step, surface nodes, included nodes, excluded surface runs,
         estimated tokens (DSH token meter), projection revision; --json for machines
verify   rebuild every request from the log and check each request/projection against the host
         invariants (include within the surface, generation, turn/step, counts, required seqs,
         whole tool-call units); exit 0 only when all hold
--quiet  no progress output on stderr
exit codes: 0 ok, 1 a host invariant is broken (the first bad event is named), 2 usage or unreadable log
`

async function load(path: string, io: CliIo, quiet: boolean): Promise<SessionLog> {
  if (!quiet) {
    const size = await stat(path).then(info => info.size, () => 0)
    if (size >= ANNOUNCE_READ_BYTES) io.stderr.write(`dsh-context: reading ${path} (${(size / (1 << 20)).toFixed(1)} MiB)\n`)
  }
  return readSessionLog(path)
}

async function analyze(log: SessionLog, io: CliIo, quiet: boolean): Promise<LogAnalysis> {
  const { pricer, dispose } = await meterPricer()
  let reported = 0
  const progress = quiet || log.events.length < PROGRESS_MIN_EVENTS
    ? undefined
    : (done: number, total: number): void => {
        const tenth = Math.floor(done * 10 / total)
        if (tenth <= reported) return
        reported = tenth
        io.stderr.write(`dsh-context: ${done.toLocaleString('en-US')}/${total.toLocaleString('en-US')} events (${tenth * 10}%)\n`)
      }
  try {
    return analyzeLog(log.events, pricer, progress)
  } finally {
    await dispose()
  }
}

/**
 * Run `dsh-context` with command-line arguments.
 * @param argv - arguments after the executable and script.
 * @param io - output streams.
 * @returns the exit code ({@link EXIT}).
 */
export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  let parsed
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: { json: { type: 'boolean' }, quiet: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
    })
  } catch (error: unknown) {
    io.stderr.write(`dsh-context: ${(error as Error).message}\n${USAGE}`)
    return EXIT.unreadable
  }
  const { values, positionals } = parsed
  if (values.help === true) {
    io.stdout.write(USAGE)
    return EXIT.ok
  }
  const [command, path, ...extra] = positionals
  if ((command !== 'inspect' && command !== 'verify') || path === undefined || extra.length > 0 || (command === 'verify' && values.json === true)) {
    io.stderr.write(USAGE)
    return EXIT.unreadable
  }
  const quiet = values.quiet === true
  let log: SessionLog
  try {
    log = await load(path, io, quiet)
  } catch (error: unknown) {
    if (!(error instanceof SessionLogError)) throw error
    io.stderr.write(`dsh-context: ${error.message}\n`)
    return EXIT.unreadable
  }
  const analysis = await analyze(log, io, quiet)
  if (command === 'inspect') io.stdout.write(values.json === true ? inspectJson(log, analysis) : inspectTable(log, analysis))
  if (analysis.violation !== undefined) {
    io.stderr.write(`dsh-context ${command}: ${path}: ${analysis.violation.message}\n`)
    return EXIT.violation
  }
  if (command === 'verify') {
    const projected = analysis.requests.filter(request => request.projectionSeq !== undefined).length
    io.stdout.write(`verified ${path}: ${analysis.requests.length} requests rebuilt from ${log.events.length} events; ${projected} request/projection events hold the host invariants\n`)
  }
  return EXIT.ok
}
