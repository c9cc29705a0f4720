/**
 * Flamegraphs from `perf script` without third-party templates: the text is folded
 * into stacks ("thread;frame;frame count", Brendan Gregg's format) and rendered as
 * one self-contained HTML page (inline SVG drawn by a small inline script: click a
 * frame to zoom, type to highlight). Frames are named by kind: JavaScript (from
 * node --perf-basic-prof maps), the uringmq addon (C++), other native code, kernel.
 */
import * as path from 'node:path';

export type FrameKind = 'js' | 'addon' | 'native' | 'kernel' | 'thread';

/** Folded stacks: root first, each frame as "kind:name". */
export type Folded = Map<string, number>;

interface Frame {
  sym: string;
  dso: string;
}

/** One frame of perf script output as "kind:name", or null to drop it. */
export function frameName(f: Frame, root: string): string | null {
  const dsoBase = path.basename(f.dso);
  if (f.dso.includes('kernel.kallsyms') || f.dso.startsWith('[kernel')) return `kernel:${f.sym}`;
  if (/\/perf-\d+\.map$/.test(f.dso) || /^(JS|LazyCompile|Function|Builtin|BytecodeHandler|Stub|RegExp|Script|InterpretedFunction):/.test(f.sym)) {
    let s = f.sym.replace(/^(JS|LazyCompile|Function|InterpretedFunction):/, '');
    if (root) s = s.split(`file://${root}/`).join('').split(`${root}/`).join('');
    return `js:${s}`;
  }
  if (f.sym === '[unknown]') return dsoBase === '[unknown]' ? 'native:[unknown]' : `native:[${dsoBase}]`;
  if (dsoBase.startsWith('uringmq') && dsoBase.endsWith('.node')) return `addon:${f.sym}`;
  return `native:${f.sym}`;
}

/**
 * Folds `perf script -F comm,pid,tid,ip,sym,dso` text. `pids`: keep only these
 * processes (the broker), empty = all. Each stack gets its thread name as root.
 */
export class PerfFolder {
  readonly folded: Folded = new Map();
  readonly pidsSeen = new Set<number>();
  samples = 0;
  private comm = '';
  private pid = 0;
  private frames: string[] = [];
  private inSample = false;

  constructor(
    private readonly pids: ReadonlySet<number>,
    private readonly root: string,
  ) {}

  line(l: string): void {
    if (l.length === 0 || l.trim().length === 0) return this.flush();
    if (l.startsWith('\t') || l.startsWith(' ')) {
      if (!this.inSample) return;
      const m = /^\s*([0-9a-fA-F]+)\s+(.*)\s+\((.*)\)\s*$/.exec(l);
      if (!m) return;
      const name = frameName({ sym: m[2]!.trim(), dso: m[3]! }, this.root);
      if (name) this.frames.push(name);
      return;
    }
    this.flush();
    const h = /^(.*?)\s+(\d+)\/(\d+)\b/.exec(l);
    if (!h) return;
    this.comm = h[1]!.trim();
    this.pid = Number(h[2]);
    this.inSample = true;
  }

  /** Call once at the end. */
  end(): Folded {
    this.flush();
    return this.folded;
  }

  private flush(): void {
    if (!this.inSample) return;
    this.inSample = false;
    const frames = this.frames;
    this.frames = [];
    this.pidsSeen.add(this.pid);
    if (this.pids.size > 0 && !this.pids.has(this.pid)) return;
    const stack: string[] = [`thread:${this.comm}`];
    // perf prints leaf first; consecutive unknown frames say nothing more than one.
    for (let i = frames.length - 1; i >= 0; i--) {
      const f = frames[i]!;
      if (f === stack[stack.length - 1] && f.endsWith('[unknown]')) continue;
      stack.push(f);
    }
    const key = stack.join(';');
    this.folded.set(key, (this.folded.get(key) ?? 0) + 1);
    this.samples++;
  }
}

/** Brendan Gregg's folded format; kernel frames get _[k], JavaScript _[j]. */
export function foldedText(f: Folded): string {
  const out: string[] = [];
  for (const [stack, n] of [...f].sort((a, b) => b[1] - a[1]))
    out.push(
      `${stack
        .split(';')
        .map((fr) => {
          const i = fr.indexOf(':');
          const kind = fr.slice(0, i);
          const name = fr.slice(i + 1).replace(/;/g, ',');
          return kind === 'kernel' ? `${name}_[k]` : kind === 'js' ? `${name}_[j]` : name;
        })
        .join(';')} ${n}`,
    );
  return `${out.join('\n')}\n`;
}

interface Node {
  n: string;
  k: FrameKind;
  v: number;
  c: Node[];
}

export function buildTree(f: Folded): Node {
  const root: Node = { n: 'all', k: 'thread', v: 0, c: [] };
  for (const [stack, count] of f) {
    root.v += count;
    let node = root;
    for (const fr of stack.split(';')) {
      const i = fr.indexOf(':');
      const k = fr.slice(0, i) as FrameKind;
      const n = fr.slice(i + 1);
      let child = node.c.find((c) => c.n === n && c.k === k);
      if (!child) node.c.push((child = { n, k, v: 0, c: [] }));
      child.v += count;
      node = child;
    }
  }
  const sort = (n: Node) => {
    n.c.sort((a, b) => b.v - a.v);
    n.c.forEach(sort);
  };
  sort(root);
  return root;
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** The flamegraph page: tree JSON plus a small renderer, nothing fetched. */
export function flamegraphHtml(f: Folded, title: string, notes: string[] = []): string {
  const tree = buildTree(f);
  const data = JSON.stringify(tree).replace(/</g, '\\u003c');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title><style>
body{font-family:system-ui,sans-serif;margin:16px;color:#222}
#fg{border:1px solid #ccc}#fg text{font:11px monospace;pointer-events:none}
#fg rect{stroke:#fff;stroke-width:.5;cursor:pointer}#info{font:12px monospace;height:1.4em;margin:6px 0}
.legend span{display:inline-block;padding:1px 6px;margin-right:6px;font-size:12px}
</style></head><body>
<h1 style="font-size:18px">${esc(title)}</h1>
<p style="font-size:13px">${tree.v} samples. Click a frame to zoom in, click the top bar to zoom out; type to highlight matching frames. Roots are thread names (the I/O thread is <code>uringmq-io</code>).</p>
${notes.map((n) => `<p style="font-size:13px;color:#a40">${esc(n)}</p>`).join('')}
<p class="legend"><span style="background:#7ccf7c">JavaScript</span><span style="background:#f0a050">uringmq addon (C++)</span><span style="background:#e6d15a">other native (node, V8, libc)</span><span style="background:#8cb8e8">kernel</span><span style="background:#ccc">thread</span>
<input id="q" placeholder="highlight (regex)" style="margin-left:12px"></p>
<div id="info"></div><svg id="fg" width="1200"></svg>
<script type="application/json" id="flame-data">${data}</script>
<script>
(function(){
var root=JSON.parse(document.getElementById('flame-data').textContent);
var svg=document.getElementById('fg'),info=document.getElementById('info'),q=document.getElementById('q');
var W=1200,RH=17,NS='http://www.w3.org/2000/svg',zoom=root,re=null;
var base={js:[124,207,124],addon:[240,160,80],native:[230,209,90],kernel:[140,184,232],thread:[204,204,204]};
function hash(s){var h=0;for(var i=0;i<s.length;i++)h=(h*31+s.charCodeAt(i))|0;return Math.abs(h)%30-15;}
function color(d){var b=base[d.k]||base.native,j=hash(d.n);return 'rgb('+(b[0]+j)+','+(b[1]+j)+','+(b[2]+j)+')';}
function depth(n){var m=0;for(var i=0;i<n.c.length;i++)m=Math.max(m,depth(n.c[i]));return m+1;}
function path(n,t,acc){if(n===t)return acc.concat([n]);for(var i=0;i<n.c.length;i++){var r=path(n.c[i],t,acc.concat([n]));if(r)return r;}return null;}
function draw(){
  while(svg.firstChild)svg.removeChild(svg.firstChild);
  var anc=path(root,zoom,[])||[root],D=depth(zoom)+anc.length-1;
  svg.setAttribute('height',D*RH+4);
  var y=0;
  anc.slice(0,-1).forEach(function(a){box(a,0,W,y);y+=RH;});
  (function rec(n,x,w,y){box(n,x,w,y);var cx=x;n.c.forEach(function(c){var cw=w*c.v/n.v;if(cw>=0.5)rec(c,cx,cw,y+RH);cx+=cw;});})(zoom,0,W,y);
}
function box(n,x,w,y){
  var g=document.createElementNS(NS,'g'),r=document.createElementNS(NS,'rect');
  r.setAttribute('x',x);r.setAttribute('y',y);r.setAttribute('width',Math.max(w,0.5));r.setAttribute('height',RH-1);
  r.setAttribute('fill',re&&re.test(n.n)?'#e040e0':color(n));
  var pct=(100*n.v/root.v).toFixed(2);
  r.addEventListener('mouseover',function(){info.textContent=n.n+'  ('+n.k+', '+n.v+' samples, '+pct+'%)';});
  r.addEventListener('click',function(){zoom=(n===zoom&&n!==root)?root:n;draw();});
  var t=document.createElementNS(NS,'title');t.textContent=n.n+' ('+n.v+' samples, '+pct+'%)';r.appendChild(t);
  g.appendChild(r);
  if(w>30){var tx=document.createElementNS(NS,'text');tx.setAttribute('x',x+3);tx.setAttribute('y',y+12);
    var max=Math.floor((w-6)/6.6);tx.textContent=n.n.length>max?n.n.slice(0,Math.max(0,max-1))+'\u2026':n.n;g.appendChild(tx);}
  svg.appendChild(g);
}
q.addEventListener('input',function(){try{re=q.value?new RegExp(q.value):null;}catch(e){re=null;}draw();});
draw();
})();
</script></body></html>
`;
}
