#!/usr/bin/env node
// The workspace packages of a DSH checkout that a patch series touches, and every package depending on them,
// directly or not (dependencies, devDependencies, peerDependencies, optionalDependencies), from the checkout's own
// package.json graph. Prints JSON: { touched: [dir...], dependents: [dir...], files: [file...] } (checkout-relative, sorted;
// files: those the series changes).
// Usage: dependents.mjs <checkout> <patch>...    (the workspace list comes from `pnpm ls -r --json`)
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join, relative } from 'node:path'

const [checkout, ...patches] = process.argv.slice(2)
if (checkout === undefined || patches.length === 0) {
  console.error('usage: dependents.mjs <checkout> <patch>...')
  process.exit(2)
}
const projects = JSON.parse(execFileSync('pnpm', ['ls', '-r', '--depth', '-1', '--json'], { cwd: checkout, encoding: 'utf8' }))
const dirOf = new Map(projects.map(p => [p.name, relative(checkout, p.path)]))
const byDir = [...dirOf.entries()].filter(([, dir]) => dir !== '').sort((a, b) => b[1].length - a[1].length)

/** The workspace package owning a repo-relative file, or undefined for root files (docs, notes). */
const ownerOf = file => byDir.find(([, dir]) => file.startsWith(`${dir}/`))?.[0]

// Both sides of each diff: a renamed file is listed under its old and its new path.
const files = new Set(patches.flatMap(p => [...readFileSync(p, 'utf8').matchAll(/^diff --git a\/(\S+) b\/(\S+)$/gm)].flatMap(m => [m[1], m[2]])))
const touched = new Set([...files].map(ownerOf).filter(name => name !== undefined))

const dependentsOf = new Map()
for (const { name, path } of projects) {
  const pkg = JSON.parse(readFileSync(join(path, 'package.json'), 'utf8'))
  const deps = ['dependencies', 'devDependencies', 'peerDependencies', 'optionalDependencies'].flatMap(k => Object.keys(pkg[k] ?? {}))
  for (const dep of deps) {
    if (!dirOf.has(dep) || dep === name) continue
    if (!dependentsOf.has(dep)) dependentsOf.set(dep, new Set())
    dependentsOf.get(dep).add(name)
  }
}
const closure = new Set(touched)
const todo = [...touched]
while (todo.length > 0) {
  for (const next of dependentsOf.get(todo.pop()) ?? []) {
    if (!closure.has(next)) { closure.add(next); todo.push(next) }
  }
}
const dirs = names => [...names].map(n => dirOf.get(n)).filter(d => d !== '').sort()
console.log(JSON.stringify({ touched: dirs(touched), dependents: dirs(closure), files: [...files].sort() }, null, 1))
