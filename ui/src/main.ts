import { mount } from 'svelte';
import App from './App.svelte';
import './app.css';
import { askEarlySnapshot } from '$lib/host/early';
import { applyEarlySnapshot, awaitEarlySnapshot } from '$lib/state/actions/boot';

const target = document.getElementById('app');
if (!target) throw new Error('missing #app');

// The snapshot asked by the page's first script (src/early.ts; asked here when that one has not
// run yet) is awaited (a while at most) and applied before the first render: the page is built
// once, with the sidebar's rows, instead of an empty list first and its rows a moment later.
askEarlySnapshot();
void awaitEarlySnapshot().then(() => {
  applyEarlySnapshot();
  mount(App, { target });
});
