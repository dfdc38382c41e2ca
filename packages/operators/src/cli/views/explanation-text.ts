/**
 * An `Explanation` (`explanation.ts`) as text for a terminal: the verdict, the findings, the
 * spec and status, conditions, owned objects with their differences, and the recent Events.
 * A value with line breaks (a finding, a status message) continues on lines indented under its
 * text; table cells are one line each (`table.ts`). Pure; colours come from the `Style` passed in.
 * @module
 */
import { formatAge } from './age.ts';
import { renderTable, cell } from './table.ts';
import { conditionColor, plainStyle, type Color, type Style } from './style.ts';
import { LIMIT_NAMES } from './explanation.ts';
import { terminalSafe } from './terminal-text.ts';
import type { DeploymentState, Explanation, LimitName, Ownership, ServiceState, Severity } from './explanation.ts';

const OWNERSHIP_TEXT: Record<Ownership, string> = {
  controlled: 'controlled by this Microservice',
  missing: 'missing',
  unowned: 'no controller',
  handover: 'no controller, handover annotation names this Microservice',
  'previous-owner': 'controlled by an earlier Microservice of the same name',
  foreign: 'controlled by another object',
};

const MARK: Record<Severity, { text: string; color: Color | undefined }> = {
  ok: { text: '✓', color: 'green' },
  info: { text: '·', color: undefined },
  warning: { text: '!', color: 'yellow' },
  error: { text: '✗', color: 'red' },
};

function indent(text: string, by = '  '): string {
  return text.split('\n').map((l) => (l ? by + l : l)).join('\n');
}

/**
 * One line of the layout whose value may hold line breaks (a message, an API server's error): its
 * further lines are indented two spaces deeper than the line itself (under a finding's text), so
 * none starts at the margin or where a finding or a section does. Line breaks are all that is left
 * to handle: the text is terminal-safe already (`terminalSafe` keeps tab and newline, and shows
 * `\r` and every other control as `\u000d`…).
 */
function hanging(line: string): string {
  return line.includes('\n') ? line.replace(/\n/g, `\n${' '.repeat(/^ */.exec(line)![0].length + 2)}`) : line;
}

function deploymentSummary(s: DeploymentState): string {
  const want = s.replicas ?? 1;
  const progressing = s.conditions.find((c) => c.type === 'Progressing');
  return [
    `${s.availableReplicas}/${want} available, ${s.updatedReplicas}/${want} updated, ${s.readyReplicas}/${want} ready`,
    `observedGeneration ${s.observedGeneration ?? '-'}/${s.generation ?? '-'}`,
    ...(progressing ? [`Progressing=${progressing.status} (${progressing.reason})`] : []),
    ...(s.images.length ? [`image ${s.images.join(', ')}`] : []),
  ].join('; ');
}

function serviceSummary(s: ServiceState): string {
  const ports = s.ports.map((p) => `${p.port}→${p.targetPort ?? p.port}/${p.protocol ?? 'TCP'}`).join(', ');
  return `${s.type ?? 'ClusterIP'} ${s.clusterIP ?? '-'}, ports ${ports || '-'}`;
}

/** The explanation as text; text from the cluster is shown terminal-safe (`terminalText`). */
export function renderExplanationText(explanation: Explanation, options: { style?: Style; now: Date }): string {
  const e = terminalSafe(explanation);
  const style = options.style ?? plainStyle;
  const { now } = options;
  const o = e.object;
  const out: string[] = [];
  /** Lines of the layout (tables go to `out` as they are: their cells never hold a line break). */
  const add = (...lines: string[]) => out.push(...lines.map(hanging));
  add(`${style.paint(`${o.kind} ${o.namespace}/${o.name}`, 'bold')}  uid ${o.uid}, generation ${o.generation}, age ${formatAge(o.createdAt, now)}`);
  add(`${e.converged ? style.paint('Converged', 'green') : style.paint('Not converged', 'red')}: ${e.verdict.replace(/^(not )?converged: /, '')}`);

  add('', style.paint('Why', 'bold'));
  for (const f of e.findings) add(`  ${style.paint(MARK[f.severity].text, MARK[f.severity].color)} ${f.message}`);

  if (e.microservice) {
    const m = e.microservice;
    add('', style.paint('Spec and status', 'bold'));
    add(`  image ${m.spec.container.image}, port ${m.spec.container.port}`);
    add(
      `  phase ${m.phase ?? '-'}, observedGeneration ${o.observedGeneration ?? '-'}/${o.generation}` +
        (m.reason ? `, reason ${m.reason}` : '') +
        (m.message && m.phase === 'Failed' ? `: ${m.message}` : ''),
    );
    const r = m.rollout.reported;
    add(`  rollout (reported): ${r ? `${r.availableReplicas}/${r.replicas} available, ${r.updatedReplicas}/${r.replicas} updated, ${r.readyEndpoints} ready endpoints` : '-'}`);
    if (m.rollout.assessed) add(`  rollout (live now): ${m.rollout.assessed.state}: ${m.rollout.assessed.message}`);
  }
  if (e.provider) {
    const p = e.provider;
    add('', style.paint('Spec and status', 'bold'));
    add(`  endpoint ${p.spec.endpoint}, region ${p.spec.region}${p.spec.displayName ? `, displayName ${JSON.stringify(p.spec.displayName)}` : ''}`);
    add(`  providerID ${p.providerID ?? '-'}, observedGeneration ${o.observedGeneration ?? '-'}/${o.generation}`);
    add(`  instance lives at ${p.instanceEndpoint ?? '- (no create sent)'}${p.createRequestedAt ? `, last create requested ${p.createRequestedAt}` : ''}`);
    add(`  finalizer ${p.finalizer.name}: ${p.finalizer.present ? 'present' : 'absent'}${p.deleting ? ' (deleting)' : ''}`);
    const c = p.credentials;
    const secretText = c.secretExists === null ? `unknown (${c.error ?? 'not checked'})` : c.secretExists ? (c.keyPresent ? `present, key "${c.key}" present${c.labelled === false ? ', NOT LABELLED for vendor use' : ''}` : `present, key "${c.key}" MISSING`) : 'MISSING';
    add(`  credentials Secret ${c.secret}: ${secretText}`);
    const lim = (l: Partial<Record<LimitName, number>> | null) => (l ? LIMIT_NAMES.filter((n) => l[n] !== undefined).map((n) => `${n} ${l[n]}`).join(', ') || 'none set' : '-');
    add(`  limits: spec ${lim(p.limits.desired)}; in force ${lim(p.limits.inForce)}`);
    const u = p.usage;
    add(u ? `  usage: ${u.callsToday} of ${u.dailyQuota} calls today, ${u.quotaRemaining} left (resets ${u.quotaResetAt}); ${u.throttledRequests} throttled in the last ${u.throttleWindowSeconds} s; observed ${u.observedAt}` : '  usage: - (not observed yet)');
    add(`  usable: ${p.usable ? 'yes' : 'no'}${p.limitedBy ? `, limited by ${p.limitedBy}` : ''}`);
    if (p.recommendation) add(`  recommendation: ${p.recommendation}`);
  }

  add('', style.paint('Conditions', 'bold'));
  if (e.conditions.length === 0) add('  none');
  else {
    const rows = e.conditions.map((c) => [
      c.type,
      cell(c.status, c.type === 'Ready' ? conditionColor(c.status) : c.type === 'Stalled' ? conditionColor(c.status, false) : undefined),
      c.reason,
      cell(c.current ? `${c.observedGeneration}/${o.generation}` : `${c.observedGeneration ?? '-'}/${o.generation} (stale)`, c.current ? undefined : 'yellow'),
      formatAge(c.lastTransitionTime, now),
      c.message,
    ]);
    out.push(indent(renderTable(['type', 'status', 'reason', 'generation', 'since', { header: 'message', maxWidth: 120 }], rows, style)));
  }

  if (e.microservice) {
    const m = e.microservice;
    add('', style.paint('Owned objects', 'bold'));
    const rows = m.children.map((c) => [
      c.kind,
      c.name,
      cell(OWNERSHIP_TEXT[c.ownership] + (c.controller && c.ownership !== 'controlled' ? ` ${c.controller.kind}/${c.controller.name}` : ''), c.ownership === 'controlled' ? 'green' : c.ownership === 'handover' ? 'yellow' : 'red'),
      c.state ? ('currentReplicas' in c.state ? deploymentSummary(c.state) : serviceSummary(c.state)) : '-',
    ]);
    out.push(indent(renderTable(['kind', 'name', 'ownership', 'state'], rows, style)));
    add(`  EndpointSlices: ${m.endpoints.slices} (${m.endpoints.ready} ready endpoint${m.endpoints.ready === 1 ? '' : 's'}, ${m.endpoints.notReady} not ready)`);

    add('', `${style.paint('Desired vs actual', 'bold')} (${m.desired.source})`);
    if (m.desired.error) add(`  cannot render the desired state: ${m.desired.error}`);
    for (const c of m.children) {
      if (!c.exists) {
        add(`  ${c.kind} ${c.name}: missing${m.desired.error ? '' : ' (would be created)'}`);
      } else if (m.desired.error) {
        continue;
      } else if (c.differenceText.length === 0) {
        add(`  ${c.kind} ${c.name}: ${style.paint('contains the desired state', 'green')}`);
      } else {
        const note = c.ownership === 'controlled' ? '' : ' (not written: not controlled by this Microservice)';
        add(`  ${c.kind} ${c.name}: ${style.paint(`${c.differenceText.length} difference${c.differenceText.length === 1 ? '' : 's'}`, 'yellow')}${note}`);
        for (const d of c.differenceText) add(`    ${d}`);
      }
    }
  }

  add('', style.paint('Events', 'bold') + (e.events.length ? ' (oldest first)' : ''));
  if (e.events.length === 0) add('  none');
  else {
    const rows = e.events.map((ev) => [
      formatAge(ev.lastTime, now),
      cell(ev.type, ev.type === 'Warning' ? 'yellow' : undefined),
      ev.reason,
      ev.object,
      ev.count > 1 ? `${ev.note} (x${ev.count})` : ev.note,
    ]);
    out.push(indent(renderTable(['last seen', 'type', 'reason', 'object', { header: 'message', maxWidth: 120 }], rows, style)));
  }
  return out.join('\n');
}
