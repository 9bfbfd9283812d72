import { describe, expect, it } from 'vitest';
import { groupByServer } from '../src/lib/sessions';
import type { ServerView } from '../src/lib/types/ServerView';
import type { SessionView } from '../src/lib/types/SessionView';

const server = (id: string, name: string, state: 'ready' | 'failed' = 'ready'): ServerView => ({
  id,
  name,
  kind: 'attached',
  url: `http://127.0.0.1/${id}`,
  saved: id !== 'main',
  connection: state === 'ready' ? { state, url: 'u', version: '1.18.33', managed: false } : { state, error: 'gone' },
});

const session = (id: string, title: string, directory: string, serverId?: string): SessionView => ({
  id,
  slug: 's',
  projectID: 'p',
  directory,
  title,
  time: { created: 1, updated: 1 },
  ...(serverId ? { serverId } : {}),
});

describe('the sidebar grouped by server', () => {
  const servers = [server('main', 'Laptop'), server('srv_b', 'Dev box', 'failed'), server('srv_c', 'Empty')];
  const sessions = [
    session('ses_1', 'Fix login', '/projects/app'),
    session('ses_2', 'Fix logout', '/box/app', 'srv_b'),
    session('ses_3', 'Docs', '/box/docs', 'srv_b'),
  ];

  it('puts each session under its server, then its project, in the servers order', () => {
    const sections = groupByServer(sessions, servers, {});
    expect(sections.map((s) => s.server.id)).toEqual(['main', 'srv_b', 'srv_c']);
    expect(sections[0].groups.flatMap((g) => g.sessions.map((s) => s.id))).toEqual(['ses_1']);
    expect(sections[1].groups.map((g) => g.directory).sort()).toEqual(['/box/app', '/box/docs']);
    expect(sections[2].groups).toEqual([]);
  });

  it('keeps a down server with its sessions, and search covers every server', () => {
    const found = groupByServer(sessions, servers, { query: 'fix' });
    expect(found.flatMap((s) => s.groups.flatMap((g) => g.sessions.map((x) => x.id)))).toEqual(['ses_1', 'ses_2']);
    expect(found[1].server.connection.state).toBe('failed');
  });
});
