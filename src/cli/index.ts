// The `payhook` command (bin). Node ≥ 20 only; built to dist/cli.js.
import { main } from './main.js';
import { processIo } from './io.js';

process.exitCode = await main(process.argv.slice(2), processIo());
