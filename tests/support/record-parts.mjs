// Records the real shapes of tool parts: starts the scripted model server and a real
// `opencode serve`, has the model call write, edit, bash, read, grep, glob, todowrite and task
// (plus calls that fail; grep and glob need ripgrep on PATH), and writes the messages OpenCode stored to
// ui/tests/fixtures/tool-turn.json for the UI's component tests.
//
// Run from tests/: `node support/record-parts.mjs`. Re-run when the pinned OpenCode changes.

import fs from 'node:fs';
import path from 'node:path';
import { startModelServer } from './model-server.mjs';
import { opencodeConfig, startOpencode, TESTS_DIR, OPENCODE_VERSION } from './opencode.mjs';
import { cleanupAll } from './cleanup.mjs';

const OUT = path.resolve(TESTS_DIR, '..', 'ui', 'tests', 'fixtures', 'tool-turn.json');

const SOURCE = 'export function greet(name: string): string {\n  return `Hello, ${name}`;\n}\n';

/** The scripted model's answers, in the order OpenCode asks. */
export const TOOL_SCRIPT = [
  { tool: 'write', args: { filePath: 'src/greet.ts', content: SOURCE } },
  { tool: 'edit', args: { filePath: 'src/greet.ts', oldString: 'Hello, ${name}', newString: 'Hello there, ${name}!' } },
  { tool: 'bash', args: { command: "printf '\\033[32mok\\033[0m build\\n'; seq 1 300", description: 'Build and count' } },
  { tools: [
    { name: 'read', args: { filePath: 'src/greet.ts' } },
    { name: 'grep', args: { pattern: 'greet', path: '.' } },
    { name: 'glob', args: { pattern: '**/*.ts' } },
  ] },
  { tool: 'todowrite', args: { todos: [
    { content: 'Write greet()', status: 'completed', priority: 'high' },
    { content: 'Test greet()', status: 'in_progress', priority: 'medium' },
    { content: 'Document it', status: 'pending', priority: 'low' },
  ] } },
  { tool: 'task', args: { description: 'Check the greeting', prompt: 'Read src/greet.ts and say whether it greets.', subagent_type: 'general' } },
  // The child session's model call.
  { text: 'It greets.' },
  { tool: 'edit', args: { filePath: 'src/greet.ts', oldString: 'no such text', newString: 'x' } },
  { tool: 'bash', args: { command: 'exit 3', description: 'Fail on purpose' } },
  // Denied by the permission rule below: the shape of a refused tool call.
  { tool: 'bash', args: { command: 'rm -rf build', description: 'Remove the build' } },
  { text: 'Done: greet() now says hello there.' },
];

async function main() {
  const model = await startModelServer();
  const config = { ...opencodeConfig(model.url), permission: { bash: { '*': 'allow', 'rm *': 'deny' } } };
  const oc = await startOpencode({ modelUrl: model.url, config });
  try {
    const session = await oc.json('/session', { method: 'POST', body: {} });
    model.script(TOOL_SCRIPT);
    await oc.json(`/session/${session.id}/message`, {
      method: 'POST',
      body: { parts: [{ type: 'text', text: 'Make greet() friendlier and track it.' }], model: { providerID: 'fake', modelID: 'fake-model' } },
    });
    const messages = await oc.json(`/session/${session.id}/message`);
    const children = await oc.json(`/session/${session.id}/children`);
    const recorded = {
      opencode: OPENCODE_VERSION,
      note: 'Recorded by tests/support/record-parts.mjs from a real opencode serve; paths made relative.',
      messages,
      children,
    };
    // No machine paths in the fixture: the temporary project folder becomes `/project`.
    const text = JSON.stringify(recorded, null, 2).replace(/\/?[\w./-]*crosscheck-opencode-[A-Za-z0-9]+\/project/g, '/project');
    fs.mkdirSync(path.dirname(OUT), { recursive: true });
    fs.writeFileSync(OUT, text + '\n');
    console.log(`wrote ${OUT}: ${messages.length} messages`);
  } finally {
    await oc.dispose();
    await model.close();
  }
}

main().then(() => cleanupAll()).catch(async (err) => {
  console.error(err);
  process.exitCode = 1;
  await cleanupAll();
});
