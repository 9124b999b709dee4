import { benchSimulate } from './bench/lib/p7-simulate.js'
import { renderSection } from './bench/lib/report.js'
const s = await benchSimulate(process.argv[2] === 'quick', l => process.stderr.write(l + '\n'))
console.log(renderSection(s))
