import { readFileSync } from 'node:fs';
import { DEMO_HELP, demoCommand } from './demo.js';
import { EXIT, UsageError, type Io } from './io.js';
import { KEYGEN_HELP, keygenCommand } from './keygen.js';
import { SEND_HELP, sendCommand } from './send.js';
import { VERIFY_HELP, verifyCommand } from './verify.js';

export const MAIN_HELP = `Usage: payhook <command> [options]

Receive the payment service's webhooks safely; these commands help you test
and debug your endpoint.

Commands:
  demo      play the service against a local receiver (no configuration)
  send      sign a test webhook (or replay a captured one) and deliver it to your endpoint
  keygen    write a test key pair for your tests
  verify    check a captured delivery and explain why its signature fails

Run "payhook <command> --help" for a command's options.

Exit codes (every command): 0 success; 1 the check failed (a delivery did
not verify, an endpoint did not answer 200, a demo outcome was unexpected,
a key file exists); 2 usage error.`;

type Command = { run: (args: readonly string[], io: Io) => Promise<number>; help: string };

const COMMANDS: Record<string, Command> = {
  demo: { run: demoCommand, help: DEMO_HELP },
  send: { run: sendCommand, help: SEND_HELP },
  keygen: { run: keygenCommand, help: KEYGEN_HELP },
  verify: { run: verifyCommand, help: VERIFY_HELP },
};

/**
 * The command named `name`, looked up among COMMANDS' own keys only: a plain
 * `COMMANDS[name]` also finds `constructor`, `toString`, `__proto__`… on the
 * prototype, and "payhook constructor" crashed with a TypeError.
 */
function commandNamed(name: string | undefined): Command | undefined {
  return name !== undefined && Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
}

function version(): string {
  try {
    return (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string })
      .version;
  } catch {
    return 'unknown';
  }
}

/** Runs the CLI with `args` (without `node` and the script) and resolves with the exit code. */
export async function main(args: readonly string[], io: Io): Promise<number> {
  const [name, ...rest] = args;
  const unknown = (command: string): number => {
    io.err(`payhook: unknown command ${JSON.stringify(command)}\n\n${MAIN_HELP}`);
    return EXIT.USAGE;
  };
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    // `help <command>`; `help`, `help help`, `help --help` print the general usage.
    const asked = name === 'help' ? rest[0] : undefined;
    const topic = commandNamed(asked);
    if (asked !== undefined && topic === undefined && asked !== 'help' && !asked.startsWith('-')) return unknown(asked);
    io.out(topic?.help ?? MAIN_HELP);
    return name === undefined ? EXIT.USAGE : EXIT.OK;
  }
  if (name === '--version' || name === '-v') {
    io.out(version());
    return EXIT.OK;
  }
  const command = commandNamed(name);
  if (command === undefined) return unknown(name);
  try {
    return await command.run(rest, io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`payhook ${name}: ${error.message}\nRun "payhook ${name} --help" for usage.`);
      return EXIT.USAGE;
    }
    io.err(`payhook ${name}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    return EXIT.FAILED;
  }
}
