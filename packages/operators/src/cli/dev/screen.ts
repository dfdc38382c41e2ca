/**
 * What `converge dev` shows: the live screen (status tables, where things are, commands to try,
 * recent state changes) and the commands to try on their own for headless mode. Pure.
 * @module
 */
import type { StatusDocument, Style } from '../views/index.ts';
import { humanDuration, plainStyle, renderStatusText, truncate } from '../views/index.ts';

export interface DevInfo {
  kubeconfigPath: string;
  server: string;
  vendorUrl: string;
  /** The CA file of the vendor simulator (what `--cacert` needs). */
  vendorCaPath?: string;
  /** The handle file `converge vendor-sim fault` reads (URL, CA, admin token), as shown. */
  vendorSimHandle?: string;
  /** Whether that file is where `converge vendor-sim fault` looks by default (else `--sim` is added). */
  vendorSimHandleIsDefault?: boolean;
  logFile: string;
  /** `http://127.0.0.1:<port>` of the operators' metrics server, when known. */
  metricsUrl?: string;
  /** The web dashboard's URL, when it runs. */
  dashboardUrl?: string;
  /** Namespace the samples went to. */
  namespace: string;
  samples: boolean;
}

/** Commands a person can paste into another terminal to see the operators at work. */
export function commandsToTry(info: DevInfo): string[] {
  const ns = info.namespace === 'default' ? '' : ` -n ${info.namespace}`;
  const lines = [`export KUBECONFIG=${info.kubeconfigPath}`];
  if (info.samples) {
    lines.push(
      `kubectl get ms,dhp,deploy,svc${ns}`,
      `kubectl patch ms todo-api${ns} --type=merge -p '{"spec":{"container":{"image":"ghcr.io/yrw9281/it30-todo-api:0.2.0"}}}'   # roll out a new image`,
      `kubectl set image deployment/todo-api${ns} app=example.com/drift:1   # drift: the operator puts it back`,
      `kubectl delete service todo-api${ns}   # watch it come back`,
      `kubectl patch ms todo-api${ns} --type=merge -p '{"spec":{"container":{"image":"example.com/todo:fail"}}}'   # pods that never get ready`,
      `npx converge explain ms/todo-api${ns}`,
      `npx converge explain dhp/studio${ns}`,
    );
  } else {
    lines.push('kubectl apply -f deploy/samples/todo-api.yaml', 'npx converge status -A');
  }
  if (info.vendorSimHandle) {
    const sim = info.vendorSimHandleIsDefault === false ? ` --sim ${info.vendorSimHandle}` : '';
    lines.push(
      `npx converge vendor-sim fault${sim} --outage 30s   # the vendor answers 503 for 30 s: watch studio's Ready, then its recovery`,
      `npx converge vendor-sim fault${sim} --health degraded:"GPU hot"   # studio turns ProviderDegraded`,
      `npx converge vendor-sim fault${sim}   # active faults, instances, request counts (--help: every fault)`,
    );
  }
  lines.push('npx converge status -A --watch');
  return lines;
}

export interface ScreenInput {
  doc: StatusDocument;
  info: DevInfo;
  /** Recent state changes, oldest first, already formatted (`12:00:03 Microservice default/todo-api: …`). */
  changes: readonly string[];
  now: Date;
  style?: Style;
  /** How long the samples took to become Ready, once they are. */
  readyAfterMs?: number | undefined;
  /** A problem reading the cluster at the last refresh. */
  error?: string | undefined;
  /** Terminal width: hint and change lines are cut to it (tables are not). */
  width?: number | undefined;
}

export function renderDevScreen(input: ScreenInput): string {
  const style = input.style ?? plainStyle;
  const { info, now } = input;
  const out: string[] = [];
  out.push(`${style.paint('converge dev', 'bold')}   ${style.paint(now.toTimeString().slice(0, 8), 'dim')}   ${style.paint('Ctrl-C stops everything', 'dim')}`);
  out.push(`  control plane ${info.server}   vendor simulator ${info.vendorUrl}`);
  if (info.dashboardUrl) out.push(`  dashboard     ${style.paint(info.dashboardUrl, 'bold')}   (live page and API over this cluster)`);
  if (info.vendorCaPath) out.push(`  vendor admin  ${info.vendorSimHandle ?? ''}   CA ${info.vendorCaPath}`);
  out.push(`  kubeconfig    ${info.kubeconfigPath}`);
  out.push(`  operator logs ${info.logFile}${info.metricsUrl ? `   metrics ${info.metricsUrl}/metrics` : ''}`);
  if (input.readyAfterMs !== undefined) {
    out.push('', style.paint(`✓ the samples are Ready (${humanDuration(input.readyAfterMs)} after start)`, 'green'));
  }
  out.push('', renderStatusText(input.doc, { now, style, showNamespace: true }));
  if (input.error) out.push('', style.paint(`cannot read the cluster: ${input.error}`, 'red'));
  out.push('', style.paint('Try, in another terminal:', 'bold'));
  const fit = (line: string) => truncate(line, input.width && input.width > 20 ? input.width - 2 : undefined);
  for (const line of commandsToTry(info)) out.push(`  ${fit(line)}`);
  if (input.changes.length > 0) {
    out.push('', style.paint('Recent changes:', 'bold'));
    for (const c of input.changes) out.push(`  ${style.paint(fit(c), 'dim')}`);
  }
  return out.join('\n');
}
