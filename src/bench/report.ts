/**
 * The bench report: one self-contained HTML file (inline SVG charts, inline CSS, no
 * scripts or fonts fetched from anywhere) rendered from a results file, and the
 * Markdown tables printed at the end of a run. The results and each chart's data
 * are embedded as JSON (<script type="application/json">) for re-use.
 */
import * as fs from 'node:fs';
import { lineChart, PALETTE, type Band, type ChartSpec, type Series } from './svg_chart';
import type { BenchResults, Sample, StepResult } from './results';

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
/** JSON that is safe inside a <script> element. */
const scriptJson = (v: unknown) => JSON.stringify(v).replace(/</g, '\\u003c');

export interface NamedChart {
  id: string;
  spec: ChartSpec;
}

const mid = (s: Sample) => s.t - s.durationSec / 2;
const trafficSamples = (r: BenchResults) => r.samples.filter((s) => s.phase !== 'setup' || s.sentPerSec > 0);

function bands(r: BenchResults): Band[] {
  const out: Band[] = [];
  for (const st of r.steps) {
    if (st.warmEndT > st.startT) out.push({ x0: st.startT, x1: Math.min(st.warmEndT, st.endT), label: st.label, kind: 'warmup' });
    if (st.endT > st.warmEndT) out.push({ x0: st.warmEndT, x1: st.endT, label: shortLabel(st, r.kind), kind: 'measured' });
  }
  return out;
}

function shortLabel(st: StepResult, kind: BenchResults['kind']): string {
  const rate = st.targetRate >= 1000 ? `${+(st.targetRate / 1000).toFixed(1)}k` : `${st.targetRate}`;
  if (st.phase === 'probe') return `${rate}/s${st.ok === undefined ? '' : st.ok ? ' ✓' : ' ✗'}`;
  return kind === 'comparison' ? `${st.api.replace('grpc-', '')} ${rate}/s` : `${rate}/s`;
}

/** The charts of a report, in order. */
export function charts(r: BenchResults): NamedChart[] {
  const S = trafficSamples(r);
  const b = bands(r);
  const consumers = r.workload.consumerGroups > 0;
  const out: NamedChart[] = [];
  const target: Array<[number, number]> = [];
  r.steps.forEach((st, i) => {
    target.push([st.startT, st.targetRate], [st.endT, st.targetRate]);
    const next = r.steps[i + 1];
    if (!next || next.startT - st.endT > 0.5) target.push([st.endT, 0], ...(next ? [[next.startT, 0] as [number, number]] : []));
  });
  out.push({
    id: 'throughput',
    spec: {
      title: 'Throughput over time (msgs/s)',
      xLabel: 'run time (s) — hatched: warm-up, discarded',
      yLabel: 'msgs/s',
      bands: b,
      series: [
        ...(target.length ? [{ name: 'target rate', color: '#999', points: target, dashed: true }] : []),
        { name: 'published (acked)', color: PALETTE[0]!, points: S.map((s) => [mid(s), s.publishedPerSec] as [number, number]) },
        ...(consumers ? [{ name: 'consumed (all groups)', color: PALETTE[2]!, points: S.map((s) => [mid(s), s.consumedPerSec] as [number, number]) }] : []),
      ],
    },
  });
  const latSeries = (pick: (s: Sample) => Sample['publishLatencyMs'], pickSend: (s: Sample) => Sample['publishLatencyMs']): Series[] => {
    const L = S.filter((s) => pick(s).count > 0);
    return [
      { name: 'p50', color: PALETTE[0]!, points: L.map((s) => [mid(s), pick(s).p50]) },
      { name: 'p99', color: PALETTE[1]!, points: L.map((s) => [mid(s), pick(s).p99]) },
      { name: 'p99.9', color: PALETTE[4]!, points: L.map((s) => [mid(s), pick(s).p999]) },
      { name: 'max', color: PALETTE[8]!, points: L.map((s) => [mid(s), pick(s).max]) },
      { name: 'p99 from actual send', color: PALETTE[3]!, dashed: true, points: S.filter((s) => pickSend(s).count > 0).map((s) => [mid(s), pickSend(s).p99]) },
    ];
  };
  out.push({
    id: 'publish-latency',
    spec: { title: 'Publish latency over time (send → ack, from the scheduled send time)', xLabel: 'run time (s)', yLabel: 'ms (log)', yLog: true, bands: b, series: latSeries((s) => s.publishLatencyMs, (s) => s.publishLatencySinceSendMs) },
  });
  if (consumers)
    out.push({
      id: 'e2e-latency',
      spec: { title: 'End-to-end latency over time (send → consumer, from the scheduled send time)', xLabel: 'run time (s)', yLabel: 'ms (log)', yLog: true, bands: b, series: latSeries((s) => s.e2eLatencyMs, (s) => s.e2eLatencySinceSendMs) },
    });
  const dist = (pick: (st: StepResult) => Array<[number, number]>): Series[] =>
    r.steps.filter((st) => pick(st).length > 0).map((st, i) => ({ name: st.label.replace(/^step \d+\/\d+: /, ''), color: PALETTE[i % PALETTE.length]!, points: pick(st) }));
  out.push({
    id: 'publish-distribution',
    spec: { title: 'Publish latency percentile distribution per step (measured window)', xLabel: 'percentile', yLabel: 'ms (log)', yLog: true, xPercentile: true, series: dist((st) => st.distribution.publish) },
  });
  if (consumers)
    out.push({
      id: 'e2e-distribution',
      spec: { title: 'End-to-end latency percentile distribution per step (measured window)', xLabel: 'percentile', yLabel: 'ms (log)', yLog: true, xPercentile: true, series: dist((st) => st.distribution.e2e) },
    });
  const sep = S.some((s) => s.broker && !s.broker.sameProcess);
  const res = (name: string, pick: (s: Sample) => number | null | undefined, color: string, dashed = false): Series => ({
    name,
    color,
    dashed,
    points: S.filter((s) => typeof pick(s) === 'number').map((s) => [mid(s), pick(s) as number]),
  });
  out.push({
    id: 'memory',
    spec: {
      title: 'Memory (MiB)',
      xLabel: 'run time (s)',
      yLabel: 'MiB',
      bands: b,
      series: [
        res(sep ? 'client RSS' : 'RSS (client + broker)', (s) => s.client.rssMb, PALETTE[0]!),
        res(sep ? 'client heap used' : 'heap used', (s) => s.client.heapUsedMb, PALETTE[0]!, true),
        ...(sep ? [res('broker RSS', (s) => s.broker?.rssMb, PALETTE[1]!), res('broker heap used', (s) => s.broker?.heapUsedMb, PALETTE[1]!, true)] : []),
      ],
    },
  });
  out.push({
    id: 'cpu',
    spec: {
      title: 'CPU (% of one core) and event-loop delay p99 (ms)',
      xLabel: 'run time (s)',
      yLabel: '% / ms',
      bands: b,
      series: [
        res(sep ? 'client CPU %' : 'CPU %', (s) => s.client.cpuPct, PALETTE[0]!),
        res(sep ? 'client event-loop delay p99' : 'event-loop delay p99', (s) => s.client.eventLoopDelayMs?.p99, PALETTE[0]!, true),
        ...(sep ? [res('broker CPU %', (s) => s.broker?.cpuPct, PALETTE[1]!), res('broker event-loop delay p99', (s) => s.broker?.eventLoopDelayMs?.p99, PALETTE[1]!, true)] : []),
      ],
    },
  });
  out.push({
    id: 'handles',
    spec: {
      title: 'Active handles',
      xLabel: 'run time (s)',
      yLabel: 'handles',
      bands: b,
      series: [res(sep ? 'client' : 'client + broker', (s) => s.client.activeHandles, PALETTE[0]!), ...(sep ? [res('broker', (s) => s.broker?.activeHandles, PALETTE[1]!)] : [])],
    },
  });
  return out;
}

const fmt = (n: number, d = 2) => (Number.isFinite(n) ? (Math.abs(n) >= 100 ? Math.round(n).toLocaleString('en-US') : (+n.toFixed(d)).toString()) : '—');

/** Markdown: one row per step (or probe). */
export function stepTable(r: BenchResults): string {
  const consumers = r.workload.consumerGroups > 0;
  const probe = r.kind === 'max-rate';
  const head = ['step', 'API', 'target msgs/s', 'published msgs/s', ...(consumers ? ['consumed msgs/s'] : []), 'MB/s', 'publish p50 / p99 / p99.9 / max (ms)', ...(consumers ? ['end-to-end p50 / p99 / p99.9 / max (ms)'] : []), 'p99 from send: publish' + (consumers ? ' / e2e' : ''), ...(probe ? ['verdict'] : [])];
  const rows = r.steps.map((s) => [
    `${s.index + 1}`,
    s.api,
    fmt(s.targetRate),
    fmt(s.publishedPerSec),
    ...(consumers ? [fmt(s.consumedPerSec)] : []),
    fmt(s.publishMBps),
    lat(s.publishLatencyMs),
    ...(consumers ? [lat(s.e2eLatencyMs)] : []),
    `${fmt(s.publishLatencySinceSendMs.p99)}${consumers ? ` / ${fmt(s.e2eLatencySinceSendMs.p99)}` : ''}`,
    ...(probe ? [s.ok ? 'sustained' : `✗ ${s.verdict ?? ''}`] : []),
  ]);
  return md(head, rows);
}

function lat(l: StepResult['publishLatencyMs']): string {
  return l.count === 0 ? '—' : `${fmt(l.p50)} / ${fmt(l.p99)} / ${fmt(l.p999)} / ${fmt(l.max)}`;
}

/** Markdown: the same rates over each API path. */
export function comparisonTable(r: BenchResults): string {
  if (!r.comparison) return '';
  const rows = [...r.comparison]
    .sort((a, b) => a.targetRate - b.targetRate || r.workload.compare.apis.indexOf(a.api) - r.workload.compare.apis.indexOf(b.api))
    .map((c) => [fmt(c.targetRate), c.api, fmt(c.publishedPerSec), fmt(c.consumedPerSec), `${fmt(c.publishP50)} / ${fmt(c.publishP99)} / ${fmt(c.publishP999)}`, `${fmt(c.e2eP50)} / ${fmt(c.e2eP99)} / ${fmt(c.e2eP999)} / ${fmt(c.e2eMax)}`]);
  return md(['target msgs/s', 'API', 'published msgs/s', 'consumed msgs/s', 'publish p50 / p99 / p99.9 (ms)', 'end-to-end p50 / p99 / p99.9 / max (ms)'], rows);
}

function md(head: string[], rows: string[][]): string {
  return [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
}

function htmlTable(markdown: string): string {
  const lines = markdown.split('\n').filter((l) => l.startsWith('|'));
  if (lines.length < 2) return '';
  const cells = (l: string) => l.slice(1, -1).split(' | ').map((c) => c.trim());
  const [head, , ...rows] = lines;
  return `<table><thead><tr>${cells(head!).map((c) => `<th>${esc(c)}</th>`).join('')}</tr></thead><tbody>${rows.map((r) => `<tr>${cells(r).map((c) => `<td>${esc(c)}</td>`).join('')}</tr>`).join('')}</tbody></table>`;
}

function kv(obj: Record<string, unknown>): string {
  return `<table class="kv">${Object.entries(obj)
    .map(([k, v]) => `<tr><th>${esc(k)}</th><td>${esc(v === null || v === undefined ? '—' : typeof v === 'object' ? JSON.stringify(v) : String(v))}</td></tr>`)
    .join('')}</table>`;
}

export function renderReport(r: BenchResults): string {
  const cs = charts(r);
  const w = r.workload;
  const title = `uringmq bench — ${r.name}`;
  const what = `${r.kind}, ${r.kind === 'comparison' ? w.compare.apis.join(' vs ') : w.api}, ${w.messageSize} B messages, durability ${r.environment.durability}, ${w.topics} topic(s) × ${w.partitions} partition(s), ${w.producers} producer(s), ${w.consumerGroups} group(s) × ${w.consumersPerGroup} consumer(s)`;
  const parts: string[] = [];
  parts.push(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title><style>
body{font-family:system-ui,sans-serif;margin:24px;color:#222;max-width:1000px}
h1{font-size:22px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ddd}
table{border-collapse:collapse;font-size:12px;margin:8px 0}td,th{border:1px solid #ccc;padding:3px 6px;text-align:right}
th{background:#f3f3f3}table.kv th,table.kv td{text-align:left}
.abort{background:#fde8e8;border:1px solid #d33;padding:8px 12px}.note{color:#555;font-size:13px}
figure{margin:12px 0}pre{background:#f6f6f6;padding:8px;overflow:auto;font-size:11px}
</style></head><body>`);
  parts.push(`<h1>${esc(title)}</h1><p>${esc(what)}.<br><span class="note">${esc(r.startedAt)} — ${r.durationSec} s. Command: <code>${esc(r.command.join(' '))}</code></span></p>`);
  if (r.aborted) parts.push(`<p class="abort"><b>Stopped by the circuit breaker:</b> ${esc(r.aborted.reason)}<br>Diagnostic snapshot: <code>${esc(r.aborted.snapshot)}</code></p>`);
  parts.push(
    `<p class="note">Latency is measured from each message's <i>scheduled</i> send time of an open-loop schedule (stalls count, no coordinated omission), and also from the actual send (dashed lines, "from send" columns). Each step's first ${w.kind === 'max-rate' ? w.maxRate.warmupSeconds : w.warmupSeconds} s are warm-up and discarded from its statistics. Samples every ${w.sampleSeconds} s.</p>`,
  );
  if (r.steps.length) parts.push(`<h2>Steps</h2>${htmlTable(stepTable(r))}`);
  if (r.comparison) parts.push(`<h2>Comparison: ${esc(w.compare.apis.join(' vs '))} (same rates, ${w.messageSize} B)</h2>${htmlTable(comparisonTable(r))}`);
  if (r.maxRate) parts.push(`<h2>Max sustainable rate</h2><p><b>${r.maxRate.sustainableRate === null ? 'none' : `${fmt(r.maxRate.sustainableRate)} msgs/s`}</b> — ${esc(r.maxRate.note)}</p>`);
  if (r.backlog) parts.push(`<h2>Backlog</h2>${kv(r.backlog as unknown as Record<string, unknown>)}`);
  parts.push(`<h2>Totals</h2>${kv(r.totals as unknown as Record<string, unknown>)}`);
  if (r.errors.length) parts.push(`<h2>Errors</h2><pre>${esc(r.errors.join('\n'))}</pre>`);
  parts.push('<h2>Charts</h2>');
  for (const c of cs) {
    parts.push(`<figure id="chart-${c.id}">${lineChart(c.spec)}</figure>`);
    parts.push(`<script type="application/json" class="chart-data" data-chart="${c.id}">${scriptJson({ title: c.spec.title, series: c.spec.series.map((s) => ({ name: s.name, points: s.points })) })}</script>`);
  }
  parts.push(`<h2>Environment</h2>${kv(r.environment as unknown as Record<string, unknown>)}`);
  parts.push(`<h2>Workload</h2><pre>${esc(JSON.stringify(w, null, 2))}</pre>`);
  parts.push(`<script type="application/json" id="bench-results">${scriptJson(r)}</script>`);
  parts.push('</body></html>\n');
  return parts.join('\n');
}

/** Writes the HTML report next to the results; returns its path. */
export function writeReport(r: BenchResults, file: string): string {
  fs.writeFileSync(file, renderReport(r));
  return file;
}

/** Writes each chart as a standalone .svg (for a README); returns the paths. */
export function writeChartSvgs(r: BenchResults, base: string): string[] {
  return charts(r).map((c) => {
    const file = `${base}.${c.id}.svg`;
    fs.writeFileSync(file, lineChart(c.spec));
    return file;
  });
}
