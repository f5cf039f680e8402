// The one-file page of `hybrid-memory graph --html`: the graph, a search box, the note panel.
'use strict';
(() => {
  const started = performance.now();
  const data = JSON.parse(document.getElementById('graph-data').textContent);
  const panel = document.getElementById('detail'), count = document.getElementById('count');
  HMGraph.legend(document.getElementById('legend'));
  const graph = HMGraph.create(document.getElementById('canvas'), data, {
    onSelect: note => HMGraph.detail(panel, note, id => graph.focus([id])),
  });
  HMGraph.detail(panel, null);
  const total = `${data.nodes.length} notes · ${data.links.length} links`;
  count.textContent = total;
  const search = document.getElementById('search');
  search.addEventListener('input', () => {
    const found = graph.search(search.value);
    count.textContent = search.value.trim() ? `${found.length} of ${data.nodes.length} notes match` : total;
  });
  search.addEventListener('keydown', ev => {
    if (ev.key === 'Enter') graph.focus(graph.search(search.value));
  });
  document.getElementById('fit').addEventListener('click', () => graph.fit());
  addEventListener('resize', () => graph.redraw());
  document.body.dataset.renderMs = String(Math.round(performance.now() - started));
  document.body.dataset.renderedAt = String(Math.round(performance.now()));
  document.body.dataset.layoutMs = String(Math.round(graph.layoutMs));
  document.body.dataset.rendered = String(graph.nodeCount);
})();
