// Providers, agents and slash commands per server and directory, fetched once and refreshed
// after the server (re)connects.

import { invoke } from '$lib/host';
import type { AgentInfo } from '$lib/types/AgentInfo';
import type { CommandEntry } from '$lib/types/CommandEntry';
import type { ProviderCatalog } from '$lib/types/ProviderCatalog';
import type { ServerId } from '$lib/types/ServerId';

export class DirectoryCatalog {
  providers: ProviderCatalog | null = $state.raw(null);
  agents: AgentInfo[] = $state.raw([]);
  commands: CommandEntry[] = $state.raw([]);
  loaded: boolean = $state(false);
  private loading: Promise<void> | null = null;
  readonly directory: string;
  /** The server asked (the session's); the main one when absent. */
  readonly serverId: ServerId | undefined;

  constructor(directory: string, serverId?: ServerId) {
    this.directory = directory;
    this.serverId = serverId;
  }

  load(force = false): Promise<void> {
    if (this.loading && !force) return this.loading;
    const directory = this.directory || undefined;
    const serverId = this.serverId;
    const p = Promise.allSettled([
      invoke({ cmd: 'providers', directory, serverId }),
      invoke({ cmd: 'agents', directory, serverId }),
      invoke({ cmd: 'commands', directory, serverId }),
    ]).then(([providers, agents, commands]) => {
      // A failed fetch keeps what we had: never treat a failure as an empty result.
      if (providers.status === 'fulfilled' && providers.value) this.providers = providers.value;
      if (agents.status === 'fulfilled' && Array.isArray(agents.value)) this.agents = agents.value;
      if (commands.status === 'fulfilled' && Array.isArray(commands.value)) this.commands = commands.value;
      this.loaded = true;
      if (providers.status === 'rejected' && agents.status === 'rejected') this.loading = null;
    });
    this.loading = p;
    return p;
  }

  /** Primary agents, for the agent picker; never OpenCode's internal ones (compaction,
   * summary, title), which the server marks `hidden`. */
  get primaryAgents(): AgentInfo[] {
    return this.agents.filter((a) => a.mode !== 'subagent' && !a.hidden);
  }

  /** A read-only agent for reviewers (`plan`) when the server has one. */
  get readOnlyAgent(): string | undefined {
    return this.primaryAgents.find((a) => a.name === 'plan')?.name;
  }

  variantsOf(providerID: string, modelID: string): string[] {
    const provider = this.providers?.providers.find((p) => p.id === providerID);
    return provider?.models.find((m) => m.id === modelID)?.variants ?? [];
  }
}

class Catalog {
  // Plain map: entries are created while rendering; their fields are the reactive part.
  private readonly dirs = new Map<string, DirectoryCatalog>();

  /** The catalog of a directory on a server (the main one when absent), loading it on first
   * use. */
  get(directory: string, serverId?: ServerId): DirectoryCatalog {
    const key = `${serverId ?? ''}\n${directory}`;
    let c = this.dirs.get(key);
    if (!c) {
      c = new DirectoryCatalog(directory, serverId);
      this.dirs.set(key, c);
      void c.load();
    }
    return c;
  }

  /** Reloads every catalog (after the server reconnected). */
  refresh(): void {
    for (const c of this.dirs.values()) void c.load(true);
  }
}

export const catalog = new Catalog();
