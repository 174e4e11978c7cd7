/* skinner serve's single-page app: the runs list, a run page (one or several runs overlaid)
 * with live charts fed by Server-Sent Events, the config difference, and a sweep's front.
 * Talks only to the server it came from; nothing is fetched from elsewhere. */
'use strict';

const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2',
                '#17becf', '#7f7f7f', '#bcbd22'];
const CHARTS = [['mean_return', 'mean return'], ['policy_loss', 'policy loss'],
                ['value_loss', 'value loss'], ['entropy', 'entropy'], ['approx_kl', 'approx KL'],
                ['clip_fraction', 'clip fraction'], ['sps', 'steps/s']];
const MAX_POINTS = 2000; /* points drawn per run and chart: wider runs are thinned evenly */
const main = document.getElementById('main');
const banner = document.getElementById('banner');
let teardown = [];  /* what the current view must close when the route changes */

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === 'class') e.className = v; else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const kid of kids) if (kid != null) e.append(kid instanceof Node ? kid : String(kid));
  return e;
}
function showError(text) { banner.hidden = !text; banner.textContent = text || ''; }
function fmt(x, digits) {
  if (x == null || Number.isNaN(x)) return '–';
  if (Math.abs(x) >= 1e5 || (Math.abs(x) < 1e-3 && x !== 0)) return x.toExponential(2);
  return Number(x).toFixed(digits == null ? 2 : digits).replace(/\.?0+$/, '') || '0';
}
function fmtTime(s) {
  if (s == null) return '–';
  const h = Math.floor(s / 3600), m = Math.floor(s / 60) % 60, sec = Math.floor(s % 60);
  return `${h}:${String(m).padStart(2, '0')}:${String(sec).padStart(2, '0')}`;
}
async function getJSON(url) {
  const r = await fetch(url, {cache: 'no-store'});
  const body = await r.json().catch(() => ({error: `not JSON from ${url}`}));
  if (!r.ok || body.error) throw new Error(body.error || `${url}: HTTP ${r.status}`);
  return body;
}
async function getText(url) {
  const r = await fetch(url, {cache: 'no-store'});
  if (!r.ok) throw new Error(`${url}: HTTP ${r.status}`);
  return {text: await r.text(), next: Number(r.headers.get('X-Next-Offset') || 0),
          size: Number(r.headers.get('X-File-Size') || 0),
          skipped: Number(r.headers.get('X-Skipped-Bytes') || 0)};
}
const q = encodeURIComponent;
function statusBadge(s) { return el('span', {class: `status ${s}`}, s); }

/* ---------------------------------------------------------------- charts */

/* Every chart is a Chart.js 3 chart (Debian's libjs-chart.js, served from vendor/: docs/
 * dashboard.md says why) on a canvas of a fixed size in box, no animation.
 * series: [{label, color, width, radius, line}] (radius: points drawn, 0 for none; line:
 * false draws the points alone). Each series' data is an array of {x, y}, sorted by x, y null
 * for a gap. legend: an HTML legend under the chart naming the x axis (xLabel) and each
 * series. afterDraw(chart): drawn over the lines (the governor's events). */
const compact = new Intl.NumberFormat('en', {notation: 'compact', maximumFractionDigits: 2});
function lineChart(box, {width = 500, height = 220, series, logx = false, legend = false, xLabel = '', afterDraw}) {
  const canvas = el('canvas', {width, height});
  box.append(canvas);
  const xTicks = logx ? v => { /* labels at 1, 2 and 5 of each decade */
    const m = Math.round(v / 10 ** Math.floor(Math.log10(v)));
    return [1, 2, 5].includes(m) ? compact.format(v) : '';
  } : v => compact.format(v);
  const chart = new Chart(canvas, {
    type: 'line',
    data: {datasets: series.map(s => ({label: s.label, data: [], borderColor: s.color, backgroundColor: s.color,
      borderWidth: s.width ?? 1.5, pointRadius: s.radius ?? 0, showLine: s.line !== false, spanGaps: true}))},
    options: {animation: false, responsive: false, parsing: false,
      interaction: {mode: 'nearest', axis: 'x', intersect: false},
      plugins: {legend: {display: false}},
      scales: {x: {type: logx ? 'logarithmic' : 'linear', ticks: {callback: xTicks, maxRotation: 0}}}},
    plugins: afterDraw ? [{id: 'over', afterDatasetsDraw: afterDraw}] : []});
  if (legend)
    box.append(el('div', {class: 'legend chart-legend'}, el('span', {class: 'series'}, `x: ${xLabel}`),
      ...series.map(s => el('span', {class: 'series'}, el('span', {class: 'swatch', style: `background:${s.color}`}), s.label))));
  return {
    chart,
    setData(lists) { lists.forEach((points, k) => { chart.data.datasets[k].data = points; }); chart.update('none'); },
    redraw() { chart.draw(); },
    destroy() { chart.destroy(); },
  };
}

/* ---------------------------------------------------------------- runs list */

/* Run ids are "N/PATH", PATH under the server's N-th folder (api/runs' roots). What a reader
 * sees is PATH alone, or the folder's own name and PATH when the server serves several. */
let roots = null;
async function knowRoots() {
  if (!roots) roots = await getJSON('api/runs').then(d => d.roots).catch(() => null);
}
function runLabel(id) {
  const slash = id.indexOf('/');
  const index = slash < 0 ? id : id.slice(0, slash), path = slash < 0 ? '' : id.slice(slash + 1);
  const folder = roots && roots[Number(index)];
  const name = folder ? folder.replace(/\/+$/, '').split('/').pop() || '/' : index;
  if (!path) return name;
  return roots && roots.length > 1 ? `${name}/${path}` : path;
}

async function viewList() {
  const selected = new Set();
  const head = el('div', {class: 'controls'},
    el('button', {id: 'compare', onclick: () => {
      if (selected.size) location.hash = '#/run/' + [...selected].map(q).join(',');
    }}, 'Overlay selected'),
    el('span', {id: 'count'}));
  const table = el('table', {id: 'runs'});
  main.replaceChildren(el('h2', {}, 'Runs'), head, table);
  function runRow(run, label, cls) {
    const s = run.state, box = el('input', {type: 'checkbox', 'data-run': run.id});
    box.checked = selected.has(run.id);
    box.addEventListener('change', () => box.checked ? selected.add(run.id) : selected.delete(run.id));
    const steps = s.steps == null ? '–' : s.total_steps ? `${s.steps} / ${s.total_steps}` : s.steps;
    return el('tr', {'data-run': run.id, 'data-status': s.status, class: cls},
      el('td', {}, box), el('td', {}, el('a', {href: '#/run/' + q(run.id)}, label)),
      el('td', {}, s.env || '?'), el('td', {}, statusBadge(s.status)),
      el('td', {class: 'num'}, steps), el('td', {class: 'num'}, fmt(s.return)),
      el('td', {}, s.solved ? `yes, at ${s.solved_at}` : s.solved === false ? 'no' : '–'),
      el('td', {class: 'num'}, fmtTime(s.wall)));
  }
  async function refresh() {
    let data;
    try { data = await getJSON('api/runs'); showError(''); } catch (e) { showError(e.message); return; }
    roots = data.roots;
    document.getElementById('count').textContent =
      `${data.runs.length} run${data.runs.length === 1 ? '' : 's'}, ${data.sweeps.length} sweep${data.sweeps.length === 1 ? '' : 's'} under ${data.roots.join(', ')}`;
    const header = el('tr', {}, el('th', {}), el('th', {}, 'run'), el('th', {}, 'env'),
      el('th', {}, 'status'), el('th', {class: 'num'}, 'steps'), el('th', {class: 'num'}, 'return'),
      el('th', {}, 'solved'), el('th', {class: 'num'}, 'wall time'));
    /* a sweep's trials (its runs, DIR/trial-NNNN/seed-S) go under the sweep, not among the runs;
     * the innermost sweep holding a run takes it */
    const sweepOf = run => data.sweeps.filter(sw => run.id.startsWith(sw.id + '/'))
      .reduce((best, sw) => (!best || sw.id.length > best.id.length ? sw : best), null);
    const rows = [header];
    for (const run of data.runs) if (!sweepOf(run)) rows.push(runRow(run, runLabel(run.id)));
    for (const sw of data.sweeps) {
      const trials = data.runs.filter(run => sweepOf(run) === sw);
      rows.push(el('tr', {class: 'sweep', 'data-sweep': sw.id, 'data-trials': trials.length},
        el('th', {colspan: header.children.length}, 'sweep ',
          el('a', {href: '#/sweep/' + q(sw.id)}, runLabel(sw.id)),
          ` · ${trials.length} trial run${trials.length === 1 ? '' : 's'}`)));
      for (const run of trials) rows.push(runRow(run, run.id.slice(sw.id.length + 1), 'trial'));
    }
    table.replaceChildren(...rows);
  }
  await refresh();
  const timer = setInterval(refresh, 1000);
  teardown.push(() => clearInterval(timer));
}

/* ---------------------------------------------------------------- metrics */

/* One run's rows, parsed from metrics.csv as it grows. */
class RunData {
  constructor(id, name = 'metrics.csv') {
    this.id = id; this.name = name; this.columns = null; this.rows = {}; this.count = 0;
    this.offset = 0; this.bad = 0; this.skipped = 0; this.status = null;
  }
  reset() { this.columns = null; this.rows = {}; this.count = 0; this.offset = 0; }
  addLines(lines) {
    for (const line of lines) {
      if (!line) continue;
      const cells = line.split(',');
      if (!this.columns) {
        this.columns = cells;
        for (const c of cells) this.rows[c] = [];
        continue;
      }
      if (cells.length !== this.columns.length) { this.bad++; continue; }
      this.columns.forEach((c, k) => {
        const v = cells[k].trim() === '' ? NaN : Number(cells[k]); /* an empty cell is a gap, not 0 */
        this.rows[c].push(Number.isFinite(v) ? v : null);
      });
      this.count++;
    }
  }
  async load() { /* the rows already written, in chunks */
    for (;;) {
      const r = await getText(`api/file?run=${q(this.id)}&name=${this.name}&from=${this.offset}`);
      this.skipped += r.skipped;
      this.addLines(r.text.split('\n'));
      if (r.next <= this.offset) break;
      this.offset = r.next;
      if (this.offset >= r.size) break;
    }
  }
}

/* The charts of the columns the runs have: PPO's figures, then any other column (a KGE run's
 * loss, valid_mrr, valid_hits1, valid_hits10: skinner kge's metrics.csv) in file order. */
const X_COLUMNS = new Set(['update', 'steps', 'wall_seconds', 'epoch', 'episodes']);
const LABELS = {valid_mrr: 'valid MRR', valid_hits1: 'valid Hits@1', valid_hits10: 'valid Hits@10'};
function chartList(runs) {
  const have = new Set(runs.flatMap(r => r.columns || []));
  const known = new Set(CHARTS.map(c => c[0]));
  const list = CHARTS.filter(([key]) => have.has(key));
  for (const key of have)
    if (!known.has(key) && !X_COLUMNS.has(key) && !['mean_length', 'explained_variance', 'learning_rate'].includes(key))
      list.push([key, LABELS[key] || key.replace(/_/g, ' ')]);
  return list.length ? list : CHARTS;
}

function ema(values, alpha) {
  if (!alpha) return values;
  let acc = null;
  return values.map(v => (v == null ? acc : (acc = acc == null ? v : alpha * acc + (1 - alpha) * v)));
}

/* Each run's points of one chart, thinned to MAX_POINTS (the last row of each stride): one
 * array of {x, y} a run, each on its own x values (Chart.js needs no shared x axis). */
function runPoints(runs, xKey, yKey, alpha) {
  return runs.map(run => {
    const xs = run.rows[xKey] || [], ys = ema(run.rows[yKey] || [], alpha);
    const stride = Math.max(1, Math.ceil(xs.length / MAX_POINTS));
    const points = [];
    for (let k = 0; k < xs.length; k += stride) {
      const last = Math.min(k + stride, xs.length) - 1;
      if (xs[last] != null) points.push({x: xs[last], y: ys[last]});
    }
    return points;
  });
}

/* ---------------------------------------------------------------- run page */

async function viewRuns(ids) {
  const runs = ids.map(id => new RunData(id));
  const opts = {x: 'steps', alpha: 0, logx: false};
  const info = el('div', {class: 'runinfo', id: 'runinfo'});
  const xSel = el('select', {id: 'xaxis'}, el('option', {value: 'steps'}, 'steps'),
                  el('option', {value: 'wall_seconds'}, 'seconds'));
  const smooth = el('input', {id: 'smoothing', type: 'range', min: '0', max: '0.99', step: '0.01', value: '0'});
  const logx = el('input', {id: 'logx', type: 'checkbox'});
  const grid = el('div', {class: 'grid', id: 'charts'});
  const config = el('div', {id: 'config'});
  const events = el('div', {id: 'events'});
  main.replaceChildren(el('h2', {}, ids.length === 1 ? runLabel(ids[0]) : `${ids.length} runs overlaid`), info,
    el('div', {class: 'controls'}, el('label', {}, 'x: ', xSel),
      el('label', {}, 'smoothing ', smooth, el('span', {id: 'smoothv'}, '0')),
      el('label', {}, logx, ' log x')), grid, events, config);
  const charts = [];
  let governor = []; /* [{run, steps, seconds, text}] */

  function draw() {
    info.replaceChildren(...runs.map((run, k) => {
      const s = run.status || {};
      return el('span', {'data-run': run.id, 'data-rows': run.count},
        el('span', {class: 'swatch', style: `background:${COLORS[k % COLORS.length]}`}),
        `${runLabel(run.id)} `, statusBadge(s.status || '…'), ` ${s.env || ''} ${run.count} rows`,
        s.steps != null ? `, ${s.steps} steps` : '', run.bad ? ` (${run.bad} malformed rows skipped)` : '',
        run.skipped ? ` (a ${run.skipped}-byte line skipped)` : '', run.error ? el('span', {class: 'error'}, ` ${run.error}`) : '');
    }));
    for (const c of charts) {
      c.plot.setData(runPoints(runs, opts.x, c.key, opts.alpha));
      c.box.dataset.series = String(runs.length);
      c.box.dataset.points = runs.map(r => (r.rows[c.key] || []).length).join(',');
      if (runs.length === 1 && runs[0].count <= 1000) /* what is drawn, for tests to read back */
        c.box.dataset.values = (runs[0].rows[c.key] || []).map(v => (v == null ? '' : String(v))).join(',');
    }
  }
  function build() {
    for (const c of charts) c.plot.destroy();
    charts.length = 0;
    grid.replaceChildren();
    for (const [key, label] of chartList(runs)) {
      const box = el('div', {class: 'panel', 'data-chart': key}, el('h3', {}, label));
      grid.append(box);
      const series = runs.map((run, k) => ({label: runLabel(run.id), color: COLORS[k % COLORS.length]}));
      const plot = lineChart(box, {series, logx: opts.logx, legend: runs.length > 1,
                                   xLabel: opts.x === 'steps' ? 'steps' : 'seconds', afterDraw: drawEvents});
      charts.push({key, box, plot});
    }
    draw();
  }
  /* the governor's events as vertical dashed lines on every chart */
  function drawEvents(chart) {
    const ctx = chart.ctx, area = chart.chartArea;
    ctx.save();
    ctx.strokeStyle = '#c00'; ctx.setLineDash([4, 4]);
    for (const ev of governor) {
      const x = opts.x === 'steps' ? ev.steps : ev.seconds;
      if (x == null) continue;
      const px = chart.scales.x.getPixelForValue(x);
      if (!(px >= area.left && px <= area.right)) continue;
      ctx.beginPath(); ctx.moveTo(px, area.top); ctx.lineTo(px, area.bottom); ctx.stroke();
    }
    ctx.restore();
  }
  xSel.addEventListener('change', () => { opts.x = xSel.value; build(); });
  logx.addEventListener('change', () => { opts.logx = logx.checked; build(); });
  smooth.addEventListener('input', () => { opts.alpha = Number(smooth.value);
    document.getElementById('smoothv').textContent = smooth.value; draw(); });

  /* ask only for the files a run has: a run without metrics.csv (an eval-only folder) is no error */
  await Promise.all(runs.map(async run => {
    try {
      run.files = await getJSON(`api/files?run=${q(run.id)}`);
      if (run.files.includes('metrics.csv')) await run.load();
    } catch (e) { run.error = e.message; run.files = run.files || []; }
  }));
  if (!runs.some(r => (r.files || []).includes('metrics.csv'))) { /* e.g. an eval folder with traces */
    grid.style.display = 'none';
    xSel.closest('.controls').style.display = 'none';
  }
  build();
  let pending = false;
  const later = () => { if (!pending) { pending = true; setTimeout(() => { pending = false; draw(); }, 150); } };
  for (const run of runs) /* the stream sends it too; a folder without one still has a status */
    getJSON(`api/status?run=${q(run.id)}`).then(st => { if (!run.status) { run.status = st; later(); } }).catch(() => {});
  for (const run of runs.filter(r => ['metrics.csv', 'live.bin'].some(n => (r.files || []).includes(n)))) {
    const source = new EventSource(`api/stream?run=${q(run.id)}&from=${run.offset}`);
    source.onmessage = e => { run.addLines(e.data.split('\n')); later(); };
    source.addEventListener('status', e => { run.status = JSON.parse(e.data); later(); });
    source.addEventListener('reset', () => { run.reset(); later(); });
    source.addEventListener('failure', e => { run.error = e.data; later(); });
    teardown.push(() => source.close());
  }
  loadEvents(runs).then(list => { governor = list; showEvents(events, list); charts.forEach(c => c.plot.redraw()); });
  loadConfigs(runs, config);
  if (runs.length === 1) {
    const traces = el('div', {id: 'traces'}), proofs = el('div', {id: 'proofs'}), media = el('div', {id: 'videos'});
    grid.before(traces, proofs, media);
    loadTraces(runs[0], traces).catch(e => traces.append(el('p', {class: 'error'}, e.message)));
    loadProofs(runs[0], proofs).catch(e => proofs.append(el('p', {class: 'error'}, e.message)));
    loadMedia(runs[0], media);
    const players = el('div', {id: 'players', class: 'grid'});
    grid.before(players);
    loadPlayers(runs[0], players);
  }
}

/* ---------------------------------------------------------------- many agents */

/* A multi-agent run's roles.csv (each role's mean return by update), a self-play run's
 * elo.csv (the learner's and the pool's ratings by update) and opponents.csv (the learner's
 * mean score against each built-in player it met, by update; a gap where it met none), and
 * an off-policy run's learner.csv, as charts of several series, read again every 5 s while
 * the run page is open. */
const PLAYER_CHARTS = [
  {file: 'roles.csv', key: 'roles', label: 'mean return by role', x: 'steps', pick: c => c.startsWith('return_'),
   name: c => c.slice('return_'.length)},
  {file: 'elo.csv', key: 'elo', label: 'Elo rating', x: 'update', pick: c => c === 'learner' || c.startsWith('pool_'),
   name: c => c},
  {file: 'opponents.csv', key: 'opponents', label: 'score against built-in players', x: 'update',
   pick: c => c.endsWith(' score'), name: c => c.slice(0, -' score'.length)},
  /* an off-policy run's learner.csv: SAC's temperature or DQN's epsilon, and the mean Q of
   * the batches' actions (SAC's two critics, DQN's net), by steps */
  {file: 'learner.csv', key: 'exploration', label: 'exploration (SAC: temperature alpha; DQN: epsilon)',
   x: 'steps', pick: c => c === 'alpha' || c === 'epsilon', name: c => c},
  {file: 'learner.csv', key: 'q', label: "mean Q of the sampled batches' actions", x: 'steps',
   pick: c => c === 'q_value' || c === 'qf1_value' || c === 'qf2_value', name: c => c}];
function loadPlayers(run, box) {
  for (const spec of PLAYER_CHARTS.filter(p => (run.files || []).includes(p.file))) {
    const data = new RunData(run.id, spec.file);
    const panel = el('div', {class: 'panel', 'data-chart': spec.key}, el('h3', {}, spec.label));
    box.append(panel);
    let plot = null;
    const draw = () => {
      const columns = (data.columns || []).filter(spec.pick);
      if (!plot && columns.length) {
        const series = columns.map((c, k) =>
          ({label: spec.name(c), color: COLORS[k % COLORS.length], width: c === 'learner' ? 2.5 : 1.2}));
        plot = lineChart(panel, {series, legend: true, xLabel: spec.x});
      }
      if (!plot) return;
      const xs = data.rows[spec.x] || [];
      plot.setData(columns.map(c => xs.map((x, k) => ({x, y: (data.rows[c] || [])[k] ?? null}))));
      panel.dataset.series = columns.map(spec.name).join(',');
      panel.dataset.points = String(data.count);
      if (data.count <= 1000) /* what is drawn, for tests to read back */
        panel.dataset.values = columns.map(c => (data.rows[c] || []).map(v => (v == null ? '' : String(v))).join(' ')).join(';');
    };
    const refresh = () => data.load().then(draw).catch(e => { panel.dataset.error = e.message; });
    refresh();
    const timer = setInterval(refresh, 5000);
    teardown.push(() => { clearInterval(timer); if (plot) plot.destroy(); });
  }
}

/* ---------------------------------------------------------------- Morpho traces */

/* Morpho-v0's lifecycle (modules/morpho/lifecycle.h) replayed from a trace's actions: head 0 is
 * the op, head 1 the slot. A trace records what the policy chose (within the env's masks), not
 * each slot's stage, so the stages here follow the documented transitions: GERMINATE gives one
 * GERMINATED epoch then TRAINING, ADVANCE goes TRAINING -> BLENDING -> HOLDING, FOSSILIZE keeps
 * the seed, PRUNE gives PRUNED, 5 EMBARGOED epochs, 1 RESETTING, then DORMANT. */
const STAGE_COLORS = {DORMANT: '#f0f0f0', GERMINATED: '#c6dbef', TRAINING: '#6baed6', BLENDING: '#fd8d3c',
                      HOLDING: '#fdd0a2', FOSSILIZED: '#31a354', PRUNED: '#de2d26', EMBARGOED: '#fcbba1',
                      RESETTING: '#fee0d2'};
function morphoTimeline(steps, slots) {
  const stage = new Array(slots).fill('DORMANT'), wait = new Array(slots).fill(0);
  const rows = Array.from({length: slots}, () => []);
  for (const step of steps) {
    for (let k = 0; k < slots; k++) { /* timed transitions happen as the epoch begins */
      if (stage[k] === 'GERMINATED') stage[k] = 'TRAINING';
      else if (stage[k] === 'PRUNED') { stage[k] = 'EMBARGOED'; wait[k] = 5; }
      else if (stage[k] === 'EMBARGOED' && --wait[k] === 0) stage[k] = 'RESETTING';
      else if (stage[k] === 'RESETTING') stage[k] = 'DORMANT';
    }
    const slot = step.action[1];
    if (slot >= 0 && slot < slots) {
      const s = stage[slot];
      if (step.op === 'GERMINATE' && s === 'DORMANT') stage[slot] = 'GERMINATED';
      else if (step.op === 'ADVANCE' && s === 'TRAINING') stage[slot] = 'BLENDING';
      else if (step.op === 'ADVANCE' && s === 'BLENDING') stage[slot] = 'HOLDING';
      else if (step.op === 'FOSSILIZE' && s === 'HOLDING') stage[slot] = 'FOSSILIZED';
      else if (step.op === 'PRUNE' && ['GERMINATED', 'TRAINING', 'BLENDING', 'HOLDING'].includes(s)) stage[slot] = 'PRUNED';
    }
    stage.forEach((s, k) => rows[k].push(s));
  }
  return rows;
}

async function loadTraces(run, box) {
  for (const name of (run.files || []).filter(n => n.endsWith('.jsonl') && n !== 'events.jsonl' && !isProofs(n))) {
    const r = await getText(`api/file?run=${q(run.id)}&name=${q(name)}`);
    const steps = [], ends = [];
    for (const line of r.text.split('\n')) {
      let j; try { j = JSON.parse(line); } catch { continue; }
      if (j.env !== 0 || j.episode !== 0) continue;
      if (j.end) ends.push(j); else if (typeof j.op === 'string' && Array.isArray(j.action)) steps.push(j);
    }
    if (!steps.length || !steps.some(s => s.action.length === 8)) continue; /* not a Morpho trace */
    const slots = 3, rows = morphoTimeline(steps, slots);
    const table = el('table', {class: 'timeline', 'data-trace': name, 'data-slots': slots, 'data-epochs': steps.length});
    table.append(el('tr', {}, el('th', {}, 'slot'), ...steps.map((s, k) => el('th', {title: s.op}, k % 10 ? '' : k))));
    rows.forEach((row, k) => table.append(el('tr', {'data-slot': k, 'data-stages': row.join(',')}, el('th', {}, k),
      ...row.map((s, e) => el('td', {title: `epoch ${e}: ${s} (${steps[e].op})`, style: `background:${STAGE_COLORS[s]}`})))));
    const end = ends[0] || {};
    box.append(el('h3', {}, `Morpho seed lifecycle, episode 0 of ${name}`),
      el('p', {}, `host test accuracy at the end ${fmt(end.test_acc, 4)}, extra parameters ${fmt(end.extra_params, 0)}, `,
        `fossils ${fmt(end.fossils, 0)}, return ${fmt(end.return)}`),
      el('div', {class: 'legend'}, ...Object.entries(STAGE_COLORS).map(([s, c]) =>
        el('span', {}, el('span', {class: 'swatch', style: `background:${c}`}), s, ' '))),
      el('div', {style: 'overflow-x:auto'}, table));
  }
}

/* ---------------------------------------------------------------- Prover proofs */

/* A proofs file of `skinner eval Prover-v0 ... --proofs FILE` (modules/prover/proofs.h): one
 * query a line, each step the state's goals, the successors resolution gave it (each with the
 * fact or rule it came from) and the one the policy took. Drawn as a tree: nodes are goal lists,
 * an edge is the fact or rule applied; the path taken is solid and goes on, the successors not
 * taken are grey leaves, and a failed or truncated proof's path is red and dashed. */
const isProofs = name => /^proofs[A-Za-z0-9_.-]*\.jsonl$/.test(name);
const MAX_TREES = 6;      /* proofs drawn; the others are listed */
const MAX_LABEL = 64;     /* characters of a node's goals shown (all of them in its tooltip) */

function proofTree(proof) {
  const root = {goals: proof.steps.length ? proof.steps[0].goals : [proof.query], kids: [], kind: 'path'};
  let at = root;
  proof.steps.forEach((step, k) => {
    let next = null;
    for (const succ of step.successors) {
      const terminal = succ.goals.length === 1 && ['True', 'False', 'End'].includes(succ.goals[0]);
      const taken = succ.index === step.chosen;
      const kind = !taken ? 'other' : terminal ? (succ.goals[0] === 'True' ? 'proved' : 'failed') :
        k === proof.steps.length - 1 ? 'truncated' : 'path';
      const node = {goals: succ.goals, by: succ.by, kids: [], kind};
      at.kids.push(node);
      if (taken) next = node;
    }
    if (step.more) at.kids.push({goals: [`${step.more} more`], kids: [], kind: 'other', by: ''});
    at = next || at;
  });
  return root;
}

const SVG_NS = 'http://www.w3.org/2000/svg';
function svg(tag, attrs, text) {
  const e = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text != null) e.textContent = text;
  return e;
}

/* An indented tree, one node a row: depth to the right, a parent's children below it, the
 * edge an elbow from parent to child labelled with the fact or rule. */
function drawProof(proof) {
  const rows = [], ROW = 34, INDENT = 28, failed = proof.outcome !== 'proved';
  (function place(node, depth) {
    node.row = rows.length; node.depth = depth; rows.push(node);
    for (const kid of node.kids) place(kid, depth + 1);
  })(proofTree(proof), 0);
  const width = Math.max(480, ...rows.map(n => n.depth * INDENT + 40 + 7 * Math.min(MAX_LABEL, n.goals.join(', ').length)));
  const tree = svg('svg', {class: 'proof', width, height: rows.length * ROW + 8, 'data-query': proof.query,
                           'data-outcome': proof.outcome, 'data-nodes': rows.length});
  const x = n => 12 + n.depth * INDENT, y = n => 14 + n.row * ROW;
  for (const node of rows)
    for (const kid of node.kids) {
      const onPath = kid.kind !== 'other';
      tree.append(svg('path', {d: `M${x(node)},${y(node) + 6} V${y(kid)} H${x(kid) - 6}`,
        class: `edge ${onPath ? (failed ? 'failed' : 'taken') : 'other'}`}));
    }
  const MARK = {path: '#1f77b4', proved: '#2ca02c', failed: '#d62728', truncated: '#ff7f0e', other: '#bbb'};
  for (const node of rows) {
    const text = node.goals.join(', ');
    const g = svg('g', {class: `node ${node.kind}`, 'data-goals': text});
    g.append(svg('title', {}, `${text}${node.by ? `\nfrom the first goal by ${node.by}` : ''}`),
      svg('circle', {cx: x(node), cy: y(node), r: 5, fill: MARK[node.kind]}),
      svg('text', {x: x(node) + 10, y: y(node) + 4, class: 'goals'},
          text.length > MAX_LABEL ? text.slice(0, MAX_LABEL - 1) + '…' : text));
    if (node.by) g.append(svg('text', {x: x(node) + 10, y: y(node) + 17, class: 'by'}, node.by));
    tree.append(g);
  }
  return tree;
}

async function loadProofs(run, box) {
  for (const name of (run.files || []).filter(isProofs)) {
    const r = await getText(`api/file?run=${q(run.id)}&name=${q(name)}`);
    const proofs = [];
    for (const line of r.text.split('\n')) {
      let j; try { j = JSON.parse(line); } catch { continue; }
      if (typeof j.query === 'string' && Array.isArray(j.steps)) proofs.push(j);
    }
    if (!proofs.length) continue;
    const proved = proofs.filter(p => p.outcome === 'proved').length;
    box.append(el('h3', {}, `Proofs in ${name}: ${proved} of ${proofs.length} queries proved`),
      el('div', {class: 'legend'}, ...[['#1f77b4', 'goals on the path taken'], ['#2ca02c', 'proved (True)'],
        ['#d62728', 'failed (False; the path dashed)'], ['#ff7f0e', 'truncated'], ['#bbb', 'a successor not taken']]
        .map(([c, t]) => el('span', {}, el('span', {class: 'swatch', style: `background:${c}`}), t, ' '))));
    proofs.forEach((proof, k) => {
      const head = el('summary', {}, `${proof.query} `, el('span', {class: `status ${proof.outcome === 'proved' ? 'finished' : 'failed'}`}, proof.outcome),
        ` ${proof.steps.length} step${proof.steps.length === 1 ? '' : 's'}, log p ${fmt(proof.logp, 3)}`);
      const details = el('details', {class: 'proof-box', 'data-query': proof.query}, head);
      if (k < MAX_TREES) { details.open = true; details.append(el('div', {style: 'overflow-x:auto'}, drawProof(proof))); }
      else details.addEventListener('toggle', () => { if (details.open && details.children.length === 1)
        details.append(el('div', {style: 'overflow-x:auto'}, drawProof(proof))); });
      box.append(details);
    });
  }
}

/* ---------------------------------------------------------------- videos */

/* The run's recordings (skinner eval ... --video RUN/videos/NAME.gif|.mp4): a GIF as an image,
 * the others as a video; /api/media serves them whole. */
function loadMedia(run, box) {
  const names = (run.files || []).filter(n => /\.(gif|mp4|webm|mkv)$/.test(n));
  if (!names.length) return;
  box.append(el('h3', {}, `Episodes recorded (${names.length})`));
  for (const name of names) {
    const src = `api/media?run=${q(run.id)}&name=${q(name)}`;
    const view = name.endsWith('.gif') ? el('img', {src, alt: name, class: 'frames'})
                                       : el('video', {src, controls: '', loop: '', muted: '', class: 'frames'});
    box.append(el('figure', {'data-video': name}, view, el('figcaption', {}, name)));
  }
}

async function loadEvents(runs) {
  const out = [];
  for (const run of runs.filter(r => (r.files || []).includes('events.jsonl'))) {
    try {
      const r = await getText(`api/file?run=${q(run.id)}&name=events.jsonl`);
      for (const line of r.text.split('\n')) {
        let ev; try { ev = JSON.parse(line); } catch { continue; }
        if (!/anomal|restor|governor|rollback/.test(ev.type || '')) continue;
        out.push({run: run.id, steps: ev.steps, seconds: ev.t, text: `${ev.type}: ${ev.reason || ev.message || ''}`});
      }
    } catch { /* a run without events.jsonl */ }
  }
  return out;
}
function showEvents(box, list) {
  box.replaceChildren(...(list.length ? [el('h3', {}, 'Governor events'),
    el('ul', {}, ...list.map(ev => el('li', {}, `${runLabel(ev.run)} at ${ev.steps} steps: ${ev.text}`)))] : []));
}

function parseIni(text) {
  const out = {}; let section = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#') || line.startsWith(';')) continue;
    const m = line.match(/^\[(.*)\]$/);
    if (m) { section = m[1]; continue; }
    const eq = line.indexOf('=');
    if (eq > 0) out[`${section}.${line.slice(0, eq).trim()}`] = line.slice(eq + 1).trim();
  }
  return out;
}

async function loadConfigs(runs, box) {
  const texts = await Promise.all(runs.map(run => !(run.files || []).includes('config.ini') ? '' :
    getText(`api/file?run=${q(run.id)}&name=config.ini`).then(r => r.text).catch(() => '')));
  if (runs.length === 1) {
    box.replaceChildren(el('h3', {}, 'config.ini'), el('pre', {}, texts[0] || '(no config.ini)'));
    return;
  }
  const configs = texts.map(parseIni);
  const keys = [...new Set(configs.flatMap(c => Object.keys(c)))].sort();
  const differ = keys.filter(k => new Set(configs.map(c => c[k])).size > 1);
  const rows = [el('tr', {}, el('th', {}, 'key'), ...runs.map(r => el('th', {}, runLabel(r.id))))];
  for (const k of differ)
    rows.push(el('tr', {'data-key': k}, el('td', {}, k), ...configs.map(c => el('td', {class: 'changed'}, c[k] ?? '(unset)'))));
  box.replaceChildren(el('h3', {}, `Config difference (${differ.length} of ${keys.length} keys differ)`),
    el('table', {class: 'diff', id: 'config-diff'}, ...rows));
}

/* ---------------------------------------------------------------- sweep page */

async function viewSweep(id) {
  main.replaceChildren(el('h2', {}, `sweep ${runLabel(id)}`));
  const [ini, jsonl] = await Promise.all([
    getText(`api/file?run=${q(id)}&name=sweep.ini`).then(r => r.text).catch(() => ''),
    getText(`api/file?run=${q(id)}&name=sweep.jsonl`).then(r => r.text).catch(() => '')]);
  const config = parseIni(ini);
  const goal = Object.entries(config).find(([k]) => k.endsWith('.goal'))?.[1] || 'max';
  const trials = [];
  for (const line of jsonl.split('\n')) { try { trials.push(JSON.parse(line)); } catch { /* a cut line */ } }
  const ok = trials.filter(t => t.status === 'ok' && Number.isFinite(t.metric) && Number.isFinite(t.cost));
  const better = (a, b) => (goal === 'min' ? a <= b : a >= b);
  const front = ok.filter(t => !ok.some(o => o !== t && o.cost <= t.cost && better(o.metric, t.metric) &&
                                            (o.cost < t.cost || o.metric !== t.metric)))
                  .sort((a, b) => a.cost - b.cost);
  const box = el('div', {class: 'panel', id: 'sweep-chart', 'data-trials': ok.length, 'data-front': front.length},
                 el('h3', {}, `score (${goal}) against cost: ${ok.length} trials, ${front.length} on the front`));
  const params = [...new Set(trials.flatMap(t => Object.keys(t.params || {})))];
  const rows = [el('tr', {}, el('th', {}, 'trial'), el('th', {}, 'status'), ...params.map(p => el('th', {}, p)),
                            el('th', {class: 'num'}, 'metric'), el('th', {class: 'num'}, 'cost'), el('th', {}, 'front'))];
  /* a trial's seeds are runs under DIR/trial-NNNN/: its link overlays them */
  const listed = await getJSON('api/runs').then(d => d.runs.map(r => r.id)).catch(() => []);
  const trialLink = t => {
    const prefix = `${id}/trial-${String(t.trial).padStart(4, '0')}`;
    const seeds = listed.filter(r => r === prefix || r.startsWith(prefix + '/'));
    return seeds.length ? el('a', {href: '#/run/' + seeds.map(q).join(',')}, t.trial) : String(t.trial);
  };
  for (const t of trials.sort((a, b) => a.trial - b.trial))
    rows.push(el('tr', {}, el('td', {}, trialLink(t)),
      el('td', {}, t.status), ...params.map(p => el('td', {}, fmt((t.params || {})[p], 6))),
      el('td', {class: 'num'}, fmt(t.metric)), el('td', {class: 'num'}, fmt(t.cost, 0)),
      el('td', {}, front.includes(t) ? '●' : '')));
  main.append(box, el('h3', {}, 'Trials'), el('table', {id: 'trials'}, ...rows));
  /* each parameter's effect: the score of every finished trial against that parameter's value */
  const effects = el('div', {class: 'grid', id: 'effects'});
  main.append(el('h3', {}, "Each parameter's effect"), effects);
  for (const p of params) {
    const pts = ok.filter(t => Number.isFinite((t.params || {})[p])).sort((a, b) => a.params[p] - b.params[p]);
    const box = el('div', {class: 'panel', 'data-param': p, 'data-points': pts.length}, el('h3', {}, p));
    effects.append(box);
    const values = pts.map(t => t.params[p]);
    const log = values.length > 1 && values[0] > 0 && values[values.length - 1] / values[0] >= 100;
    lineChart(box, {width: 420, height: 200, logx: log,
      series: [{label: 'score', color: '#1f77b4', radius: 3.5, line: false}]})
      .setData([pts.map(t => ({x: t.params[p], y: t.metric}))]);
  }
  const lowest = new Map(); /* trials of equal cost share one point, the lower score's */
  for (const t of ok) {
    const seen = lowest.get(t.cost);
    lowest.set(t.cost, seen == null ? t.metric : (better(t.metric, seen) ? seen : t.metric));
  }
  lineChart(box, {width: 700, height: 320, legend: true, xLabel: 'cost',
    series: [{label: 'trials', color: '#999', radius: 3.5, line: false},
             {label: 'front', color: '#d62728', width: 2, radius: 4.5}]})
    .setData([[...lowest].sort((a, b) => a[0] - b[0]).map(([x, y]) => ({x, y})),
              front.map(t => ({x: t.cost, y: t.metric}))]);
}

/* ---------------------------------------------------------------- routing */

async function route() {
  for (const f of teardown.splice(0)) f();
  showError('');
  const hash = location.hash.replace(/^#\/?/, '');
  const [kind, ...rest] = hash.split('/');
  const arg = decodeURIComponent(rest.join('/'));
  try {
    await knowRoots();
    const named = kind === 'run' || kind === 'sweep' ? rest.join('/').split(',').map(a => runLabel(decodeURIComponent(a))).join(', ') : arg;
    document.getElementById('crumbs').textContent = kind ? `/ ${kind} ${named}` : '';
    if (kind === 'run') await viewRuns(rest.join('/').split(',').map(decodeURIComponent));
    else if (kind === 'sweep') await viewSweep(arg);
    else await viewList();
  } catch (e) { showError(e.message); }
}
window.addEventListener('hashchange', route);
setInterval(() => { document.getElementById('clock').textContent = new Date().toLocaleTimeString(); }, 1000);
route();
