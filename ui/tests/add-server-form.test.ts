// Adding a managed server in the desktop window: Browse opens the native folder dialog and the
// chosen folder fills the field (cancelling keeps what was typed); adding sends that folder.
import { flushSync, mount, unmount } from 'svelte';
import { afterEach, describe, expect, it, vi } from 'vitest';

const invoke = vi.fn(async (..._args: unknown[]): Promise<unknown> => null);
const pickFolder = vi.fn(async (_startIn?: string): Promise<string | null> => null);
vi.mock('$lib/host', async (importOriginal) => {
  const actual = await importOriginal<typeof import('$lib/host')>();
  return {
    ...actual,
    canPickFolder: true,
    invoke: (...args: unknown[]) => invoke(...args),
    pickFolder: (startIn?: string) => pickFolder(startIn),
  };
});

const { default: AddServerForm } = await import('$lib/components/sessions/AddServerForm.svelte');

let app: ReturnType<typeof mount> | null = null;
afterEach(() => {
  if (app) unmount(app);
  app = null;
  document.body.innerHTML = '';
  invoke.mockClear();
  pickFolder.mockReset();
});

const q = <T extends Element>(id: string) => document.querySelector<T>(`[data-testid="${id}"]`);
const settle = () => new Promise((r) => setTimeout(r, 0));

describe('AddServerForm, managed', () => {
  it('fills the folder from the native dialog and adds a server there', async () => {
    const onclose = vi.fn();
    app = mount(AddServerForm, { target: document.body, props: { onclose } });
    q<HTMLInputElement>('add-server-kind-managed')!.click();
    flushSync();
    const field = q<HTMLInputElement>('add-server-folder')!;
    field.value = '/typed';
    field.dispatchEvent(new Event('input'));

    pickFolder.mockResolvedValueOnce(null);
    q<HTMLButtonElement>('add-server-browse')!.click();
    await settle();
    flushSync();
    expect(pickFolder).toHaveBeenLastCalledWith('/typed');
    expect(field.value).toBe('/typed');

    pickFolder.mockResolvedValueOnce('/home/me/project');
    q<HTMLButtonElement>('add-server-browse')!.click();
    await settle();
    flushSync();
    expect(field.value).toBe('/home/me/project');

    q<HTMLFormElement>('add-server-form')!.requestSubmit();
    await settle();
    expect(invoke).toHaveBeenCalledWith({ cmd: 'addManagedServer', folder: '/home/me/project' });
    expect(onclose).toHaveBeenCalled();
  });
});
