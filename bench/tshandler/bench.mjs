// Runs the memory commands of one round (see main.go, "The round") through
// the TypeScript SDK's BetaLocalFilesystemMemoryTool on the directory
// process.argv[2], n = process.argv[3] files, and prints each command's
// per-call times in microseconds as one JSON object on stdout.
import { BetaLocalFilesystemMemoryTool } from '@anthropic-ai/sdk/tools/memory/node';

const [dir, nArg] = process.argv.slice(2);
const n = Number(nArg);
if (!dir || !(n >= 3)) {
  console.error('usage: node bench.mjs DIR N (N >= 3)');
  process.exit(2);
}

const tool = await BetaLocalFilesystemMemoryTool.init(dir);
const times = {};

async function measure(name, calls) {
  const out = [];
  for (const call of calls) {
    const start = process.hrtime.bigint();
    await call();
    out.push(Number(process.hrtime.bigint() - start) / 1000);
  }
  times[name] = out;
}

const text = (i) => `note ${i}\nstate: even\nline three\nline four\nline five\n`;
const idx = (from, to) => Array.from({ length: to - from }, (_, k) => from + k);
const file = (i) => `/memories/c/f${i}.md`;

await measure('create', idx(0, n).map((i) => () => tool.create({ command: 'create', path: file(i), file_text: text(i) })));
await measure('view', idx(0, n).map(() => () => tool.view({ command: 'view', path: file(0) })));
await measure('str_replace', idx(0, n).map((i) => () =>
  tool.str_replace({ command: 'str_replace', path: file(0),
    old_str: i % 2 === 0 ? 'state: even' : 'state: odd', new_str: i % 2 === 0 ? 'state: odd' : 'state: even' })));
await measure('insert', idx(0, n).map((i) => () =>
  tool.insert({ command: 'insert', path: file(1), insert_line: 1, insert_text: `inserted ${i}` })));
await measure('rename', idx(2, n).map((i) => () =>
  tool.rename({ command: 'rename', old_path: file(i), new_path: `/memories/r/f${i}.md` })));
await measure('delete', idx(2, n).map((i) => () => tool.delete({ command: 'delete', path: `/memories/r/f${i}.md` })));

process.stdout.write(JSON.stringify(times) + '\n');
