/**
 * The page's entry point (bundled into `/assets/app.js`): connects the store to the live
 * stream and mounts the app.
 * @module
 */
import { render } from 'preact';
import { App } from './app.tsx';
import { Store } from './store.ts';

const store = new Store();
store.connect();
render(<App store={store} />, document.getElementById('app')!);
