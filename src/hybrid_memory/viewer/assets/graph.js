// The note graph, drawn in an <svg> with d3-force (inlined before this file). Shared by the
// one-file page of `hybrid-memory graph --html` and by the memory viewer.
//
// Layout: each cluster (and the unlinked notes as one more group) is laid out on its own by a
// force simulation, then the groups are packed as circles that may not overlap, so clusters
// stay apart by construction. Positions scale with the zoom; node and label sizes stay in
// screen pixels, and labels are placed greedily (most linked first) where they overlap no
// other label and no node, so what shows is always readable; zooming in shows more.
'use strict';
const HMGraph = (() => {
  const NS = 'http://www.w3.org/2000/svg';
  const TYPE = {fact: '#1f77b4', preference: '#2ca02c', decision: '#d62728', insight: '#9467bd',
    question: '#ff7f0e', concept: '#8c564b'};
  const REL = {supersedes: '#d62728', contradicts: '#ff7f0e', part_of: '#8c564b', supports: '#2ca02c',
    example_of: '#17becf', caused_by: '#bcbd22'};
  const FONT_PX = 12, FONT = `${FONT_PX}px system-ui, sans-serif`, CAPTION = `600 ${FONT_PX}px system-ui, sans-serif`;
  // A line box a little taller than the glyphs' (ascent + descent of a 12 px font is about 14 px).
  const LINE_PX = 16, BASELINE_PX = 12;
  const LABEL_CHARS = 32, SPACING = 46, GAP = 60, PAD = 24, MAX_SCALE = 2.4;

  function el(name, attrs, parent) {
    const e = document.createElementNS(NS, name);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
    if (parent) parent.appendChild(e);
    return e;
  }
  function short(text, n) {
    const t = text.replace(/\s+/g, ' ').trim();
    return t.length > n ? t.slice(0, n - 1) + '…' : t;
  }
  const radius = n => 5 + Math.min(9, Math.sqrt(n.degree) * 2.2);

  // One group around (0, 0); returns the radius of the circle holding it.
  function layoutGroup(members, links) {
    if (members.length === 1) {
      members[0].x = 0; members[0].y = 0;
      return radius(members[0]) + 4;
    }
    const sim = d3.forceSimulation(members)
      .force('charge', d3.forceManyBody().strength(-SPACING * 1.5).distanceMax(SPACING * 6))
      .force('link', d3.forceLink(links).id(n => n.id).distance(SPACING).strength(0.6))
      .force('collide', d3.forceCollide(n => radius(n) + SPACING / 3))
      .force('x', d3.forceX(0).strength(0.08)).force('y', d3.forceY(0).strength(0.08))
      .stop();
    // Cooling in fewer steps than d3's default 300: from its phyllotaxis start a cluster settles
    // well within them, and 2,000 notes must lay out in a moment on a slow machine.
    const ticks = members.length > 500 ? 100 : 150;
    sim.alphaDecay(1 - Math.pow(sim.alphaMin(), 1 / ticks));
    for (let i = 0; i < ticks; i++) sim.tick();
    const cx = members.reduce((s, n) => s + n.x, 0) / members.length;
    const cy = members.reduce((s, n) => s + n.y, 0) / members.length;
    let r = 0;
    for (const n of members) {
      n.x -= cx; n.y -= cy;
      r = Math.max(r, Math.hypot(n.x, n.y) + radius(n));
    }
    return r + 4;
  }

  // Pack the group circles so that none overlaps another, in a shape near the view's; groups
  // joined by links are pulled next to each other, so the links between them stay short.
  function packGroups(groups, between, aspect) {
    if (groups.length === 1) { groups[0].x = 0; groups[0].y = 0; return; }
    const sim = d3.forceSimulation(groups)
      .force('collide', d3.forceCollide(g => g.r + GAP / 2).strength(1).iterations(4))
      .force('link', d3.forceLink(between).distance(l => l.source.r + l.target.r + GAP).strength(0.2))
      .force('x', d3.forceX(0).strength(0.04 / aspect)).force('y', d3.forceY(0).strength(0.04 * aspect))
      .stop();
    const ticks = 200;
    sim.alphaDecay(1 - Math.pow(sim.alphaMin(), 1 / ticks));
    for (let i = 0; i < ticks; i++) sim.tick();
    // The collide force is soft: push apart what still overlaps, sweeping along x so that only
    // circles that can touch are compared.
    const widest = Math.max(...groups.map(g => g.r));
    for (let round = 0; round < 100; round++) {
      let moved = false;
      const byX = [...groups].sort((a, b) => a.x - b.x);
      for (let i = 0; i < byX.length; i++) for (let j = i + 1; j < byX.length; j++) {
        const a = byX[i], b = byX[j];
        if (b.x - a.x > a.r + widest + GAP / 2) break;
        const need = a.r + b.r + GAP / 2;
        let dx = b.x - a.x, dy = b.y - a.y, d = Math.hypot(dx, dy);
        if (d >= need) continue;
        if (d < 1e-6) { dx = 1; dy = 0; d = 1; }
        const push = (need - d) / 2 + 0.5;
        a.x -= dx / d * push; a.y -= dy / d * push; b.x += dx / d * push; b.y += dy / d * push;
        moved = true;
      }
      if (!moved) break;
    }
  }

  function layout(nodes, links, clusters, aspect) {
    const groups = [];
    const byGroup = new Map();
    for (const n of nodes) {
      const key = n.cluster || '';
      if (!byGroup.has(key)) byGroup.set(key, []);
      byGroup.get(key).push(n);
    }
    const caption = Object.fromEntries(clusters.map(c => [c.id, c.terms && c.terms.length ? c.terms.join(' · ') : c.label]));
    for (const [key, members] of byGroup) {
      const inside = links.filter(l => l.source.cluster === l.target.cluster && (l.source.cluster || '') === key)
        .map(l => ({source: l.source.id, target: l.target.id}));
      const r = layoutGroup(members, inside);
      groups.push({key, members, r, hue: members[0].hue, caption: key ? (caption[key] || '') : 'not linked'});
    }
    groups.sort((a, b) => b.r - a.r || (a.key < b.key ? -1 : 1));
    const index = new Map(groups.map(g => [g.key, g])), pairs = new Map();
    for (const l of links) {
      const a = l.source.cluster || '', b = l.target.cluster || '';
      if (a !== b) pairs.set(a < b ? a + '\n' + b : b + '\n' + a, [index.get(a), index.get(b)]);
    }
    packGroups(groups, [...pairs.values()].map(([source, target]) => ({source, target})), aspect);
    for (const g of groups) for (const n of g.members) { n.x += g.x; n.y += g.y; }
    return groups;
  }

  // A uniform grid of placed boxes: collision checks touch only nearby boxes.
  function boxGrid(cell) {
    const cells = new Map();
    const keys = b => {
      const out = [];
      for (let i = Math.floor(b.x0 / cell); i <= Math.floor(b.x1 / cell); i++)
        for (let j = Math.floor(b.y0 / cell); j <= Math.floor(b.y1 / cell); j++) out.push(i * 65536 + j);
      return out;
    };
    return {
      // Whether ``b`` overlaps a placed box; boxes owned by ``except`` do not count.
      hits(b, except) {
        for (const k of keys(b)) for (const o of cells.get(k) || [])
          if ((except === undefined || o.owner !== except) && b.x0 < o.x1 && o.x0 < b.x1 && b.y0 < o.y1 && o.y0 < b.y1) return true;
        return false;
      },
      add(b) { for (const k of keys(b)) { if (!cells.has(k)) cells.set(k, []); cells.get(k).push(b); } },
    };
  }

  function create(svg, data, options = {}) {
    const onSelect = options.onSelect || (() => {});
    const measure = document.createElement('canvas').getContext('2d');
    const nodes = data.nodes.map(n => Object.assign({}, n));
    const byId = new Map(nodes.map(n => [n.id, n]));
    const links = data.links.filter(l => byId.has(l.from) && byId.has(l.to))
      .map(l => ({source: byId.get(l.from), target: byId.get(l.to), relation: l.relation}));
    for (const n of nodes) n.links = [];
    for (const l of links) { l.source.links.push(l); l.target.links.push(l); }
    const size = () => [svg.clientWidth || 800, svg.clientHeight || 600];
    const [w0, h0] = size();
    const started = performance.now();
    const groups = layout(nodes, links, data.clusters || [], w0 / h0);
    const layoutMs = performance.now() - started;

    svg.textContent = '';
    const hullLayer = el('g', {class: 'hulls'}, svg), linkLayer = el('g', {class: 'links'}, svg);
    const nodeLayer = el('g', {class: 'nodes'}, svg), labelLayer = el('g', {class: 'labels'}, svg);
    const relations = [...new Set(links.map(l => l.relation))].sort();
    const paths = Object.fromEntries(relations.map(r => [r, el('path', {class: 'link', 'data-relation': r,
      stroke: REL[r] || '#aab', fill: 'none'}, linkLayer)]));
    const focusPath = el('path', {class: 'focus-links', fill: 'none'}, linkLayer);
    measure.font = CAPTION;
    for (const g of groups) {
      g.hull = el('circle', {class: 'hull', fill: g.key ? `hsl(${g.hue},60%,96%)` : '#f4f4f4',
        stroke: g.key ? `hsl(${g.hue},45%,80%)` : '#ddd'}, hullLayer);
      g.text = short(g.caption, 48);
      g.width = measure.measureText(g.text).width;
      g.label = el('text', {class: 'caption'}, labelLayer);
      g.label.textContent = g.text;
    }
    measure.font = FONT;
    for (const n of nodes) {
      n.el = el('circle', {class: 'node', 'data-id': n.id, 'data-type': n.type, 'data-cluster': n.cluster || '', fill: TYPE[n.type] || '#777',
        stroke: n.cluster ? `hsl(${n.hue},70%,40%)` : '#fff'}, nodeLayer);
      el('title', {}, n.el).textContent = n.content;
      n.el.addEventListener('click', ev => { ev.stopPropagation(); select(n); });
      n.text = short(n.content, LABEL_CHARS);
      n.width = measure.measureText(n.text).width;
      n.label = el('text', {class: 'label', 'data-id': n.id}, labelLayer);
      n.label.textContent = n.text;
      n.label.addEventListener('click', ev => { ev.stopPropagation(); select(n); });
    }

    let view = {k: 1, x: 0, y: 0}, selected = null, hits = null, frame = 0;
    const sx = n => n.x * view.k + view.x, sy = n => n.y * view.k + view.y;
    const screenR = n => Math.max(2.5, radius(n) * Math.min(1, 0.35 + view.k));

    function fit(subset) {
      const [w, h] = size(), set = subset && subset.length ? subset : nodes;
      let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
      for (const n of set) {
        x0 = Math.min(x0, n.x); y0 = Math.min(y0, n.y); x1 = Math.max(x1, n.x); y1 = Math.max(y1, n.y);
      }
      const margin = PAD + 14 + FONT_PX * 1.5;  // room for the biggest node and a caption above its group
      const k = Math.min(MAX_SCALE, (w - 2 * margin) / Math.max(1, x1 - x0), (h - 2 * margin) / Math.max(1, y1 - y0));
      view = {k, x: w / 2 - k * (x0 + x1) / 2, y: h / 2 - k * (y0 + y1) / 2};
      draw();
    }

    function draw() {
      const [w, h] = size();
      for (const g of groups) {
        const r = g.r * view.k;
        g.hull.setAttribute('cx', g.x * view.k + view.x); g.hull.setAttribute('cy', g.y * view.k + view.y);
        g.hull.setAttribute('r', g.members.length > 1 ? r : 0);
      }
      const segments = Object.fromEntries(relations.map(r => [r, []]));
      for (const l of links) segments[l.relation].push(`M${sx(l.source).toFixed(1)},${sy(l.source).toFixed(1)}L${sx(l.target).toFixed(1)},${sy(l.target).toFixed(1)}`);
      for (const r of relations) paths[r].setAttribute('d', segments[r].join(''));
      focusPath.setAttribute('d', selected ? selected.links.map(l => `M${sx(l.source)},${sy(l.source)}L${sx(l.target)},${sy(l.target)}`).join('') : '');
      for (const n of nodes) {
        n.el.setAttribute('cx', sx(n).toFixed(1)); n.el.setAttribute('cy', sy(n).toFixed(1));
        n.el.setAttribute('r', screenR(n).toFixed(1));
      }
      placeLabels(w, h);
    }

    // Greedy label placement in screen pixels: captions first, then the selected note, search
    // hits, each cluster's most linked note, then the others by links; a label shows only where
    // it overlaps no other label. Only the first three kinds may cover other notes' discs, and
    // only in their own cluster: a hub sits amid its cluster, and its label names what it is about.
    // A cluster's hub: its note with strictly more links than any other (a ring or a clique has none).
    const hubs = new Map();
    for (const g of groups.filter(g => g.key)) {
      const [top, next] = [...g.members].sort((a, b) => b.degree - a.degree);
      if (top.degree > next.degree) hubs.set(top, g);
    }
    measure.font = CAPTION;  // a hub's label is bold: measured so
    for (const n of hubs.keys()) { n.width = measure.measureText(n.text).width; n.label.classList.add('hub'); }
    const HUB_OVER_PX = 40;  // a cluster drawn smaller than this does not get its hub labelled over its notes
    function placeLabels(w, h) {
      const discs = boxGrid(64), placed = boxGrid(64);
      const inView = b => b.x0 >= 0 && b.y0 >= 0 && b.x1 <= w && b.y1 <= h;
      for (const n of nodes) {
        const r = screenR(n), x = sx(n), y = sy(n);
        discs.add({x0: x - r, y0: y - r, x1: x + r, y1: y + r, owner: n.cluster || ''});
      }
      for (const g of groups) {
        const cx = g.x * view.k + view.x, top = (g.y - g.r) * view.k + view.y;
        const b = {x0: cx - g.width / 2, y0: top - LINE_PX - 2, x1: cx + g.width / 2, y1: top - 2};
        const show = g.members.length > 1 && inView(b) && !discs.hits(b) && !placed.hits(b);
        g.label.style.display = show ? '' : 'none';
        if (show) { placed.add(b); g.label.setAttribute('x', b.x0); g.label.setAttribute('y', b.y0 + BASELINE_PX); }
      }
      const rank = n => (n === selected ? 0 : hits && hits.has(n) ? 1 : hubs.has(n) ? 2 : 3);
      const order = nodes.filter(n => !hits || hits.has(n) || n === selected)
        .sort((a, b) => rank(a) - rank(b) || b.degree - a.degree || (a.id < b.id ? -1 : 1));
      const shown = new Set();
      for (const n of order) {
        const r = screenR(n), x = sx(n), y = sy(n), tw = n.width, th = LINE_PX;
        const overDiscs = rank(n) < 2 || (rank(n) === 2 && hubs.get(n).r * view.k >= HUB_OVER_PX);
        const spots = [
          {x0: x + r + 3, y0: y - th / 2}, {x0: x - r - 3 - tw, y0: y - th / 2},
          {x0: x - tw / 2, y0: y - r - 2 - th}, {x0: x - tw / 2, y0: y + r + 2},
        ];
        for (const s of spots) {
          const b = {x0: s.x0, y0: s.y0, x1: s.x0 + tw, y1: s.y0 + th};
          if (!inView(b) || placed.hits(b) || discs.hits(b, overDiscs ? n.cluster || '' : undefined)) continue;
          placed.add(b); shown.add(n);
          n.label.setAttribute('x', b.x0.toFixed(1)); n.label.setAttribute('y', (b.y0 + BASELINE_PX).toFixed(1));
          break;
        }
      }
      for (const n of nodes) n.label.style.display = shown.has(n) ? '' : 'none';
    }

    function redraw() {
      if (!frame) frame = requestAnimationFrame(() => { frame = 0; draw(); });
    }
    function zoomAt(px, py, factor) {
      const k = Math.max(0.02, Math.min(8, view.k * factor)), f = k / view.k;
      view = {k, x: px - (px - view.x) * f, y: py - (py - view.y) * f};
      redraw();
    }
    svg.addEventListener('wheel', ev => {
      ev.preventDefault();
      const box = svg.getBoundingClientRect();
      zoomAt(ev.clientX - box.left, ev.clientY - box.top, Math.exp(-ev.deltaY * 0.0015));
    }, {passive: false});
    let drag = null;
    svg.addEventListener('pointerdown', ev => {
      if (ev.target.classList.contains('node') || ev.target.classList.contains('label')) return;
      drag = {x: ev.clientX, y: ev.clientY, vx: view.x, vy: view.y};
      svg.setPointerCapture(ev.pointerId);
    });
    svg.addEventListener('pointermove', ev => {
      if (!drag) return;
      view = {k: view.k, x: drag.vx + ev.clientX - drag.x, y: drag.vy + ev.clientY - drag.y};
      redraw();
    });
    svg.addEventListener('pointerup', () => { drag = null; });
    svg.addEventListener('dblclick', ev => {
      const box = svg.getBoundingClientRect();
      zoomAt(ev.clientX - box.left, ev.clientY - box.top, 2);
    });

    function select(n) {
      if (selected) selected.el.classList.remove('selected');
      selected = n;
      if (n) n.el.classList.add('selected');
      draw();
      onSelect(n ? describe(n) : null);
    }
    function describe(n) {
      const linked = n.links.map(l => {
        const out = l.source === n, other = out ? l.target : l.source;
        return {id: other.id, type: other.type, content: other.content, relation: l.relation, outgoing: out};
      });
      return {id: n.id, type: n.type, content: n.content, tags: n.tags, sources: n.sources, links: linked};
    }
    function search(query) {
      const q = query.trim().toLowerCase();
      hits = q ? new Set(nodes.filter(n => n.content.toLowerCase().includes(q) ||
        n.tags.join(' ').toLowerCase().includes(q))) : null;
      for (const n of nodes) {
        n.el.classList.toggle('dim', !!hits && !hits.has(n));
        n.el.classList.toggle('hit', !!hits && hits.has(n));
      }
      svg.classList.toggle('searching', !!hits);
      draw();
      return hits ? [...hits].map(n => n.id) : [];
    }
    function focus(ids) {
      const set = ids.map(id => byId.get(id)).filter(Boolean);
      if (set.length) fit(set);
      if (set.length === 1) select(set[0]);
    }

    fit();
    return {
      fit: () => fit(), search, focus, select: id => select(byId.get(id) || null),
      zoom: factor => { const [w, h] = size(); zoomAt(w / 2, h / 2, factor); }, redraw,
      nodeCount: nodes.length, layoutMs, groups: groups.map(g => ({key: g.key, members: g.members.map(n => n.id)})),
    };
  }

  function legend(container) {
    for (const [t, c] of Object.entries(TYPE)) {
      const item = document.createElement('span'), dot = document.createElement('i');
      dot.style.background = c; item.append(dot, t); container.appendChild(item);
    }
  }

  // The detail panel of a selected note: text, tags, its links (clickable) and its sources.
  function detail(container, note, onPick) {
    container.textContent = '';
    if (!note) { container.textContent = 'Click a note to read it, its links and its sources.'; return; }
    const add = (tag, text, cls) => {
      const e = document.createElement(tag); e.textContent = text;
      if (cls) e.className = cls;
      container.appendChild(e); return e;
    };
    add('div', `${note.type} · ${note.id}`, 'meta');
    add('p', note.content, 'content');
    if (note.tags.length) add('p', 'tags: ' + note.tags.join(', '), 'meta');
    if (note.links.length) {
      add('h3', `Links (${note.links.length})`);
      const list = add('ul', '', 'linked');
      for (const l of note.links) {
        const li = document.createElement('li'), a = document.createElement('a');
        a.href = '#'; a.textContent = short(l.content, 80); a.dataset.id = l.id;
        a.addEventListener('click', ev => { ev.preventDefault(); onPick(l.id); });
        li.append(l.outgoing ? `${l.relation} → ` : `← ${l.relation} `, a);
        list.appendChild(li);
      }
    }
    if (note.sources.length) {
      add('h3', `Sources (${note.sources.length})`);
      for (const s of note.sources) add('div', `[memory:${s.id}] ${s.text}`, 'src');
    }
  }

  return {create, legend, detail};
})();
