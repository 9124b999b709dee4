/**
 * A Zstandard "bomb": 32 KiB of frames that expand to 1 GiB of zeros (whole, and cut inside its frame). The shared
 * reader stops decoding a frame at 256 MiB, so every command refuses it on one line, `exceeds 256 MiB`, with exit 2,
 * and the process never holds the expansion. The figure printed is the peak memory of `verify` on it.
 */

import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createZstdCompress } from 'node:zlib'
import { CLI_BIN, EXIT } from '@dsh-seam/cli'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli } from './support.ts'

const KEEP_LAST_TURNS = fileURLToPath(import.meta.resolve('@dsh-seam/context-policies/keep-last-turns'))
const root = mkdtempSync(join(tmpdir(), 'dsh-seam-zstd-bomb-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))

/** One Zstandard frame of `mib` MiB of zeros, compressed as a stream (the test never holds the expansion either). */
async function zeros(mib: number): Promise<Buffer> {
  const compressor = createZstdCompress()
  const parts: Buffer[] = []
  compressor.on('data', (part: Buffer) => parts.push(part))
  const done = new Promise(resolve => compressor.on('end', resolve))
  const zero = Buffer.alloc(1 << 20)
  for (let i = 0; i < mib; i++) if (!compressor.write(zero)) await new Promise(resolve => compressor.once('drain', resolve))
  compressor.end()
  await done
  return Buffer.concat(parts)
}

let whole: string
let torn: string

beforeAll(async () => {
  const bomb = await zeros(1024)
  expect(bomb.length).toBeLessThan(64 << 10)
  whole = join(root, 'bomb.jsonl.zstd')
  torn = join(root, 'torn-bomb.jsonl.zstd')
  writeFileSync(whole, bomb)
  writeFileSync(torn, bomb.subarray(0, bomb.length - 8))
})

const COMMANDS = [['verify'], ['inspect'], ['report', '-o', join(root, 'never.html')], ['simulate', '--policy', KEEP_LAST_TURNS]]

describe('a Zstandard frame that expands beyond the cap', () => {
  it.each([['whole', () => whole], ['cut inside its frame', () => torn]])('%s: every command refuses it on one line, exit 2', (_, file) => {
    for (const [command, ...options] of COMMANDS) {
      const run = runCli(command as string, file(), '--quiet', ...options)
      expect(run.status).toBe(EXIT.unreadable)
      expect(run.stdout).toBe('')
      expect(run.stderr).toBe(`dsh-seam ${command}: session log ${file()}: the Zstandard frame at byte 0 exceeds 256 MiB when decompressed: not a frame DSH writes (decoding stopped there) [malformed]\n`)
    }
  })

  it('verify never holds the 1 GiB expansion (peak memory printed)', () => {
    const timed = spawnSync('/usr/bin/time', ['-f', '%M', process.execPath, CLI_BIN, 'verify', whole], { encoding: 'utf8' })
    expect(timed.status).toBe(EXIT.unreadable)
    const peakKib = Number(timed.stderr.trim().split('\n').at(-1))
    console.log(`zstd bomb (32 KiB file, 1 GiB expanded): verify peaks at ${(peakKib / 1024).toFixed(0)} MiB resident`)
    expect(peakKib).toBeGreaterThan(0)
    expect(peakKib * 1024).toBeLessThan(1 << 30)
  })
})
