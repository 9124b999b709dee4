#!/usr/bin/env node
// Regenerates the worked example in this package's README (between its `worked-example` markers): records the
// AgentTavern demo's 300-turn sessions in both context modes with the demo itself, runs the built `dsh-seam simulate`
// and `dsh-seam report` on them, and writes what they print. Run from the workspace root after a build:
//   sh scripts/toolchain.sh pnpm --filter @dsh-seam/cli run readme-figures
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('../../../', import.meta.url))
const readme = new URL('../README.md', import.meta.url)
const cli = fileURLToPath(new URL('../bin/dsh-seam.js', import.meta.url))
const START = '<!-- worked-example: written by `pnpm --filter @dsh-seam/cli run readme-figures`; do not edit by hand -->'
const END = '<!-- /worked-example -->'
const SHOWN_ROOT = 'out/demo-sessions'
const POLICIES = { keepLast: 'examples/context-policies/lib/keep-last-turns.js', tavern: 'examples/context-policies/lib/agent-tavern.js' }

const dir = mkdtempSync(join(tmpdir(), 'readme-figures-'))
try {
  process.stderr.write('readme-figures: recording the AgentTavern demo (300 turns, both modes)\n')
  execFileSync(process.execPath, ['examples/agent-tavern-demo/bin/demo.mjs', '--persist', dir], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] })
  const managed = join(dir, '_no-cwd', 'agent-tavern-agent-managed', 'session.jsonl')
  const native = join(dir, '_no-cwd', 'agent-tavern-dsh-native', 'session.jsonl')
  const shown = text => text.replaceAll(dir, SHOWN_ROOT)
  const run = (...args) => shown(execFileSync(process.execPath, [cli, ...args], { cwd: root, encoding: 'utf8' }))
  const command = (log, ...policies) => `$ npm run dsh-seam -- simulate ${shown(log)} \\\n    ${policies.map(policy => `--policy ${policy}`).join(' ')}`
  const page = join(dir, 'report.html')
  const block = [
    START,
    'The AgentTavern demo\'s 300-turn managed session (`npm run tavern -- --persist out/demo-sessions`):',
    '',
    '```',
    command(managed, POLICIES.keepLast, POLICIES.tavern),
    run('simulate', managed, '--policy', POLICIES.keepLast, '--policy', POLICIES.tavern).trimEnd(),
    '```',
    '',
    'The same demo\'s `dsh-native` session (the whole surface sent, DSH\'s compaction), with AgentTavern replayed on it:',
    '',
    '```',
    command(native, POLICIES.tavern),
    run('simulate', native, '--policy', POLICIES.tavern).trimEnd(),
    '```',
    '',
    `\`dsh-seam report\` on the managed session: \`${run('report', managed, '-o', page).trim().replace(page, 'report.html')}\`.`,
    END,
  ].join('\n')
  const text = readFileSync(readme, 'utf8')
  const [from, to] = [text.indexOf(START), text.indexOf(END)]
  if (from === -1 || to === -1) throw new Error(`README.md has no ${START} … ${END} block`)
  writeFileSync(readme, `${text.slice(0, from)}${block}${text.slice(to + END.length)}`)
  process.stderr.write('readme-figures: README.md\'s worked example rewritten\n')
} finally {
  rmSync(dir, { recursive: true, force: true })
}
