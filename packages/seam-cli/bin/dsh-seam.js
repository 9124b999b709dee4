#!/usr/bin/env node
// The `dsh-seam` command over the built package (`tsc -b` writes lib/). The command runs in a worker whose young
// generation is capped, so the parse garbage of a long log is collected as it is made: peak memory follows what the
// check keeps (the surface), not V8's default semi-space slack.
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads'

/** Young-generation cap of the worker, in MiB. */
const YOUNG_GENERATION_MB = 4

/** DSH 0.1.0-rc.8's own requirement (its log's Zstandard frames need `node:zlib`'s zstd, Node 22.15 and later). */
const NODE = { major: 22, minor: 19 }
const [major, minor] = process.versions.node.split('.').map(Number)

if (isMainThread && (major < NODE.major || (major === NODE.major && minor < NODE.minor))) {
  process.stderr.write(`dsh-seam: Node ${process.versions.node} is too old: DSH 0.1.0-rc.8 and dsh-seam need Node ^${NODE.major}.${NODE.minor} || >=24\n`)
  process.exitCode = 2
} else if (isMainThread) {
  const worker = new Worker(new URL(import.meta.url), { workerData: process.argv.slice(2), resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB } })
  let settled = false
  worker.on('message', code => { settled = true; process.exitCode = code })
  worker.on('error', error => {
    settled = true
    process.stderr.write(`dsh-seam: internal error: ${String(error?.message ?? error).replace(/[\u0000-\u001F\u007F-\u009F]/g, ' ')}\n`)
    process.exitCode = 70
  })
  // A command that ends without its exit code (its event loop emptied, or something called process.exit) is a fault.
  worker.on('exit', code => {
    if (settled) return
    process.stderr.write(`dsh-seam: internal error: the command ended without a result (worker exit code ${code})\n`)
    process.exitCode = 70
  })
} else {
  const { main } = await import('../lib/cli.js')
  parentPort.postMessage(await main(workerData, process))
}
