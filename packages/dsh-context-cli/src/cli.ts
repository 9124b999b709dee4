/**
 * The `dsh-context` command: `inspect` prints every request of a persisted session log with its projection, `verify`
 * checks every `request/projection` against the host invariants.
 * @module @dsh-context/dsh-context-cli/cli
 */

import { parseArgs } from 'node:util'
import { describeValue, readSessionLog, SessionLogError } from '@dsh-context/agent-context'
import type { LogAnalysis } from './analyze.ts'
import { LogAnalyzer } from './analyze.ts'
import type { ReadLog } from './format.ts'
import { inspectJson, inspectTable, printable, safeJson, verifyJson, violationLine } from './format.ts'
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
  /** Bad arguments, or a file that is not a complete, current session log ({@link SessionLogError}). */
  unreadable: 2,
  /** A fault of `dsh-context` itself (a bug): reported on one line, never as a stack trace. */
  internal: 70,
} as const

/** Logs of at least this many bytes report reading progress on stderr, in tenths of the file. */
export const PROGRESS_MIN_BYTES = 4 << 20

const USAGE = `usage: dsh-context inspect <session.jsonl> [--json] [--quiet]
       dsh-context verify <session.jsonl> [--json] [--quiet]

inspect  every request: turn, step, surface nodes, included nodes, excluded surface runs,
         estimated tokens (DSH token meter), projection revision
verify   rebuild every request from the log and check each request/projection against the host
         invariants (turn/step, surface generation, counts, include ⊆ surface, run order, required
         seqs, whole tool-call units, opening); exit 0 only when all hold
--json   one JSON document on stdout (verify: the verdict and the first violation)
--quiet  no progress output on stderr (given for logs of 4 MiB or more)
exit codes: 0 ok, 1 a host invariant is broken (the first bad event is named by file line, seq,
turn, step and revision), 2 bad arguments or not a readable session log, 70 an internal error
`

const HINT = 'run dsh-context --help for usage'

type Command = 'inspect' | 'verify'

interface Invocation {
  readonly command: Command
  readonly path: string
  readonly json: boolean
  readonly quiet: boolean
}

/** @returns the invocation, `'help'`, or one sentence naming what is wrong with the arguments. */
function parse(argv: readonly string[]): Invocation | 'help' | { readonly problem: string } {
  let parsed
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: { json: { type: 'boolean' }, quiet: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
    })
  } catch (error: unknown) {
    return { problem: (error as Error).message.split('\n')[0] as string }
  }
  const { values, positionals } = parsed
  if (values.help === true) return 'help'
  const [command, path, ...extra] = positionals
  if (command === undefined) return { problem: 'no command: expected inspect or verify' }
  if (command !== 'inspect' && command !== 'verify') return { problem: `unknown command ${JSON.stringify(command)}: expected inspect or verify` }
  if (path === undefined) return { problem: `${command} needs the path of a session log` }
  if (extra.length > 0) return { problem: `${command} takes one session log, but got ${extra.length} more argument${extra.length === 1 ? '' : 's'}: ${extra.map(arg => JSON.stringify(arg)).join(' ')}` }
  return { command, path, json: values.json === true, quiet: values.quiet === true }
}

/** Read and analyze the log in one pass, keeping only the surface and the request summaries. */
async function analyze(path: string, io: CliIo, quiet: boolean): Promise<{ log: ReadLog; analysis: LogAnalysis }> {
  const { pricer, dispose } = await meterPricer()
  const analyzer = new LogAnalyzer(pricer)
  const lines: number[] = []
  let reported = 0
  const progress = (bytes: number, size: number): void => {
    const tenth = Math.floor(bytes * 10 / size)
    if (quiet || size < PROGRESS_MIN_BYTES || tenth <= reported) return
    reported = tenth
    io.stderr.write(`dsh-context: ${(bytes / (1 << 20)).toFixed(1)}/${(size / (1 << 20)).toFixed(1)} MiB read, ${lines.length.toLocaleString('en-US')} events (${tenth * 10}%)\n`)
  }
  try {
    const { header, events } = await readSessionLog(path, (event, line) => {
      lines.push(line)
      analyzer.push(event)
    }, progress)
    return { log: { header, events, lineOf: seq => lines[seq] ?? 0 }, analysis: analyzer.analysis }
  } finally {
    await dispose()
  }
}

async function run({ command, path, json, quiet }: Invocation, io: CliIo): Promise<number> {
  let read
  try {
    read = await analyze(path, io, quiet)
  } catch (error: unknown) {
    if (!(error instanceof SessionLogError)) throw error
    if (json) io.stdout.write(safeJson({ file: path, ok: false, error: { code: error.code, line: error.line ?? null, message: error.message } }))
    io.stderr.write(`dsh-context ${command}: ${printable(error.message)} [${error.code}]\n`)
    return EXIT.unreadable
  }
  const { log, analysis } = read
  if (command === 'inspect') io.stdout.write(json ? inspectJson(log, analysis) : inspectTable(log, analysis))
  if (command === 'verify' && json) io.stdout.write(verifyJson(path, log, analysis))
  if (analysis.violation !== undefined) {
    io.stderr.write(violationLine(command, path, log, analysis.violation))
    return EXIT.violation
  }
  if (command === 'verify' && !json) {
    const projected = analysis.requests.filter(request => request.projectionSeq !== undefined).length
    io.stdout.write(`verified ${printable(path)}: ${analysis.requests.length} requests rebuilt from ${log.events} events; ${projected} request/projection events hold the host invariants\n`)
  }
  return EXIT.ok
}

/**
 * Run `dsh-context` with command-line arguments. Whatever the input, it writes at most one line to stderr about what
 * went wrong and never throws.
 * @param argv - arguments after the executable and script.
 * @param io - output streams.
 * @returns the exit code ({@link EXIT}).
 */
export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  const invocation = parse(argv)
  if (invocation === 'help') {
    io.stdout.write(USAGE)
    return EXIT.ok
  }
  if ('problem' in invocation) {
    io.stderr.write(`dsh-context: ${printable(invocation.problem)} (${HINT})\n`)
    return EXIT.unreadable
  }
  try {
    return await run(invocation, io)
  } catch (error: unknown) {
    io.stderr.write(`dsh-context ${invocation.command}: internal error on ${printable(invocation.path)}: ${printable(describeValue(error))}\n`)
    return EXIT.internal
  }
}
