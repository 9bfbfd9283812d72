import { mount } from 'svelte';
import App from './App.svelte';
import { warmUpMarkdown } from './lib/markdown';
import './app.css';

const target = document.getElementById('app');
if (!target) throw new Error('missing #app');

const app = mount(App, { target });
// Markdown's code is compiled while the app is idle, not when the first session opens.
warmUpMarkdown();

export default app;
