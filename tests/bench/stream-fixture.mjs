// A realistic `/global/event` stream for benchmarks: turns of one session, each a user
// message, a busy status, an assistant message streaming 40 deltas, completion and idle.

const DIR = '/home/user/project';
const SID = 'ses_bench000000000000000001';

let counter = 0;
function id(prefix) {
  counter += 1;
  return `${prefix}_${(0x22d0bb6ac001 + counter).toString(16)}BenchAbcdefghij`;
}

function frame(type, properties) {
  return `data: ${JSON.stringify({ directory: DIR, project: 'global', payload: { id: id('evt'), type, properties } })}\n\n`;
}

/** Builds a stream of at least `n` events; returns `{ text, events, sessionId }`. */
export function buildStream(n) {
  const out = [frame('server.connected', {})];
  let events = 1;
  const session = { id: SID, slug: 'bench', projectID: 'global', directory: DIR, title: 'Bench', version: '1.18.33', time: { created: 1, updated: 1 } };
  out.push(frame('session.created', { sessionID: SID, info: session }));
  events += 1;
  let t = 1796052071544;
  while (events < n) {
    const user = id('msg');
    const asst = id('msg');
    const userPart = id('prt');
    const textPart = id('prt');
    t += 1000;
    const turn = [];
    turn.push(['message.updated', { sessionID: SID, info: { id: user, role: 'user', sessionID: SID, time: { created: t }, agent: 'build', model: { providerID: 'fake', modelID: 'fake-model' } } }]);
    turn.push(['message.part.updated', { sessionID: SID, part: { id: userPart, type: 'text', text: 'Please change the parser so it handles CRLF frames.', messageID: user, sessionID: SID }, time: t }]);
    turn.push(['session.status', { sessionID: SID, status: { type: 'busy' } }]);
    const info = { id: asst, parentID: user, role: 'assistant', mode: 'build', agent: 'build', path: { cwd: DIR, root: '/' }, cost: 0, tokens: { total: 0, input: 0, output: 0, reasoning: 0, cache: { write: 0, read: 0 } }, modelID: 'fake-model', providerID: 'fake', time: { created: t }, sessionID: SID };
    turn.push(['message.updated', { sessionID: SID, info }]);
    turn.push(['message.part.updated', { sessionID: SID, part: { id: id('prt'), type: 'step-start', messageID: asst, sessionID: SID }, time: t }]);
    turn.push(['message.part.updated', { sessionID: SID, part: { id: textPart, type: 'text', text: '', messageID: asst, sessionID: SID, time: { start: t } }, time: t }]);
    let full = '';
    for (let i = 0; i < 40; i += 1) {
      const delta = `token${i} `;
      full += delta;
      turn.push(['message.part.delta', { sessionID: SID, messageID: asst, partID: textPart, field: 'text', delta }]);
    }
    turn.push(['message.part.updated', { sessionID: SID, part: { id: textPart, type: 'text', text: full, messageID: asst, sessionID: SID, time: { start: t, end: t + 500 } }, time: t + 500 }]);
    turn.push(['message.part.updated', { sessionID: SID, part: { id: id('prt'), type: 'step-finish', reason: 'stop', messageID: asst, sessionID: SID, tokens: { total: 15, input: 10, output: 5, reasoning: 0, cache: { write: 0, read: 0 } }, cost: 0 }, time: t + 500 }]);
    turn.push(['message.updated', { sessionID: SID, info: { ...info, time: { created: t, completed: t + 600 }, finish: 'stop' } }]);
    turn.push(['session.status', { sessionID: SID, status: { type: 'idle' } }]);
    turn.push(['session.idle', { sessionID: SID }]);
    for (const [type, props] of turn) out.push(frame(type, props));
    events += turn.length;
  }
  return { text: out.join(''), events, sessionId: SID };
}
