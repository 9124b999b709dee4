#!/usr/bin/env node
// The one way the scripts name DeepSeek Harness's source: a checkout the user gives (argument or DSH_CHECKOUT),
// which is a git clone (its HEAD is exported), a plain folder (copied without node_modules and .git) or a
// `git archive` tarball (with or without a top-level folder). The version is read from the root package.json; a
// checkout that is not one of the supported tags is refused with one line, before anything is copied. The user's
// checkout is only read: every script works on the copy `export` makes.
//
//   node scripts/dsh-source.mjs version [--need VERSION] [CHECKOUT]  prints the version
//   node scripts/dsh-source.mjs path [--need VERSION] [CHECKOUT]     checks it, prints its absolute path
//   node scripts/dsh-source.mjs export [--need VERSION] [CHECKOUT] DEST
//                                                                    copies the checkout to DEST (new or empty),
//                                                                    prints the version
// Without CHECKOUT, DSH_CHECKOUT is used. Errors: one line on stderr, exit 2.
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, statSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'

/** The DeepSeek Harness versions the scripts accept, with the git tag a user checks out for each. */
const SUPPORTED = new Map([
  ['0.1.0-rc.8', 'dsh-v0.1.0-rc.8'],
  ['0.1.1-rc.2', 'dsh-v0.1.1-rc.2'],
])
const ROOT_NAME = '@deepseek-ai/dsh-root'

/** A refusal: `message` is the one line the user sees. */
export class DshSourceError extends Error {
  name = 'DshSourceError'
}

/**
 * What kind of checkout `path` is.
 * @returns `tarball`, `git` (the top of a git work tree) or `folder`
 */
function checkoutKind(path) {
  if (!existsSync(path)) throw new DshSourceError(`${path} does not exist`)
  if (statSync(path).isFile()) return 'tarball'
  if (!existsSync(join(path, '.git'))) return 'folder'
  const top = git(path, ['rev-parse', '--show-toplevel'])
  if (top === undefined) return 'folder'
  return realpathSync(top) === realpathSync(path) ? 'git' : 'folder'
}

/** A read-only git query (`--no-optional-locks`: not even the index's stat cache is refreshed). */
function git(cwd, args) {
  try {
    return execFileSync('git', ['--no-optional-locks', '-C', cwd, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()
  } catch {
    return undefined
  }
}

/** Where a tarball's root is: `''`, `./`, or the one top-level folder (`name/`) every entry sits in. */
function tarballPrefix(entries) {
  for (const prefix of ['', './']) if (entries.includes(`${prefix}package.json`)) return prefix
  const tops = new Set(entries.map(entry => entry.split('/')[0]))
  return tops.size === 1 ? `${[...tops][0]}/` : undefined
}

/** The root package.json of a checkout, as text, read without copying the checkout. */
function rootManifest(path, kind) {
  if (kind === 'git') {
    const text = git(path, ['show', 'HEAD:package.json'])
    if (text === undefined) throw new DshSourceError(`${path}: its HEAD has no package.json; not a DeepSeek Harness checkout`)
    return text
  }
  if (kind === 'folder') {
    const file = join(path, 'package.json')
    if (!existsSync(file)) throw new DshSourceError(`${path} has no package.json; not a DeepSeek Harness checkout`)
    return readFileSync(file, 'utf8')
  }
  let entries
  try {
    entries = execFileSync('tar', ['-tf', path], { encoding: 'utf8', maxBuffer: 1 << 28, stdio: ['ignore', 'pipe', 'ignore'] }).split('\n').filter(Boolean)
  } catch {
    throw new DshSourceError(`${path} is neither a folder nor a readable tarball`)
  }
  const prefix = tarballPrefix(entries)
  if (prefix === undefined || !entries.includes(`${prefix}package.json`)) {
    throw new DshSourceError(`${path}: the tarball has no root package.json; not a DeepSeek Harness checkout`)
  }
  return execFileSync('tar', ['-xOf', path, `${prefix}package.json`], { encoding: 'utf8' })
}

/**
 * The DeepSeek Harness version of a checkout, from its root package.json.
 * @throws DshSourceError when it is not DSH's root manifest or not a supported version, or when `need` is given and
 * the version differs.
 */
function checkoutVersion(path, need) {
  const kind = checkoutKind(path)
  let manifest
  try {
    manifest = JSON.parse(rootManifest(path, kind))
  } catch (error) {
    if (error instanceof DshSourceError) throw error
    throw new DshSourceError(`${path}: its root package.json is not JSON`)
  }
  const { name, version } = manifest ?? {}
  if (name !== ROOT_NAME) throw new DshSourceError(`${path}: its root package.json is '${name}', not ${ROOT_NAME}; not a DeepSeek Harness checkout`)
  const tags = [...SUPPORTED.values()].join(' or ')
  if (!SUPPORTED.has(version)) throw new DshSourceError(`${path} is DeepSeek Harness ${version}; supported: ${tags}`)
  if (need !== undefined && version !== need) {
    throw new DshSourceError(`${path} is DeepSeek Harness ${version}; this needs ${need} (tag ${SUPPORTED.get(need) ?? need})`)
  }
  return { kind, version }
}

/**
 * Copy a checkout to `dest` (absent or empty), never writing to the checkout.
 * @returns the version copied
 */
export function exportCheckout(path, dest, need) {
  const { kind, version } = checkoutVersion(path, need)
  if (existsSync(dest) && readdirSync(dest).length > 0) throw new DshSourceError(`${dest} is not empty; pass a new folder`)
  mkdirSync(dest, { recursive: true })
  try {
    if (kind === 'git') {
      if (git(path, ['status', '--porcelain', '--untracked-files=no'])) {
        process.stderr.write(`dsh-source: ${path} has uncommitted changes; its HEAD is exported without them\n`)
      }
      execFileSync('sh', ['-c', 'git --no-optional-locks -C "$1" archive --format=tar HEAD | tar -x -C "$2"', 'sh', path, dest])
    } else if (kind === 'folder') {
      execFileSync('sh', ['-c', 'tar -C "$1" --exclude=./.git --exclude=node_modules -cf - . | tar -x -C "$2"', 'sh', path, dest])
    } else {
      execFileSync('tar', ['-xf', path, '-C', dest])
      const inner = readdirSync(dest)
      if (!inner.includes('package.json') && inner.length === 1) {
        const top = join(dest, inner[0])
        for (const entry of readdirSync(top)) renameSync(join(top, entry), join(dest, entry))
        rmSync(top, { recursive: true })
      }
    }
  } catch (error) {
    rmSync(dest, { recursive: true, force: true })
    throw new DshSourceError(`copying ${path} to ${dest} failed: ${String(error.message).split('\n')[0]}`)
  }
  execFileSync('chmod', ['-R', 'u+w', dest])
  return version
}

const USAGE = 'usage: dsh-source.mjs version|path [--need VERSION] [CHECKOUT] | export [--need VERSION] [CHECKOUT] DEST'

function main(argv) {
  const [command, ...rest] = argv
  let need
  if (rest[0] === '--need') {
    need = rest[1]
    rest.splice(0, 2)
    if (!SUPPORTED.has(need)) throw new DshSourceError(`--need ${need}: not a supported version (${[...SUPPORTED.keys()].join(', ')})`)
  }
  const env = process.env['DSH_CHECKOUT'] || undefined
  const checkout = (count) => {
    if (rest.length === count) return rest.shift()
    if (rest.length === count - 1 && env !== undefined) return env
    const tag = need === undefined ? '' : ` at tag ${SUPPORTED.get(need)}`
    throw new DshSourceError(rest.length === count - 1
      ? `no DSH checkout: pass one or set DSH_CHECKOUT (a clone of deepseek-ai/deepseek-harness${tag}, a folder or a git archive tarball)`
      : USAGE)
  }
  if (command === 'version') return checkoutVersion(resolve(checkout(1)), need).version
  if (command === 'path') {
    const path = resolve(checkout(1))
    checkoutVersion(path, need)
    return path
  }
  if (command === 'export') {
    const path = resolve(checkout(2))
    return exportCheckout(path, resolve(rest[0]), need)
  }
  throw new DshSourceError(USAGE)
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  try {
    console.log(main(process.argv.slice(2)))
  } catch (error) {
    if (!(error instanceof DshSourceError)) throw error
    console.error(`dsh-source: ${error.message}`)
    process.exit(2)
  }
}
