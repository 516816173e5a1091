// Reading a node's password for a CLI command: from a file (--password-file), from standard input
// when it is not a terminal (`... < file`, a pipe), or asked for on the terminal without echo.
// Never from an option's value: it would show in `ps` and the shell's history.
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { AppError } from '../errors.ts';

export async function readPassword(options: Record<string, string | true>, prompt: string): Promise<string> {
  const file = options['password-file'];
  if (file === true) throw new AppError('invalid_request', '--password-file needs a file name');
  const text = typeof file === 'string' ? readFileSync(file, 'utf8') : process.stdin.isTTY ? await ask(prompt) : await readStdin();
  const password = text.replace(/\r?\n$/, '');
  if (!password) throw new AppError('invalid_request', 'the password is empty');
  return password;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function ask(prompt: string): Promise<string> {
  return new Promise((resolve) => {
    const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
    // Echo nothing of what is typed: only the prompt is written.
    (rl as unknown as { _writeToOutput: (s: string) => void })._writeToOutput = (s: string) => {
      if (s.startsWith(prompt)) process.stderr.write(prompt);
    };
    rl.question(prompt, (answer) => {
      rl.close();
      process.stderr.write('\n');
      resolve(answer);
    });
  });
}
