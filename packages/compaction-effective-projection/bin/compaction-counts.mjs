#!/usr/bin/env node
// Prints the compaction counts of stock compaction and projection-aware compaction on the scenarios, side by
// side. Runs from the built lib/ of the workspace: `pnpm run compaction-counts` builds first.
import { compactionCounts, countsTable } from '../scenarios/counts.ts'

console.log(countsTable(await compactionCounts()))
process.exit(0)
