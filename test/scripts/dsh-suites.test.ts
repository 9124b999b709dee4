import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
// @ts-expect-error: a plain ESM script of the repository, without declarations
import { dependenciesToInstall, workspacePackages } from '../../scripts/dsh-suites.mjs'

const SCRIPT = fileURLToPath(new URL('../../scripts/dsh-suites.mjs', import.meta.url))
const work = mkdtempSync(join(tmpdir(), 'dsh-suites-'))
afterAll(() => rmSync(work, { recursive: true, force: true }))

function write(root: string, files: Record<string, string>): string {
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, file)), { recursive: true })
    writeFileSync(join(root, file), text)
  }
  return root
}

const manifest = (name: string, extra: object = {}) => JSON.stringify({ name, version: '0.1.0-rc.8', ...extra })

/** A tree laid out as DSH's monorepo is, small enough to read: what the install derives from a real checkout. */
function checkout(): string {
  return write(mkdtempSync(join(work, 'tree-')), {
    'package.json': JSON.stringify({ name: '@deepseek-ai/dsh-root', version: '0.1.0-rc.8' }),
    'scripts/test-invariants.ts': "import InvariantRegistry from '@deepseek-ai/dsh-invariants'\n",
    'scripts/markdown.ts': "import { fromMarkdown } from 'mdast-util-from-markdown'\nimport type { Root } from 'mdast'\n",
    'packages/core/session/package.json': manifest('@deepseek-ai/dsh-session'),
    'packages/core/session/tests/catalog.spec.ts': [
      "import { describe } from 'vitest'",
      "import { readFileSync } from 'node:fs'",
      "import { render } from '../../../../scripts/markdown.ts'",
      "import type {\n  SessionEvent,\n} from '@deepseek-ai/dsh-typert-protocol'",
      "import { Session } from '@deepseek-ai/dsh-session'",
      "import { createLoop } from '@deepseek-ai/dsh-agent-loop-testkit'",
    ].join('\n'),
    'packages/core/session/src/index.ts': "import { Schema } from '@deepseek-ai/schemastery'\n",
    'packages/core/agent-loop/package.json': manifest('@deepseek-ai/dsh-agent-loop'),
    'packages/core/agent-loop/tests/loop.spec.ts': "const llm = await import('@deepseek-ai/dsh-llm')\n",
    'packages/core/llm/package.json': manifest('@deepseek-ai/dsh-llm'),
    'packages/core/invariants/package.json': manifest('@deepseek-ai/dsh-invariants'),
    'packages/core/tools/package.json': manifest('@deepseek-ai/dsh-tools'),
    'packages/core/typert-protocol/package.json': manifest('@deepseek-ai/dsh-typert-protocol'),
    'packages/test-support/agent-loop-testkit/package.json': manifest('@deepseek-ai/dsh-agent-loop-testkit', { publishConfig: { access: 'public' } }),
    'packages/test-support/agent-loop-testkit/src/index.ts': "import ToolRuntime from '@deepseek-ai/dsh-tools'\n",
    'vendor/schemastery/package.json': JSON.stringify({ name: '@deepseek-ai/schemastery', version: '3.18.1' }),
    'pnpm-lock.yaml': [
      "lockfileVersion: '9.0'",
      '',
      'importers:',
      '',
      '  .:',
      '    devDependencies:',
      "      '@types/node':",
      '        specifier: ^22.20.0',
      '        version: 22.20.0',
      '      fast-check:',
      '        specifier: ^4.8.0',
      '        version: 4.8.0',
      '      mdast-util-from-markdown:',
      '        specifier: ^2.0.2',
      '        version: 2.0.2',
      '      typescript:',
      '        specifier: ^6.0.3',
      '        version: 6.0.3',
      '      vitest:',
      '        specifier: ^4.1.8',
      '        version: 4.1.8(@types/node@22.20.0)',
      '',
      '  packages/core/session:',
      '    dependencies:',
      "      '@deepseek-ai/dsh-llm':",
      '        specifier: workspace:^',
      '        version: link:../llm',
      '',
      'packages:',
      '',
      '  vitest@4.1.8:',
      '    resolution: {integrity: sha512-x}',
      '',
    ].join('\n'),
  })
}

describe('dsh-suites: what the suites need, read from the checkout', () => {
  it('installs each package the suites load at the checkout\'s own version and each tool as its lockfile resolves it', () => {
    const tree = checkout()
    expect(dependenciesToInstall(tree, workspacePackages(tree))).toEqual({
      '@deepseek-ai/dsh-agent-loop': '0.1.0-rc.8',
      '@deepseek-ai/dsh-invariants': '0.1.0-rc.8',
      '@deepseek-ai/dsh-llm': '0.1.0-rc.8',
      '@deepseek-ai/dsh-session': '0.1.0-rc.8',
      // reached only through the source-only testkit, which itself loads from the checkout
      '@deepseek-ai/dsh-tools': '0.1.0-rc.8',
      '@deepseek-ai/schemastery': '3.18.1',
      // a repository script a spec imports by relative path
      'mdast-util-from-markdown': '2.0.2',
      '@types/node': '22.20.0',
      'fast-check': '4.8.0',
      typescript: '6.0.3',
      vitest: '4.1.8',
    })
  })

  it('fails loud, naming the file, when a spec imports a package the lockfile does not resolve', () => {
    const tree = checkout()
    write(tree, { 'packages/core/agent-loop/tests/extra.spec.ts': "import x from 'left-pad'\n" })
    expect(() => dependenciesToInstall(tree, workspacePackages(tree)))
      .toThrow("packages/core/agent-loop/tests/extra.spec.ts imports left-pad, which the checkout's pnpm-lock.yaml does not resolve")
  })

  it.each([
    [['npm', join(work, 'missing')], /is not installed: run dsh-suites\.mjs install first$/],
    [['install', join(work, 'w')], /no DSH checkout: pass one or set DSH_CHECKOUT$/],
    [['source', join(work, 'tree')], /usage: dsh-suites\.mjs source TREE WORK LABEL$/],
    [['frobnicate'], /^dsh-suites: usage: /],
  ])('refuses %j with one line and exit 2', (args, pattern) => {
    const result = spawnSync(process.execPath, [SCRIPT, ...args], { encoding: 'utf8', env: { ...process.env, DSH_CHECKOUT: '' } })
    expect(result.status).toBe(2)
    expect(result.stderr.trim().split('\n')).toHaveLength(1)
    expect(result.stderr.trim()).toMatch(pattern)
  })
})
