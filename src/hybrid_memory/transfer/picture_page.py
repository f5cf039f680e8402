"""The page of ``hybrid-memory graph --html``: inline CSS and JS, a small force layout, no network."""

STYLE = """
body{margin:0;font:14px system-ui,sans-serif;display:flex;height:100vh;color:#222}
#side{width:320px;padding:12px;border-right:1px solid #ddd;overflow:auto;box-sizing:border-box}
#side h1{font-size:16px;margin:0 0 8px}#search{width:100%;padding:6px;box-sizing:border-box}
#legend span{display:inline-block;margin:2px 6px 2px 0}#legend i{display:inline-block;width:10px;height:10px;
border-radius:5px;margin-right:3px}#detail{margin-top:12px;white-space:pre-wrap}
#detail .src{border-left:3px solid #bbb;padding-left:6px;margin:6px 0;color:#444}
svg{flex:1;background:#fafafa}.node{cursor:pointer;stroke-width:2}.dim{opacity:.12}
.hit{stroke:#000;stroke-width:3}.clabel{font-size:12px;fill:#555;font-weight:600;pointer-events:none}
"""

SCRIPT = """
const data = JSON.parse(document.getElementById('graph-data').textContent);
const TYPE = {fact:'#1f77b4',preference:'#2ca02c',decision:'#d62728',insight:'#9467bd',
  question:'#ff7f0e',concept:'#8c564b'};
const REL = {supersedes:'#d62728',contradicts:'#ff7f0e',part_of:'#8c564b',supports:'#2ca02c'};
const W = 1000, H = 800, svg = document.getElementById('canvas'), NS = 'http://www.w3.org/2000/svg';
svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
const nodes = data.nodes.map((n, i) => Object.assign({x: W/2 + 300*Math.cos(i), y: H/2 + 300*Math.sin(i*1.3),
  vx: 0, vy: 0}, n));
const byId = Object.fromEntries(nodes.map(n => [n.id, n]));
const links = data.links.filter(l => byId[l.from] && byId[l.to]);
function layout() {
  const rounds = nodes.length > 600 ? 60 : 300;
  for (let r = 0; r < rounds; r++) {
    const heat = 1 - r / rounds;
    for (const a of nodes) for (const b of nodes) {
      if (a === b) continue;
      const dx = a.x - b.x, dy = a.y - b.y, d2 = dx*dx + dy*dy + 0.01;
      const f = (a.cluster === b.cluster ? 300 : 900) / d2;
      a.vx += dx * f; a.vy += dy * f;
    }
    for (const l of links) {
      const a = byId[l.from], b = byId[l.to], dx = b.x - a.x, dy = b.y - a.y;
      a.vx += dx * 0.02; a.vy += dy * 0.02; b.vx -= dx * 0.02; b.vy -= dy * 0.02;
    }
    for (const n of nodes) {
      n.vx += (W/2 - n.x) * 0.005; n.vy += (H/2 - n.y) * 0.005;
      n.x = Math.max(15, Math.min(W-15, n.x + Math.max(-20, Math.min(20, n.vx)) * heat));
      n.y = Math.max(15, Math.min(H-15, n.y + Math.max(-20, Math.min(20, n.vy)) * heat));
      n.vx *= 0.5; n.vy *= 0.5;
    }
  }
}
function el(name, attrs, parent) {
  const e = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  parent.appendChild(e); return e;
}
function show(n) {
  const d = document.getElementById('detail'); d.textContent = '';
  const head = document.createElement('b'); head.textContent = `${n.type} · ${n.id}`; d.appendChild(head);
  const p = document.createElement('p'); p.textContent = n.content; d.appendChild(p);
  if (n.tags.length) {
    const t = document.createElement('p'); t.textContent = 'tags: ' + n.tags.join(', '); d.appendChild(t);
  }
  for (const s of n.sources) {
    const q = document.createElement('div'); q.className = 'src';
    q.textContent = `[memory:${s.id}] ${s.text}`; d.appendChild(q);
  }
}
function draw() {
  for (const l of links) el('line', {class: 'link', 'data-relation': l.relation, x1: byId[l.from].x,
    y1: byId[l.from].y, x2: byId[l.to].x, y2: byId[l.to].y, stroke: REL[l.relation] || '#999',
    'stroke-width': 1.5}, svg);
  for (const n of nodes) {
    const c = el('circle', {class: 'node', 'data-id': n.id, 'data-type': n.type, cx: n.x, cy: n.y,
      r: 6 + Math.min(10, n.degree * 1.5), fill: TYPE[n.type] || '#777',
      stroke: n.cluster ? `hsl(${n.hue},70%,45%)` : '#fff'}, svg);
    el('title', {}, c).textContent = n.content;
    c.addEventListener('click', () => show(n)); n.el = c;
  }
  for (const cl of data.clusters) {
    const members = nodes.filter(n => n.cluster === cl.id);
    const x = members.reduce((s, n) => s + n.x, 0) / members.length;
    const y = Math.min(...members.map(n => n.y)) - 18;
    const label = el('text', {class: 'clabel', x: x, y: Math.max(12, y), 'text-anchor': 'middle'}, svg);
    label.textContent = cl.label;
  }
}
document.getElementById('search').addEventListener('input', e => {
  const q = e.target.value.trim().toLowerCase();
  for (const n of nodes) {
    const hit = q && (n.content.toLowerCase().includes(q) || n.tags.join(' ').toLowerCase().includes(q));
    n.el.classList.toggle('dim', !!q && !hit); n.el.classList.toggle('hit', !!hit);
  }
});
const legend = document.getElementById('legend');
for (const [t, c] of Object.entries(TYPE)) {
  legend.insertAdjacentHTML('beforeend', `<span><i style="background:${c}"></i>${t}</span>`);
}
layout(); draw();
document.body.dataset.rendered = String(nodes.length);
"""
