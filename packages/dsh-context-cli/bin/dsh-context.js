#!/usr/bin/env node
// The `dsh-context` command over the built package (`tsc -b` writes lib/).
import { main } from '../lib/cli.js'

process.exitCode = await main(process.argv.slice(2), process)
