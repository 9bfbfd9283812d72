// What the page benches do before a load: a new tab's processes (its renderer, the browser's
// spare one) start in the second after it opens, and on two cores they would take the CPU from
// the load measured. A user's browser is open already, so a load starts once they are idle.

/** How long a new tab is left before its load (ms). */
const TAB_SETTLE_MS = 1500;

/** Opens a tab with `open` (e.g. `() => context.newPage()`) and answers it once it has settled. */
export async function openSettledTab(open) {
  const page = await open();
  await new Promise((resolve) => setTimeout(resolve, TAB_SETTLE_MS));
  return page;
}
