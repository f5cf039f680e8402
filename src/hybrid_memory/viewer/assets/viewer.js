// The memory viewer: projects, threads and their messages, the note graph, recent captures,
// and what recall returns with why. Read-only; every request goes to the server that sent the page.
'use strict';
(() => {
  const $ = id => document.getElementById(id);
  const state = {project: null, tab: 'threads', graph: null, loaded: {}};

  // The token travels in the URL's fragment (never sent to a server); it is kept for this tab only.
  const fromHash = new URLSearchParams(location.hash.slice(1)).get('token');
  if (fromHash) {
    sessionStorage.setItem('hm-token', fromHash);
    history.replaceState(null, '', location.pathname + location.search);
  }
  const initial = new URLSearchParams(location.search);

  function node(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = text;
    if (cls) e.className = cls;
    return e;
  }
  const when = iso => iso ? new Date(iso).toLocaleString() : '';

  async function api(name, params = {}) {
    const query = new URLSearchParams(Object.assign({}, params, state.project ? {project: state.project} : {}));
    const headers = {};
    const token = sessionStorage.getItem('hm-token');
    if (token) headers.Authorization = 'Bearer ' + token;
    const base = location.pathname.replace(/\/$/, '');
    const answer = await fetch(`${base}/api/${name}?${query}`, {headers, cache: 'no-store'});
    if (answer.status === 401) {
      $('auth').hidden = false;
      document.querySelector('main').hidden = true;
      throw new Error('the bearer token is missing or wrong');
    }
    const body = await answer.json();
    if (!answer.ok) throw new Error(body.error || answer.statusText);
    return body;
  }
  function report(error) { $('status').textContent = error ? String(error.message || error) : ''; }

  function show(tab) {
    state.tab = tab;
    for (const b of document.querySelectorAll('nav button')) b.classList.toggle('active', b.dataset.tab === tab);
    for (const s of document.querySelectorAll('main > section')) s.classList.toggle('active', s.id === 'tab-' + tab);
    if (state.loaded[tab]) return Promise.resolve();
    state.loaded[tab] = true;
    return ({threads: loadThreads, notes: loadGraph, recent: loadRecent, search: async () => {}})[tab]().catch(report);
  }

  async function loadThreads() {
    const list = $('thread-list');
    list.textContent = '';
    await moreThreads(0);
  }

  async function moreThreads(offset) {
    const list = $('thread-list');
    const found = await api('threads', {limit: 200, offset});
    if (!found.threads.length && !offset) list.appendChild(node('div', 'No threads remembered in this project.', 'empty'));
    for (const t of found.threads) {
      const a = node('a', t.thread_id);
      a.href = '#'; a.dataset.thread = t.thread_id;
      a.appendChild(node('small', `${t.memories}`));
      a.addEventListener('click', ev => { ev.preventDefault(); openThread(t.thread_id).catch(report); });
      list.appendChild(a);
    }
    if (found.next_offset !== null) {
      const more = node('button', 'more threads…', 'more');
      more.addEventListener('click', () => { more.remove(); moreThreads(found.next_offset).catch(report); });
      list.appendChild(more);
    }
  }

  async function openThread(threadId, highlight) {
    show('threads');
    for (const a of document.querySelectorAll('#thread-list a')) a.classList.toggle('active', a.dataset.thread === threadId);
    const view = $('thread-view');
    view.textContent = '';
    const found = await api('thread', {id: threadId});
    view.appendChild(node('h2', `Thread ${found.thread_id}`));
    view.appendChild(node('p', `${found.messages.length} stored messages`, 'meta'));
    for (const m of found.messages) {
      const box = node('div', null, `msg ${m.role || ''}`);
      box.dataset.id = m.id;
      box.appendChild(node('span', `${m.role || ''} · ${when(m.created_at)}${m.chunk_index ? ' · part ' + (m.chunk_index + 1) : ''}`, 'meta'));
      box.appendChild(document.createTextNode(m.text));
      if (m.id === highlight) box.classList.add('hit');
      view.appendChild(box);
    }
    const hit = view.querySelector('.msg.hit');
    if (hit) hit.scrollIntoView({block: 'center'});
  }

  async function loadGraph() {
    const data = await api('graph');
    const panel = $('note-detail');
    const fresh = $('graph').cloneNode(false);  // no listeners of a graph drawn before
    $('graph').replaceWith(fresh);
    state.graph = HMGraph.create(fresh, data, {
      onSelect: note => HMGraph.detail(panel, note, id => state.graph.focus([id])),
    });
    HMGraph.detail(panel, null);
    if (!data.nodes.length) panel.textContent = 'No notes in this project yet.';
  }

  function item(memory) {
    const box = node('div', null, 'item');
    const meta = node('span', `${memory.kind}${memory.note_type ? ' · ' + memory.note_type : ''}` +
      `${memory.role ? ' · ' + memory.role : ''} · ${when(memory.created_at)}` +
      `${memory.source ? ' · from ' + memory.source : ''} · ${memory.id}`, 'meta');
    box.appendChild(meta);
    if (memory.thread_id) {
      const a = node('a', `thread ${memory.thread_id}`);
      a.href = '#';
      a.addEventListener('click', ev => { ev.preventDefault(); openThread(memory.thread_id, memory.id).catch(report); });
      meta.append(' · ', a);
    }
    box.appendChild(node('div', memory.text, 'text'));
    return box;
  }

  async function loadRecent() {
    const list = $('recent-list');
    list.textContent = '';
    const found = await api('recent', {limit: 50});
    list.appendChild(node('h2', 'Recent captures'));
    if (!found.memories.length) list.appendChild(node('div', 'Nothing remembered in this project yet.', 'empty'));
    for (const m of found.memories) list.appendChild(item(m));
  }

  const SHOWN = new Set(['id', 'kind', 'text', 'score', 'thread_id', 'role', 'note_type', 'created_at']);
  async function recall(query) {
    show('search');
    const pane = $('results');
    pane.textContent = '';
    pane.appendChild(node('p', `Recalling “${query}”…`, 'meta'));
    const found = await api('recall', {q: query, limit: 10});
    pane.textContent = '';
    pane.appendChild(node('h2', `${found.results.length} results for “${found.query}”`));
    for (const [channel, why] of Object.entries(found.skipped_channels || {}))
      pane.appendChild(node('p', `channel ${channel} skipped: ${why}`, 'meta'));
    found.results.forEach((hit, i) => {
      const box = item(hit);
      box.querySelector('.meta').prepend(`#${i + 1} · score ${hit.score.toFixed(3)} · `);
      const why = node('dl', null, 'explain');
      for (const [key, value] of Object.entries(hit)) {
        if (SHOWN.has(key) || value === null || (Array.isArray(value) && !value.length)) continue;
        why.appendChild(node('dt', key));
        why.appendChild(node('dd', typeof value === 'object' ? JSON.stringify(value) : String(value)));
      }
      box.appendChild(why);
      pane.appendChild(box);
    });
  }

  function reset() {
    state.loaded = {};
    state.graph = null;
    $('thread-view').textContent = '';
    $('results').textContent = '';
    show(state.tab);
  }

  async function start() {
    const found = await api('projects');
    const select = $('project');
    select.textContent = '';
    for (const p of found.projects) {
      const option = node('option', (found.labels || {})[p] || p);
      option.value = p;
      option.title = p;
      select.appendChild(option);
    }
    state.project = initial.get('project') || found.default;
    select.value = state.project;
    select.addEventListener('change', () => { state.project = select.value; reset(); });
    await show(state.tab);  // ready means the first tab's data is on the page
  }

  for (const b of document.querySelectorAll('nav button')) b.addEventListener('click', () => show(b.dataset.tab));
  $('q').addEventListener('keydown', ev => {
    if (ev.key === 'Enter' && ev.target.value.trim()) { report(null); recall(ev.target.value.trim()).catch(report); }
  });
  $('note-search').addEventListener('input', ev => { if (state.graph) state.graph.search(ev.target.value); });
  $('note-search').addEventListener('keydown', ev => {
    if (ev.key === 'Enter' && state.graph) state.graph.focus(state.graph.search(ev.target.value));
  });
  $('use-token').addEventListener('click', () => {
    sessionStorage.setItem('hm-token', $('token').value.trim());
    $('auth').hidden = true;
    document.querySelector('main').hidden = false;
    report(null);
    start().then(ready, report);
  });
  const ready = () => { document.body.dataset.ready = 'true'; };
  HMGraph.legend($('legend'));
  start().then(ready, report);
})();
