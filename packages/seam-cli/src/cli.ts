/**
 * The `dsh-seam` command: `inspect` prints every request of a persisted session log with its projection, `verify`
 * checks every `request/projection` against the host invariants, `setup` installs the seam's patches into a DSH app.
 * @module @dsh-seam/cli/cli
 */

import { statSync, writeFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import type { SessionEvent } from '@deepseek-ai/dsh-session'
import { describeFailure, readSessionLog, SessionLogError } from '@dsh-seam/agent-context'
import type { LogAnalysis, LogViolation, TokenPricer } from './analyze.ts'
import { LogAnalyzer } from './analyze.ts'
import type { ReadLog } from './format.ts'
import { inspectJson, inspectTable, policyWarning, printable, reportJson, reportLine, safeJson, simulationJson, simulationTables, verifyJson, violationLine } from './format.ts'
import { loggedTokens } from './figures.ts'
import { meterPricer } from './pricer.ts'
import { ReportBuilder } from './report.ts'
import { reportHtml } from './report-html.ts'
import type { LoadedPolicy } from './policy-host.ts'
import { LISTENER_TIMEOUT_MS, loadPolicy, PolicyError } from './policy-host.ts'
import type { ShownRequest } from './show.ts'
import { shownRequest, shownText } from './show.ts'
import { simulate } from './simulate.ts'
import { planSetup, SetupError, setupReport, writeSetup } from './setup.ts'

/** Where the command writes. */
export interface CliIo {
  readonly stdout: { write(text: string): unknown }
  /** `isTTY`: whether stderr is a terminal (`report` and `simulate` show progress only then). */
  readonly stderr: { write(text: string): unknown; readonly isTTY?: boolean }
}

/** Exit codes. */
export const EXIT = {
  /** Every request rebuilt and every projection holds. */
  ok: 0,
  /** A request or projection breaks a host invariant. */
  violation: 1,
  /** `setup --check`: setup would change the app. */
  outdated: 1,
  /**
   * `verify`: every request rebuilt, but a projection leaves out what today's host would send (a log written under an
   * earlier host rule): the findings are printed as warnings.
   */
  policy: 3,
  /** Bad arguments, a file that is not a complete, current session log ({@link SessionLogError}), or a refused `setup` ({@link SetupError}). */
  unreadable: 2,
  /** A fault of `dsh-seam` itself (a bug): reported on one line, never as a stack trace. */
  internal: 70,
} as const

/** Logs of at least this many bytes report reading progress on stderr, in tenths of the file. */
export const PROGRESS_MIN_BYTES = 4 << 20

/** `simulate` reports replay progress, in tenths, on logs of at least this many events (when stderr is a terminal). */
const PROGRESS_MIN_EVENTS = 20_000

const USAGE = `usage: dsh-seam inspect <session.jsonl> [--json] [--quiet]
       dsh-seam verify <session.jsonl> [--json] [--quiet]
       dsh-seam report <session.jsonl> -o <report.html | -> [--json] [--quiet]
       dsh-seam show <session.jsonl> --request <n> [--json] [--quiet]
       dsh-seam simulate <session.jsonl> --policy <module> [--policy <module> ...] [--listener-timeout <ms>]
                [--report <page.html>] [--json] [--quiet]
       dsh-seam setup [dir] [--pm pnpm|npm] [--check] [--no-patches]

inspect  every request: turn, step, surface nodes, included nodes, excluded surface runs,
         estimated tokens (DSH token meter), projection revision
verify   rebuild every request from the log and check each request/projection against the host
         invariants (turn/step, surface generation, counts, include ⊆ surface, run order, required
         seqs, whole tool-call units, opening); exit 0 only when all hold
report   one self-contained HTML page (offline): the map of requests × surface nodes (sent, required,
         left out, replaced by compaction), per-request tokens against the surface, provider usage
         and the recorded context window, revision, cache break, stale seqs, composition; 200
         requests per map page or the whole session; why a node was left out and since when, a
         request's messages in full, the diff of two requests, search, go to request/turn/seq.
         -o - writes the page to stdout; -o naming the log itself is refused
show     one request as the model was sent it: its figures (tokens, % of the recorded context
         window, revision), system prompt, tools and every message in full, in the order sent
simulate replay the log's requests under each agent/context policy module (it exports
         createListener({ agent, meter }), optionally name and probes(turns)) through the host's
         normalizer, with no model call: tokens sent (sum, peak, p95), prefix reuse, host additions,
         probes (the planted input and the fact sent), requests over the recorded context window,
         and each figure against the recorded selection. Each module runs in a worker of its own with
         full Node privileges (run only modules you trust); its console output goes to stderr
--report simulate: also write the report page with a selection switch: the recorded map and each
         policy's map over the same nodes, with the reasons a policy gave for what it left out
--listener-timeout  simulate: longest call of a policy (loading it, building or running its
         listener), in ms (default ${LISTENER_TIMEOUT_MS}); a policy that does not return, exits or
         throws outside its listener fails on one line naming the policy and the request
setup    install the seam's patches into the DSH app in dir (default: the current folder): pin every
         DSH package to 0.1.0-rc.8 (a range that admits it is rewritten, another version is refused),
         override the whole DSH 0.1.0-rc.8 set and the cordis packages it was built with, allow
         koffi's build, copy the patches into dir/patches/ and register them:
         pnpm 9 and 10 in package.json's pnpm field, pnpm 11 in pnpm-workspace.yaml, npm through
         patch-package (postinstall); the manager comes from --pm, packageManager (or devEngines),
         the lockfile or the manager running setup, pnpm's version from packageManager or
         pnpm --version. Prints what it wrote and the next command; a second run writes nothing.
--check  setup writes nothing: exit 1 when it would change something, 0 when the app is set up
--no-patches  setup pins the versions and allows koffi's build, without the patches (stock DSH)
--json   one JSON document on stdout (verify: the verdict and the first violation)
--quiet  no progress output on stderr (inspect and verify: logs of 4 MiB or more; report and
         simulate: the same, when stderr is a terminal)
exit codes: 0 ok, 1 a host invariant is broken (the first bad event is named by file line, seq,
turn, step and revision) or setup --check found the app not set up, 2 bad arguments, not a readable
session log or a refused setup (one line), 70 an internal error
`

const HINT = 'run dsh-seam --help for usage'

const COMMANDS = ['inspect', 'verify', 'report', 'show', 'simulate', 'setup'] as const
type Command = Exclude<(typeof COMMANDS)[number], 'setup'>

/** `dsh-seam setup [dir] [--pm pnpm|npm] [--check] [--no-patches]`. */
interface SetupInvocation {
  readonly command: 'setup'
  readonly dir: string
  readonly pm?: 'pnpm' | 'npm'
  readonly check: boolean
  readonly pinsOnly: boolean
}

const PACKAGE_MANAGERS = ['pnpm', 'npm'] as const

interface Invocation {
  readonly command: Command
  readonly path: string
  readonly json: boolean
  readonly quiet: boolean
  /** `report`: the page to write. */
  readonly output?: string
  /** `simulate`: the policy modules. */
  readonly policies: readonly string[]
  /** `simulate`: the longest call of a policy, in ms. */
  readonly timeoutMs: number
  /** `show`: the request, 1-based. */
  readonly request?: number
  /** `simulate --report`: the page drawing each policy beside the recorded selection. */
  readonly page?: string
}

type Problem = { readonly problem: string }

function firstLine(error: unknown): Problem {
  return { problem: (error as Error).message.split('\n')[0] as string }
}

/** @returns the `setup` invocation, `'help'`, or what is wrong with its arguments. */
function parseSetup(argv: readonly string[]): SetupInvocation | 'help' | Problem {
  let parsed
  try {
    parsed = parseArgs({ args: [...argv], allowPositionals: true, options: { pm: { type: 'string' }, check: { type: 'boolean' }, 'no-patches': { type: 'boolean' }, help: { type: 'boolean', short: 'h' } } })
  } catch (error: unknown) {
    return firstLine(error)
  }
  const { values, positionals } = parsed
  if (values.help === true) return 'help'
  const [, dir = '.', ...extra] = positionals
  if (extra.length > 0) return { problem: `setup takes one app folder, but got ${extra.length} more argument${extra.length === 1 ? '' : 's'}: ${extra.map(arg => JSON.stringify(arg)).join(' ')}` }
  const { pm } = values
  if (pm !== undefined && !(PACKAGE_MANAGERS as readonly string[]).includes(pm)) return { problem: `--pm ${JSON.stringify(pm)}: expected pnpm or npm` }
  return { command: 'setup', dir, check: values.check === true, pinsOnly: values['no-patches'] === true, ...pm === undefined ? {} : { pm: pm as SetupInvocation['pm'] & string } }
}

/** @returns the invocation, `'help'`, or one sentence naming what is wrong with the arguments. */
function parse(argv: readonly string[]): Invocation | SetupInvocation | 'help' | Problem {
  const [first] = parseArgs({ args: [...argv], allowPositionals: true, strict: false, options: { output: { type: 'string', short: 'o' }, policy: { type: 'string' }, pm: { type: 'string' } } }).positionals
  if (first === 'setup') return parseSetup(argv)
  let parsed
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        json: { type: 'boolean' },
        quiet: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
        output: { type: 'string', short: 'o' },
        policy: { type: 'string', multiple: true },
        'listener-timeout': { type: 'string' },
        request: { type: 'string' },
        report: { type: 'string' },
      },
    })
  } catch (error: unknown) {
    return firstLine(error)
  }
  const { values, positionals } = parsed
  if (values.help === true) return 'help'
  const [command, path, ...extra] = positionals
  const expected = `expected ${COMMANDS.slice(0, -1).join(', ')} or ${COMMANDS.at(-1) as string}`
  if (command === undefined) return { problem: `no command: ${expected}` }
  if (!(COMMANDS as readonly string[]).includes(command)) return { problem: `unknown command ${JSON.stringify(command)}: ${expected}` }
  const known = command as Command
  if (path === undefined) return { problem: `${known} needs the path of a session log` }
  if (extra.length > 0) return { problem: `${known} takes one session log, but got ${extra.length} more argument${extra.length === 1 ? '' : 's'}: ${extra.map(arg => JSON.stringify(arg)).join(' ')}` }
  const policies = values.policy ?? []
  if (known === 'report' && (values.output === undefined || values.output === '')) return { problem: 'report needs the page to write: -o <report.html>' }
  if (known !== 'report' && values.output !== undefined) return { problem: `${known} writes no file: -o is for report` }
  if (values.output === '-' && values.json === true) return { problem: 'report -o - writes the page to stdout: --json cannot share it' }
  if (known === 'simulate' && policies.length === 0) return { problem: 'simulate needs at least one --policy <module>' }
  if (known !== 'simulate' && policies.length > 0) return { problem: `${known} takes no policy: --policy is for simulate` }
  const timeout = values['listener-timeout']
  if (known !== 'simulate' && timeout !== undefined) return { problem: `${known} runs no policy: --listener-timeout is for simulate` }
  const timeoutMs = timeout === undefined ? LISTENER_TIMEOUT_MS : Number(timeout)
  if (!/^\d+$/.test(timeout ?? '0') || !Number.isSafeInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > 2 ** 31 - 1) return { problem: `--listener-timeout ${JSON.stringify(timeout)}: expected a whole number of milliseconds from 1 to ${2 ** 31 - 1}` }
  const { request, report: page } = values
  if (known !== 'simulate' && page !== undefined) return { problem: `${known} draws no policy: --report <page.html> is for simulate (report writes with -o)` }
  if (page === '' || page === '-') return { problem: 'simulate --report needs a file for the page (its stdout holds the tables)' }
  if (known !== 'show' && request !== undefined) return { problem: `${known} shows no single request: --request is for show` }
  if (known === 'show' && request === undefined) return { problem: 'show needs the request to show: --request <n> (1 is the first, as inspect numbers them)' }
  if (request !== undefined && (!/^\d+$/.test(request) || !Number.isSafeInteger(Number(request)) || Number(request) < 1)) return { problem: `--request ${JSON.stringify(request)}: expected a request number from 1` }
  return {
    command: known, path, json: values.json === true, quiet: values.quiet === true, policies, timeoutMs,
    ...values.output === undefined ? {} : { output: values.output }, ...request === undefined ? {} : { request: Number(request) },
    ...page === undefined ? {} : { page },
  }
}

/**
 * Read a log once, handing each event to `visit`, with a progress line per tenth of a file of
 * {@link PROGRESS_MIN_BYTES} or more unless `quiet`; `ttyOnly` also requires stderr to be a terminal.
 */
async function readLog(path: string, io: CliIo, quiet: boolean, ttyOnly: boolean, visit: (event: SessionEvent) => void): Promise<ReadLog> {
  const lines: number[] = []
  let reported = 0
  const silent = quiet || (ttyOnly && io.stderr.isTTY !== true)
  const progress = (bytes: number, size: number): void => {
    const tenth = Math.floor(bytes * 10 / size)
    if (silent || size < PROGRESS_MIN_BYTES || tenth <= reported) return
    reported = tenth
    io.stderr.write(`dsh-seam: ${(bytes / (1 << 20)).toFixed(1)}/${(size / (1 << 20)).toFixed(1)} MiB read, ${lines.length.toLocaleString('en-US')} events (${tenth * 10}%)\n`)
  }
  const { header, events } = await readSessionLog(path, (event, line) => {
    lines.push(line)
    visit(event)
  }, progress)
  return { header, events, lineOf: seq => lines[seq] ?? 0 }
}

/** What a command printed and its exit code, after the log was read. */
type Outcome = Promise<number>

async function inspectOrVerify({ command, path, json, quiet }: Invocation, io: CliIo, pricer: TokenPricer): Outcome {
  const analyzer = new LogAnalyzer(pricer)
  const log = await readLog(path, io, quiet, false, event => analyzer.push(event))
  const { analysis } = analyzer
  if (command === 'inspect') io.stdout.write(json ? inspectJson(log, analysis) : inspectTable(log, analysis))
  if (command === 'verify' && json) io.stdout.write(verifyJson(path, log, analysis))
  if (analysis.violation !== undefined) return violated(command, path, log, analysis, io)
  const findings = analysis.requests.filter(request => request.policy !== undefined)
  if (command === 'verify' && !json) {
    const projected = analysis.requests.filter(request => request.projectionSeq !== undefined).length
    for (const request of findings) io.stderr.write(policyWarning(path, log, request))
    const held = findings.length === 0 ? 'hold the host invariants' : `decode; ${findings.length} do not meet today's host policy (warnings above)`
    io.stdout.write(`verified ${printable(path)}: ${analysis.requests.length} requests rebuilt from ${log.events} events; ${projected} request/projection events ${held}\n`)
  }
  return command === 'verify' && findings.length > 0 ? EXIT.policy : EXIT.ok
}

function violated(command: Command, path: string, log: ReadLog, analysis: LogAnalysis, io: CliIo): number {
  io.stderr.write(violationLine(command, path, log, analysis.violation as LogViolation))
  return EXIT.violation
}

/** Whether two paths name one file (the same device and inode); false when either does not exist. */
function sameFile(a: string, b: string): boolean {
  try {
    const [x, y] = [statSync(a), statSync(b)]
    return x.dev === y.dev && x.ino === y.ino
  } catch {
    // A path that does not exist (the page not written yet) is not the log.
    return false
  }
}

/** One line when a page would overwrite the log it is drawn from (checked before the log is read). */
function pageOverLog(command: Command, flag: string, path: string, page: string, io: CliIo): boolean {
  if (!sameFile(path, page)) return false
  io.stderr.write(`dsh-seam ${command}: ${flag} ${printable(page)} is the session log being read: name another file for the page\n`)
  return true
}

/** Write a page; one line naming the errno when it cannot be written. */
function writePage(command: Command, page: string, html: string, io: CliIo): boolean {
  try {
    writeFileSync(page, html)
    return true
  } catch (error: unknown) {
    const code = (error as NodeJS.ErrnoException).code
    io.stderr.write(`dsh-seam ${command}: cannot write ${printable(page)}: ${printable(typeof code === 'string' ? code : describeFailure(error))}\n`)
    return false
  }
}

async function report({ path, json, quiet, output }: Invocation, io: CliIo, pricer: TokenPricer): Outcome {
  if (output !== '-' && pageOverLog('report', '-o', path, output as string, io)) return EXIT.unreadable
  const builder = new ReportBuilder(pricer)
  const analyzer = new LogAnalyzer(pricer, builder.observe)
  const log = await readLog(path, io, quiet, true, event => {
    analyzer.push(event)
    builder.push(event)
  })
  const model = builder.model(path, String(log.header.id), log.events)
  const page = reportHtml(model)
  const { analysis } = analyzer
  if (output === '-') io.stdout.write(page)
  else if (!writePage('report', output as string, page, io)) return EXIT.unreadable
  else io.stdout.write(json ? reportJson(output as string, model, analysis, log) : reportLine(output as string, model, Buffer.byteLength(page)))
  return analysis.violation === undefined ? EXIT.ok : violated('report', path, log, analysis, io)
}

async function show({ path, json, quiet, request }: Invocation, io: CliIo, pricer: TokenPricer): Outcome {
  let shown: ShownRequest | undefined
  let window: number | undefined
  let requests = 0
  const analyzer = new LogAnalyzer(pricer, (summary, view) => {
    if (++requests === request) shown = shownRequest(requests, summary, view, pricer, window)
  })
  const log = await readLog(path, io, quiet, false, event => {
    window = loggedTokens(event).window ?? window
    analyzer.push(event)
  })
  const { analysis } = analyzer
  if (shown === undefined) {
    if (analysis.violation !== undefined) return violated('show', path, log, analysis, io)
    io.stderr.write(`dsh-seam show: ${printable(path)} holds ${requests} request${requests === 1 ? '' : 's'}: there is no request ${request as number}\n`)
    return EXIT.unreadable
  }
  io.stdout.write(json ? safeJson({ file: path, session: log.header.id, ...shown }) : shownText(shown, requests, printable))
  return analysis.violation === undefined ? EXIT.ok : violated('show', path, log, analysis, io)
}

async function simulateCommand({ path, json, quiet, policies, timeoutMs, page }: Invocation, io: CliIo, pricer: TokenPricer): Outcome {
  if (page !== undefined && pageOverLog('simulate', '--report', path, page, io)) return EXIT.unreadable
  const loaded: LoadedPolicy[] = []
  const events: SessionEvent[] = []
  let log: ReadLog
  try {
    for (const module of policies) loaded.push(await loadPolicy(module, { timeoutMs, output: text => io.stderr.write(text) }))
    log = await readLog(path, io, quiet, true, event => { events.push(event) })
  } catch (error: unknown) {
    await Promise.all(loaded.map(policy => policy.close()))
    throw error
  }
  let reported = 0
  const progress = quiet || io.stderr.isTTY !== true || events.length < PROGRESS_MIN_EVENTS ? undefined : (done: number, total: number): void => {
    const tenth = Math.floor(done * 10 / total)
    if (tenth <= reported) return
    reported = tenth
    io.stderr.write(`dsh-seam: ${done.toLocaleString('en-US')}/${total.toLocaleString('en-US')} events replayed under ${loaded.length + 1} selections (${tenth * 10}%)\n`)
  }
  const simulation = await simulate(log.header, events, loaded, { pricer, ...progress === undefined ? {} : { progress }, ...page === undefined ? {} : { report: { file: path } } })
  if (simulation.report !== undefined && !writePage('simulate', page as string, reportHtml(simulation.report), io)) return EXIT.unreadable
  io.stdout.write(json ? simulationJson(path, log, simulation, page) : simulationTables(path, log, simulation, page))
  return simulation.analysis.violation === undefined ? EXIT.ok : violated('simulate', path, log, simulation.analysis, io)
}

const COMMAND_RUNS: Record<Command, (invocation: Invocation, io: CliIo, pricer: TokenPricer) => Outcome> = {
  inspect: inspectOrVerify,
  verify: inspectOrVerify,
  report,
  show,
  simulate: simulateCommand,
}

async function run(invocation: Invocation, io: CliIo): Promise<number> {
  const { command, path, json } = invocation
  const { pricer, dispose } = await meterPricer()
  try {
    return await COMMAND_RUNS[command](invocation, io, pricer)
  } catch (error: unknown) {
    if (error instanceof PolicyError) {
      if (json) io.stdout.write(safeJson({ file: path, ok: false, error: { code: error.code, policy: error.policy, message: error.message } }))
      io.stderr.write(`dsh-seam ${command}: ${printable(error.message)} [${error.code}]\n`)
      return EXIT.unreadable
    }
    if (!(error instanceof SessionLogError)) throw error
    if (json) io.stdout.write(safeJson({ file: path, ok: false, error: { code: error.code, line: error.line ?? null, message: error.message } }))
    io.stderr.write(`dsh-seam ${command}: ${printable(error.message)} [${error.code}]\n`)
    return EXIT.unreadable
  } finally {
    await dispose()
  }
}

/** `setup`: plan, then write unless `--check`; a refusal is one line and exit 2, with nothing written. */
function setupCommand({ dir, pm, check, pinsOnly }: SetupInvocation, io: CliIo): number {
  try {
    const plan = planSetup({ dir, pinsOnly, ...pm === undefined ? {} : { pm } })
    if (!check) writeSetup(plan)
    io.stdout.write(setupReport(plan, check, printable))
    return check && plan.files.length > 0 ? EXIT.outdated : EXIT.ok
  } catch (error: unknown) {
    if (!(error instanceof SetupError)) throw error
    io.stderr.write(`dsh-seam setup: ${printable(error.message)} [${error.code}]\n`)
    return EXIT.unreadable
  }
}

/**
 * Run `dsh-seam` with command-line arguments. Whatever the input, it writes at most one line to stderr about what
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
    io.stderr.write(`dsh-seam: ${printable(invocation.problem)} (${HINT})\n`)
    return EXIT.unreadable
  }
  try {
    return invocation.command === 'setup' ? setupCommand(invocation, io) : await run(invocation, io)
  } catch (error: unknown) {
    const on = invocation.command === 'setup' ? invocation.dir : invocation.path
    io.stderr.write(`dsh-seam ${invocation.command}: internal error on ${printable(on)}: ${printable(describeFailure(error))}\n`)
    return EXIT.internal
  }
}
