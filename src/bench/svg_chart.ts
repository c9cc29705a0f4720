/**
 * Line charts as inline SVG strings, for reports that open offline: no scripts, no
 * fonts or styles from elsewhere. Hovering a point shows its value (SVG <title>).
 */

export interface Series {
  name: string;
  color: string;
  points: Array<[number, number]>;
  dashed?: boolean;
  /** Draw as a step function (value holds until the next point). */
  stepped?: boolean;
}

export interface Band {
  x0: number;
  x1: number;
  label: string;
  /** warm-up bands are hatched */
  kind: 'warmup' | 'measured';
}

export interface ChartSpec {
  title: string;
  xLabel: string;
  yLabel: string;
  series: Series[];
  bands?: Band[];
  yLog?: boolean;
  /** x values are percentiles (0–100), drawn on the usual HdrHistogram log scale. */
  xPercentile?: boolean;
  width?: number;
  height?: number;
}

export const PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf', '#7f7f7f', '#bcbd22'];

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** Percentile → "nines" scale: 90 → 1, 99 → 2, 99.9 → 3; the max (100) sits at the right edge. */
const MAX_NINES = 5;
export function pctToX(p: number): number {
  return p >= 100 ? MAX_NINES : Math.min(MAX_NINES, -Math.log10(1 - p / 100));
}

function niceStep(span: number, target: number): number {
  const raw = span / target;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const f = raw / mag;
  return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag;
}

export function fmtNum(v: number): string {
  const a = Math.abs(v);
  if (a >= 1e6) return `${+(v / 1e6).toFixed(2)}M`;
  if (a >= 1e4) return `${+(v / 1e3).toFixed(1)}k`;
  if (a >= 100) return `${Math.round(v)}`;
  if (a >= 1) return `${+v.toFixed(2)}`;
  if (a === 0) return '0';
  return `${+v.toPrecision(2)}`;
}

export function lineChart(spec: ChartSpec): string {
  const W = spec.width ?? 920;
  // Legend entries flow into as many rows as they need under the plot.
  const legend: Array<{ s: Series; x: number; row: number }> = [];
  let lx = 64;
  let row = 0;
  for (const s of spec.series) {
    const w = 30 + s.name.length * 6.2;
    if (lx + w > W - 8 && lx > 64) {
      row++;
      lx = 64;
    }
    legend.push({ s, x: lx, row });
    lx += w;
  }
  const H = (spec.height ?? 300) + row * 15;
  const m = { l: 64, r: 16, t: 28, b: 58 + row * 15 };
  const pw = W - m.l - m.r;
  const ph = H - m.t - m.b;
  const xs: number[] = [];
  const ys: number[] = [];
  const tx = (x: number) => (spec.xPercentile ? pctToX(x) : x);
  for (const s of spec.series)
    for (const [x, y] of s.points) {
      if (!Number.isFinite(x) || !Number.isFinite(y)) continue;
      xs.push(tx(x));
      if (!spec.yLog || y > 0) ys.push(y);
    }
  for (const b of spec.bands ?? []) xs.push(b.x0, b.x1);
  const parts: string[] = [];
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" font-family="sans-serif" font-size="11" role="img">`);
  parts.push(`<title>${esc(spec.title)}</title><rect x="0" y="0" width="${W}" height="${H}" fill="#fff"/>`);
  parts.push(`<text x="${m.l}" y="16" font-size="13" font-weight="bold">${esc(spec.title)}</text>`);
  if (xs.length === 0 || ys.length === 0) {
    parts.push(`<text x="${W / 2}" y="${H / 2}" text-anchor="middle" fill="#888">no data</text></svg>`);
    return parts.join('');
  }
  let x0 = spec.xPercentile ? 0 : Math.min(...xs);
  let x1 = spec.xPercentile ? MAX_NINES : Math.max(...xs);
  if (x1 === x0) x1 = x0 + 1;
  let y0: number;
  let y1: number;
  if (spec.yLog) {
    y0 = 10 ** Math.floor(Math.log10(Math.min(...ys)));
    y1 = 10 ** Math.ceil(Math.log10(Math.max(...ys)));
    if (y1 <= y0) y1 = y0 * 10;
  } else {
    y0 = 0;
    const max = Math.max(...ys);
    const st = niceStep(max > 0 ? max : 1, 5);
    y1 = Math.max(st, Math.ceil((max > 0 ? max : 1) / st) * st);
  }
  const X = (x: number) => m.l + ((tx(x) - x0) / (x1 - x0)) * pw;
  const Xr = (xt: number) => m.l + ((xt - x0) / (x1 - x0)) * pw; // already transformed
  const Y = (y: number) => {
    if (spec.yLog) {
      const v = Math.max(y, y0);
      return m.t + ph - ((Math.log10(v) - Math.log10(y0)) / (Math.log10(y1) - Math.log10(y0))) * ph;
    }
    return m.t + ph - ((y - y0) / (y1 - y0)) * ph;
  };
  parts.push(`<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><line x1="0" y1="0" x2="0" y2="6" stroke="#ddd" stroke-width="3"/></pattern></defs>`);
  // bands
  let alt = 0;
  for (const b of spec.bands ?? []) {
    const bx0 = Xr(b.x0);
    const bx1 = Xr(b.x1);
    if (b.kind === 'warmup') parts.push(`<rect x="${f(bx0)}" y="${m.t}" width="${f(Math.max(0, bx1 - bx0))}" height="${ph}" fill="url(#hatch)"><title>warm-up (discarded): ${esc(b.label)}</title></rect>`);
    else {
      parts.push(`<rect x="${f(bx0)}" y="${m.t}" width="${f(Math.max(0, bx1 - bx0))}" height="${ph}" fill="${alt++ % 2 ? '#f3f6fa' : '#e8eef6'}"><title>${esc(b.label)}</title></rect>`);
      parts.push(`<text x="${f(bx0 + 3)}" y="${m.t + 11}" fill="#567" font-size="10">${esc(b.label)}</text>`);
    }
  }
  // axes + grid
  parts.push(`<g stroke="#ccc" stroke-width="1">`);
  const yTicks: number[] = [];
  if (spec.yLog) for (let v = y0; v <= y1 * 1.0001; v *= 10) yTicks.push(v);
  else {
    const st = niceStep(y1 - y0, 5);
    for (let v = y0; v <= y1 + st / 1e6; v += st) yTicks.push(v);
  }
  for (const v of yTicks) parts.push(`<line x1="${m.l}" x2="${m.l + pw}" y1="${f(Y(v))}" y2="${f(Y(v))}"/>`);
  const xTicks: Array<[number, string]> = [];
  if (spec.xPercentile) for (let k = 0; k <= MAX_NINES; k++) xTicks.push([k, k === MAX_NINES ? 'max' : `${k === 0 ? '0' : (100 - 100 / 10 ** k).toFixed(Math.max(0, k - 2))}%`]);
  else {
    const st = niceStep(x1 - x0, 8);
    for (let v = Math.ceil(x0 / st) * st; v <= x1 + st / 1e6; v += st) xTicks.push([v, fmtNum(v)]);
  }
  for (const [v] of xTicks) parts.push(`<line y1="${m.t}" y2="${m.t + ph}" x1="${f(Xr(v))}" x2="${f(Xr(v))}" stroke-dasharray="2,3"/>`);
  parts.push(`</g>`);
  parts.push(`<rect x="${m.l}" y="${m.t}" width="${pw}" height="${ph}" fill="none" stroke="#888"/>`);
  for (const v of yTicks) parts.push(`<text x="${m.l - 4}" y="${f(Y(v) + 4)}" text-anchor="end">${fmtNum(v)}</text>`);
  for (const [v, l] of xTicks) {
    const at = Xr(v);
    const anchor = at > m.l + pw - 20 ? 'end' : at < m.l + 20 ? 'start' : 'middle';
    parts.push(`<text x="${f(at)}" y="${m.t + ph + 14}" text-anchor="${anchor}">${esc(l)}</text>`);
  }
  parts.push(`<text x="${m.l + pw / 2}" y="${m.t + ph + 30}" text-anchor="middle" fill="#444">${esc(spec.xLabel)}</text>`);
  parts.push(`<text transform="translate(14 ${m.t + ph / 2}) rotate(-90)" text-anchor="middle" fill="#444">${esc(spec.yLabel)}</text>`);
  // series
  for (const s of spec.series) {
    const pts = s.points.filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y) && (!spec.yLog || y > 0));
    if (pts.length === 0) continue;
    let d = '';
    pts.forEach(([x, y], i) => {
      if (i === 0) d += `M${f(X(x))},${f(Y(y))}`;
      else if (s.stepped) d += `H${f(X(x))}V${f(Y(y))}`;
      else d += `L${f(X(x))},${f(Y(y))}`;
    });
    parts.push(`<path d="${d}" fill="none" stroke="${s.color}" stroke-width="1.8"${s.dashed ? ' stroke-dasharray="5,3"' : ''}><title>${esc(s.name)}</title></path>`);
    if (!s.stepped && pts.length <= 400)
      for (const [x, y] of pts) parts.push(`<circle cx="${f(X(x))}" cy="${f(Y(y))}" r="2.2" fill="${s.color}"><title>${esc(s.name)}: ${fmtNum(y)} at ${spec.xPercentile ? `p${x}` : fmtNum(x)}</title></circle>`);
  }
  // legend
  for (const { s, x, row: r } of legend) {
    const ly = m.t + ph + 48 + r * 15;
    parts.push(`<line x1="${f(x)}" x2="${f(x + 18)}" y1="${ly - 4}" y2="${ly - 4}" stroke="${s.color}" stroke-width="2"${s.dashed ? ' stroke-dasharray="5,3"' : ''}/>`);
    parts.push(`<text x="${f(x + 22)}" y="${ly}">${esc(s.name)}</text>`);
  }
  parts.push('</svg>');
  return parts.join('');
}

function f(n: number): string {
  return (Math.round(n * 10) / 10).toString();
}
