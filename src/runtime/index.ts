/**
 * Converge runtime: the public entry. Operators import from here and nowhere else.
 *
 * The data path, as in controller-runtime and kube-rs:
 *
 *   API server ──watch──▶ cache (watcher → store) ──events──▶ handlers ──keys──▶ work queue
 *        ▲                                                                        │
 *        └──────────────── client (writes) ◀──── reconciler(request, signal) ◀────┘
 *
 * @module
 */
export * from './objects/index.ts';
