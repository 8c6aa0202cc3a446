// Flink Preflight's page: no framework and no network beyond preflightd's own API. The page state
// (URI or file name, per-vertex parallelism, Flink version, fail level, job jars) lives in the query string,
// so a link reproduces a check (a local file has to be chosen again: its name is in the link).
'use strict';

const INLINE_INSPECT_LIMIT = 8 << 20; // InspectCheckpoint with inline bytes; larger files skip it
const $ = (sel) => document.querySelector(sel);

const state = { uri: '', fileName: '', file: null, set: {}, flinkVersion: '', failOn: 'error', inspected: null, jobJars: [], report: null };

// Bounds of what the page draws, so that a checkpoint of 100,000 operators or 8,192 subtasks stays
// usable: the operators table and the plan form list MAX_ROWS rows (the plan's own keys always),
// the result MAX_CHARTS operators' charts with a picker for the others, each chart at most
// MAX_CHART_SUBTASKS subtasks. The server is asked only for the charted operators' subtask rows
// (chartSubtasks: at most 8 operators × 16 subtasks), never for every subtask.
const MAX_ROWS = 200;
const MAX_CHARTS = 8;
const MAX_CHART_SUBTASKS = 64;
const MAX_PICKS = 500;

function readURL() {
  const q = new URLSearchParams(location.search);
  state.uri = q.get('uri') || '';
  state.fileName = q.get('file') || '';
  state.flinkVersion = q.get('flinkVersion') || '';
  state.failOn = q.get('failOn') || 'error';
  state.jobJars = q.getAll('jobJar');
  state.set = {};
  for (const s of q.getAll('set')) {
    const i = s.lastIndexOf('=');
    if (i > 0) state.set[s.slice(0, i)] = s.slice(i + 1);
  }
}

function writeURL() {
  const q = new URLSearchParams();
  if (state.uri) q.set('uri', state.uri);
  else if (state.fileName) q.set('file', state.fileName);
  for (const [k, v] of Object.entries(state.set)) q.append('set', k + '=' + v);
  if (state.flinkVersion) q.set('flinkVersion', state.flinkVersion);
  if (state.failOn !== 'error') q.set('failOn', state.failOn);
  for (const j of state.jobJars) q.append('jobJar', j);
  history.replaceState(null, '', q.toString() ? '?' + q.toString() : location.pathname);
}

// el builds an element: el('p', {class: 'x'}, 'text', child...).
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v !== undefined && v !== null && v !== false) e.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children.flat()) {
    if (c !== undefined && c !== null && c !== false) e.append(c instanceof Node ? c : String(c));
  }
  return e;
}

function svgEl(tag, attrs, ...children) {
  const e = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  for (const c of children) e.append(c instanceof Node ? c : String(c));
  return e;
}

function fmtBytes(n) {
  n = Number(n || 0);
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return (i === 0 ? n : n.toFixed(1)) + ' ' + units[i];
}
const fmtNum = (n) => Number(n || 0).toLocaleString('en');
// plural counts with the right form: "1 element", "2 elements".
const plural = (n, word) => `${fmtNum(n)} ${word}${Number(n) === 1 ? '' : 's'}`;
// opName names an operator as the CLI does: position and name (or uid), or "operator #3" for a
// format 1-4 file that stores neither.
const opName = (op) => {
  const pos = op.position ? `#${op.position} ` : '';
  if (op.name || op.uid) return pos + (op.name || 'uid ' + op.uid);
  return op.position ? `operator #${op.position}` : 'operator ' + (op.shortId || String(op.operatorId || '').slice(0, 8));
};
const shortEnum = (v, prefix) => String(v || '').replace(prefix, '');

function showError(msg) {
  const e = $('#error');
  e.textContent = msg;
  e.hidden = !msg;
}

async function api(path, init) {
  const resp = await fetch(path, init);
  const text = await resp.text();
  let body;
  try { body = JSON.parse(text); } catch { body = { message: text }; }
  if (!resp.ok) throw new Error(`HTTP ${resp.status}: ${body.message || text}`);
  return body;
}

// ---- source ----

async function inspect() {
  let checkpoint;
  if (state.uri) {
    checkpoint = { uri: state.uri };
  } else if (state.file && state.file.size <= INLINE_INSPECT_LIMIT) {
    const buf = new Uint8Array(await state.file.arrayBuffer());
    let bin = '';
    for (let i = 0; i < buf.length; i += 0x8000) bin += String.fromCharCode.apply(null, buf.subarray(i, i + 0x8000));
    checkpoint = { metadata: btoa(bin) };
  } else {
    $('#operators').replaceChildren(el('p', { class: 'note' }, 'The file is large: operators are listed from the check below.'));
    $('#ops-section').hidden = false;
    return;
  }
  const r = await api('/v1/inspect', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ checkpoint }) });
  state.inspected = r.operators || [];
  renderOperators(r);
}

function renderOperators(r) {
  const c = r.checkpoint || {};
  const all = r.operators || [];
  const rows = all.slice(0, MAX_ROWS).map((op) => el('tr', {},
    el('td', {}, opName(op), op.uid && op.name && op.uid !== op.name ? el('div', { class: 'muted' }, 'uid ' + op.uid) : null),
    el('td', {}, el('code', {}, op.operatorId)),
    el('td', {}, String(op.parallelism), op.fullyFinished ? ' (finished)' : ''),
    el('td', {}, String(op.maxParallelism)),
    el('td', {}, (op.states || []).length ? (op.states || []).map((s) => el('div', {},
      el('code', {}, s.name), ` ${shortEnum(s.mode, '')}: ${plural(s.elements, 'element')}, ${fmtBytes(s.bytes)}`)) : '—'),
    el('td', {}, Number(op.keyedBytes) ? fmtBytes(op.keyedBytes) : '—'),
    el('td', {}, op.catalogEntry || '—')));
  $('#operators').replaceChildren(
    el('p', {}, `${c.snapshotKind || 'checkpoint'} ${c.checkpointId || ''}, format version ${c.formatVersion ?? '?'} (written by Flink ${c.writtenBy || '?'}), ${fmtBytes(c.sizeBytes)}, ${plural(c.operatorCount || 0, 'operator')}`),
    el('table', {},
      el('caption', { class: 'muted' }, 'Operators in the checkpoint, in file order'),
      el('thead', {}, el('tr', {}, ['Operator', 'ID', 'Parallelism', 'Max', 'Operator state', 'Keyed state', 'Looks like'].map((h) => el('th', { scope: 'col' }, h)))),
      el('tbody', {}, rows)),
    all.length > MAX_ROWS ? el('p', { class: 'muted', id: 'ops-more' }, `… and ${plural(all.length - MAX_ROWS, 'more operator')}: the API's JSON lists them all.`) : null);
  $('#ops-section').hidden = false;
}

// ---- plan ----

// names reports whether a plan key names the operator as the server resolves keys: its uid, its
// name, its ID, or a prefix of 8 or more hex digits of the ID (any case).
function names(key, op) {
  if (key === op.uid || key === op.name) return true;
  const k = key.toLowerCase(), id = (op.operatorId || '').toLowerCase();
  return /^[0-9a-f]+$/.test(k) && (k === id || (k.length >= 8 && id.startsWith(k)));
}

// vertexKey is the key the plan uses for a vertex: the URL's key when one names an operator of it
// (so the field shows the parallelism the link sets), else a uid or name people recognise, else
// its ID.
function vertexKey(ops) {
  for (const k of Object.keys(state.set)) if (ops.some((op) => names(k, op))) return k;
  for (const op of ops) if (op.uid) return op.uid;
  for (const op of ops) if (op.name) return op.name;
  return ops[0].vertexId;
}

// vertexOps groups operators by vertex: a check's operators carry their vertex; an inspection's
// (the plan form before any check succeeded) are each a vertex of their own, as the server
// treats operators the plan does not chain.
function vertexOps(operators) {
  const byVertex = new Map();
  for (const op of operators) {
    const o = op.vertexId ? op : { ...op, vertexId: op.operatorId, oldParallelism: op.parallelism };
    if (!byVertex.has(o.vertexId)) byVertex.set(o.vertexId, []);
    byVertex.get(o.vertexId).push(o);
  }
  return byVertex;
}

// renderPlanProblems flags the URL's keys that name no operator of the checkpoint, each with a
// button that drops it, so a bad link can be corrected in the form.
function renderPlanProblems(byVertex) {
  const all = [...byVertex.values()].flat();
  const bad = Object.keys(state.set).filter((k) => !all.some((op) => names(k, op)));
  const items = bad.map((k) => {
    const drop = el('button', { type: 'button', class: 'drop-key', 'data-key': k }, 'Remove');
    drop.addEventListener('click', () => { delete state.set[k]; writeURL(); renderVertices(all); check(); });
    return el('li', {}, el('code', {}, `set=${k}=${state.set[k]}`), ' names no operator of this checkpoint. ', drop);
  });
  $('#plan-problems').replaceChildren(...items);
  $('#plan-problems').hidden = !items.length;
}

function renderVertices(operators) {
  const byVertex = vertexOps(operators);
  const box = $('#vertices');
  const rows = [];
  let hidden = 0;
  for (const [vid, ops] of byVertex) {
    const key = vertexKey(ops);
    if (rows.length >= MAX_ROWS && !(key in state.set)) { hidden++; continue; }
    const id = 'par-' + vid;
    const names = ops.map(opName).join(' → ');
    const input = el('input', { type: 'number', id, min: '1', max: String(ops[0].maxParallelism || 32768),
      'data-key': key, value: state.set[key] ?? String(ops[0].oldParallelism) });
    input.addEventListener('change', () => {
      const v = input.value.trim();
      if (v === '' || v === String(ops[0].oldParallelism)) delete state.set[key];
      else state.set[key] = v;
      writeURL();
    });
    rows.push(el('div', { class: 'vertex' },
      el('label', { for: id }, names),
      input,
      el('span', { class: 'muted' }, `stored ${ops[0].oldParallelism}, max ${ops[0].maxParallelism}`)));
  }
  if (hidden) rows.push(el('p', { class: 'muted', id: 'vertices-more' }, `… and ${fmtNum(hidden)} more ${hidden === 1 ? 'vertex' : 'vertices'} at their stored parallelism: set them in the link (set=KEY=P, KEY a uid, name or ID).`));
  box.replaceChildren(...rows);
  renderPlanProblems(byVertex);
  $('#plan-section').hidden = false;
}

// ---- check ----

async function check() {
  showError('');
  const button = $('#check');
  button.disabled = true;
  $('#result').setAttribute('aria-busy', 'true');
  try {
    let r;
    if (state.uri) {
      const plan = { vertexParallelism: Object.fromEntries(Object.entries(state.set).map(([k, v]) => [k, Number(v)])) };
      r = await api('/v1/check', { method: 'POST', headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(uriRequest(detailRows() <= DETAIL_ROWS ? { includeSubtasks: true } : { chartSubtasks: true })) });
    } else if (state.file) {
      // The File streams from disk: the browser never holds a 168 MB checkpoint in memory.
      r = await api(uploadURL(detailRows() <= DETAIL_ROWS ? { includeSubtasks: 'true' } : { chartSubtasks: 'true' }), { method: 'POST', headers: { 'Content-Type': 'application/octet-stream' }, body: state.file });
    } else {
      return;
    }
    const report = r.report || {};
    if (!$('#vertices').children.length) renderVertices(report.operators || []);
    renderReport(report);
  } catch (e) {
    // A plan the server refuses (a bad key in the link) still gets its form, to correct it.
    if (!$('#vertices').children.length && state.inspected) renderVertices(state.inspected);
    showError(e.message);
  } finally {
    button.disabled = false;
    $('#result').removeAttribute('aria-busy');
  }
}

// DETAIL_ROWS bounds the rows (subtasks × state names) the page asks for with includeSubtasks,
// which the per-state charts draw. A check that may need more, or of a file not inspected yet,
// asks for chartSubtasks: the rows of the operators the findings name, at most 16 subtasks each,
// with per-subtask totals only.
const DETAIL_ROWS = 20000;

// detailRows bounds the rows includeSubtasks would answer for the current plan, from the last
// report or the inspection: every operator at its stored parallelism and at the plan's largest.
function detailRows() {
  const ops = (state.report && state.report.operators) || state.inspected;
  if (!ops) return Infinity;
  const most = Math.max(0, ...Object.values(state.set).map(Number).filter(Number.isFinite));
  let n = 0;
  for (const op of ops) {
    const old = Number(op.oldParallelism ?? op.parallelism ?? 0);
    n += (old + Math.max(old, most, Number(op.newParallelism || 0))) * Math.max(1, (op.states || []).length);
  }
  return n;
}

// uriRequest is the JSON body of a check of state.uri, with extra options.
function uriRequest(extra) {
  const plan = { vertexParallelism: Object.fromEntries(Object.entries(state.set).map(([k, v]) => [k, Number(v)])) };
  const options = { flinkVersion: state.flinkVersion, failLevel: 'SEVERITY_' + state.failOn.toUpperCase(), jobJarUris: state.jobJars, ...extra };
  return { checkpoint: { uri: state.uri }, plan, options };
}

// uploadURL is the upload route with the plan and options of the page, and extra parameters.
function uploadURL(extra) {
  const q = new URLSearchParams({ ...extra, name: state.file.name, failOn: state.failOn });
  for (const [k, v] of Object.entries(state.set)) q.append('set', k + '=' + v);
  if (state.flinkVersion) q.set('flinkVersion', state.flinkVersion);
  for (const j of state.jobJars) q.append('jobJarUri', j);
  return '/v1/check:upload?' + q;
}

// MAX_FINDINGS bounds the findings drawn, as the CLI's text report bounds them.
const MAX_FINDINGS = 50;

function renderReport(rep) {
  const verdict = shortEnum(rep.verdict, 'VERDICT_');
  const out = [el('p', {}, 'Verdict: ', el('span', { id: 'verdict', class: 'verdict ' + verdict }, verdict.replaceAll('_', ' ')))];

  const findings = rep.findings || [];
  out.push(el('h3', {}, `Findings (${findings.length})`));
  if (!findings.length) out.push(el('p', { class: 'muted' }, 'Nothing found.'));
  // As the CLI's text report: the most severe findings first, the rest counted (the JSON has all).
  for (const f of findings.slice(0, MAX_FINDINGS)) {
    const sev = shortEnum(f.severity, 'SEVERITY_');
    const states = (f.stateNames || []).length > 1 ? `${f.stateNames.length.toLocaleString('en-US')} states (${f.stateNames[0]}, …)`
      : f.stateName && `state ${f.stateName}`;
    const where = [f.operatorName || f.operatorUid || f.operatorId, states,
      (f.affectedSubtasks || []).length && `new subtasks ${ranges(f.affectedSubtasks)}`].filter(Boolean).join(', ');
    out.push(el('article', { class: 'finding ' + sev },
      el('p', {}, el('span', { class: 'sev' }, sev), ' ', el('code', {}, f.ruleId), ' ', f.title),
      where ? el('p', { class: 'muted' }, where) : null,
      el('p', {}, f.message),
      f.remediation ? el('p', {}, el('strong', {}, 'Fix: '), f.remediation) : null,
      (f.references || []).length ? el('p', { class: 'refs' }, 'References: ', ...(f.references.map((ref, i) =>
        [i ? ', ' : '', /^https?:\/\//.test(ref) ? el('a', { href: ref, rel: 'noreferrer' }, ref) : el('span', {}, ref)]))) : null));
  }
  if (findings.length > MAX_FINDINGS) {
    out.push(el('p', { class: 'muted' }, `… and ${(findings.length - MAX_FINDINGS).toLocaleString('en-US')} more findings: the API's JSON lists them all.`));
  }

  const safe = rep.safeParallelism || [];
  if (safe.length) {
    out.push(el('h3', {}, 'Nearest safe parallelism'));
    out.push(el('table', { id: 'safe' },
      el('thead', {}, el('tr', {}, ['Vertex', 'Requested', 'Below', 'Above'].map((h) => el('th', { scope: 'col' }, h)))),
      el('tbody', {}, safe.map((s) => el('tr', {}, el('td', {}, s.vertexName || s.vertexId), el('td', {}, String(s.requested)),
        el('td', {}, s.below ? String(s.below) : 'none'), el('td', {}, s.above ? String(s.above) : 'none'))))));
  }

  state.report = rep;
  out.push(el('h3', {}, 'State per subtask, before and after'));
  out.push(...chartSection(rep, findings));

  $('#result').replaceChildren(...out);
  $('#result-section').hidden = false;
}

// chartSection draws the charts of at most MAX_CHARTS operators (those the server sent subtask
// rows for: the operators the findings name first) and a picker for any other rescaled operator.
function chartSection(rep, findings) {
  // A finding standing for many operators names them all in operatorIds.
  const named = new Set(findings.filter((f) => f.operatorId).flatMap((f) => [f.operatorId, ...(f.operatorIds || [])]));
  const candidates = (rep.operators || []).filter((op) => named.has(op.operatorId) || op.oldParallelism !== op.newParallelism);
  if (!candidates.length) return [el('p', { class: 'muted' }, 'No operator is rescaled.')];
  const charted = candidates.filter((op) => (op.subtasks || []).length).slice(0, MAX_CHARTS);
  const out = [el('p', { class: 'legend' }, el('span', { class: 'swatch', style: 'background:var(--before)' }), 'before (old subtask)',
    el('span', { class: 'swatch', style: 'background:var(--after)' }), 'after (new subtask)')];
  if (candidates.some((op) => Math.max(op.oldParallelism, op.newParallelism) > 16)) {
    out.push(el('p', { class: 'note', id: 'charts-note' }, 'A chart shows at most 16 subtasks of an operator: the first and last four, ' +
      'and the four with the least and the most state (the bars are labelled with their subtask index). The JSON API ' +
      'gives every subtask with includeSubtasks.'));
  }
  if (candidates.length > charted.length) out.push(chartPicker(candidates, charted));
  out.push(el('div', { id: 'picked-chart' }), el('div', { id: 'charts' }, charted.map(operatorCharts)));
  return out;
}

// chartPicker is a select of the rescaled operators (the first MAX_PICKS): picking one draws its
// charts above the others.
function chartPicker(candidates, charted) {
  const shown = new Set(charted.map((op) => op.operatorId));
  const id = 'chart-pick';
  const sel = el('select', { id }, el('option', { value: '' }, '(choose)'),
    candidates.slice(0, MAX_PICKS).map((op, i) => el('option', { value: String(i) }, opName(op) + (shown.has(op.operatorId) ? ' (shown)' : '') +
      `: ${op.oldParallelism} → ${op.newParallelism}`)));
  sel.addEventListener('change', () => { if (sel.value !== '') pickChart(candidates[Number(sel.value)]); });
  const more = candidates.length > MAX_PICKS ? el('span', { class: 'muted' }, `(the first ${fmtNum(MAX_PICKS)} of ${fmtNum(candidates.length)})`) : null;
  const note = `${plural(candidates.length, 'operator')} rescaled or named by a finding; ${charted.length} charted below.`;
  return el('div', { class: 'row' }, el('label', { for: id }, 'Chart another operator'), sel, more,
    el('span', { class: 'muted' }, note));
}

// pickChart draws the charts of op: from the report's rows when it has them, else from a new
// check that keeps only op's rows (at most MAX_CHART_SUBTASKS of each side).
async function pickChart(op) {
  const box = $('#picked-chart');
  box.setAttribute('aria-busy', 'true');
  showError('');
  try {
    const rows = detailed(op, new Map((op.oldSubtasks || []).map((x) => [x.index || 0, x]))) ? op : await operatorRows(op);
    box.replaceChildren(operatorCharts({ ...op, subtasks: rows.subtasks, oldSubtasks: rows.oldSubtasks }));
  } catch (e) {
    // Without its per-state rows, the chart rows the report has (totals), if any.
    box.replaceChildren(...((op.subtasks || []).length ? [operatorCharts(op)] : []));
    showError(e.message);
  } finally {
    box.removeAttribute('aria-busy');
  }
}

// ROWS_UPLOAD_LIMIT bounds the subtask rows a re-upload may answer for the picked operator (a file
// has no streamed answer): above it, the picker needs the checkpoint's URI.
const ROWS_UPLOAD_LIMIT = 20000;

// operatorRows asks the server again for every subtask of op alone (subtask_operators) and keeps
// the first MAX_CHART_SUBTASKS of each side. A URI is checked through /v1/check:stream, read piece
// by piece, so the tab never holds the whole answer.
async function operatorRows(op) {
  const keep = { subtasks: [], oldSubtasks: [] };
  const take = (o) => {
    for (const f of ['subtasks', 'oldSubtasks']) {
      for (const row of o[f] || []) if (keep[f].length < MAX_CHART_SUBTASKS) keep[f].push(row);
    }
  };
  if (!state.uri) {
    const rows = (op.oldParallelism || 0) + (op.newParallelism || 0);
    if (rows > ROWS_UPLOAD_LIMIT) {
      throw new Error(`${opName(op)} has ${fmtNum(rows)} subtasks: to chart it, open the checkpoint by its URI (the page then reads its rows from a streamed answer).`);
    }
    const r = await api(uploadURL({ subtaskOperator: op.operatorId }), { method: 'POST', headers: { 'Content-Type': 'application/octet-stream' }, body: state.file });
    for (const o of (r.report || {}).operators || []) if (o.operatorId === op.operatorId) take(o);
    return keep;
  }
  // The operators come in report order: once op's rows are read and another operator's begin,
  // the rest of the answer is not read (the request is aborted).
  const abort = new AbortController();
  const resp = await fetch('/v1/check:stream', { method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(uriRequest({ subtaskOperators: [op.operatorId] })), signal: abort.signal });
  if (!resp.ok) throw new Error(`HTTP ${resp.status}: ${await resp.text()}`);
  let last = ''; // the operator the previous page ended with, which a continued page goes on with
  let seen = false;
  await eachLine(resp.body, (line) => {
    const msg = JSON.parse(line);
    if (msg.error) throw new Error(msg.error.message || JSON.stringify(msg.error));
    const page = ((msg.result || msg).piece || {}).operators;
    if (!page) return true;
    for (const [i, o] of (page.operators || []).entries()) {
      const id = i === 0 && page.continued ? last : o.operatorId;
      if (id === op.operatorId) { take(o); seen = true; } else if (seen) return false;
      last = id;
    }
    return true;
  });
  abort.abort();
  return keep;
}

// eachLine calls fn with every line of a streamed body, as it arrives, until fn returns false.
async function eachLine(body, fn) {
  const reader = body.getReader();
  const dec = new TextDecoder();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    buf += dec.decode(value || new Uint8Array(), { stream: !done });
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl).trim();
      buf = buf.slice(nl + 1);
      if (line && !fn(line)) { reader.cancel(); return; }
    }
    if (done) break;
  }
  if (buf.trim()) fn(buf.trim());
}

function ranges(idx) {
  const out = [];
  for (let i = 0; i < idx.length; i++) {
    let j = i;
    while (j + 1 < idx.length && idx[j + 1] === idx[j] + 1) j++;
    out.push(i === j ? String(idx[i]) : `${idx[i]}-${idx[j]}`);
    i = j;
  }
  return out.join(', ');
}

// detailed tells includeSubtasks rows, which carry each state's share and every old subtask, from
// chartSubtasks rows, which carry totals, and old subtasks only for a scale-down.
function detailed(op, oldSubs) {
  return (op.subtasks || []).some((x) => (x.states || []).length) || (!(op.states || []).length && oldSubs.size > 0);
}

// operatorCharts draws, per operator state, elements and bytes of every subtask index before and
// after. UNION fan-out shows as "after" bars that each reach the whole state.
function operatorCharts(op) {
  const label = opName(op) + (op.shortId ? ` (${op.shortId})` : '');
  const oldSubs = new Map((op.oldSubtasks || []).map((x) => [x.index || 0, x]));
  const newSubs = new Map((op.subtasks || []).map((x) => [x.index || 0, x]));
  // The subtask indexes the rows cover (all of them for a small operator; the server's chosen 16
  // otherwise), in order, at most MAX_CHART_SUBTASKS.
  const idx = [...new Set([...oldSubs.keys(), ...newSubs.keys()])].sort((a, b) => a - b).slice(0, MAX_CHART_SUBTASKS);
  const column = (subs, value) => idx.map((i) => (subs.has(i) ? value(subs.get(i)) : null));
  if (!detailed(op, oldSubs)) return totalsChart(op, newSubs, oldSubs);
  const series = [];
  (op.states || []).forEach((s, k) => {
    const pick = (subs, field) => column(subs, (sub) => {
      const sh = (sub.states || [])[k];
      return sh ? Number(sh[field] || 0) : 0;
    });
    const mode = s.mode;
    const note = mode === 'UNION' ? `UNION: every new subtask receives all ${plural(s.elements, 'element')}` :
      mode === 'BROADCAST' ? 'BROADCAST: every new subtask receives one copy' : `${mode}: the elements are split among the new subtasks`;
    series.push({ title: `${s.name}: elements`, note, before: pick(oldSubs, 'elements'), after: pick(newSubs, 'elements'), unit: fmtNum, state: s.name, measure: 'elements' });
    series.push({ title: `${s.name}: bytes`, note, before: pick(oldSubs, 'bytes'), after: pick(newSubs, 'bytes'), unit: fmtBytes, state: s.name, measure: 'bytes' });
  });
  const keyed = [...oldSubs.values()].some((o) => Number(o.keyedBytes || 0) > 0) ||
    [...newSubs.values()].some((x) => Number(x.keyedOwnedBytes || 0) > 0);
  if (keyed) {
    // Keyed state (most of a RocksDB job's state): each new subtask owns a range of key groups.
    series.push({ title: 'keyed state: bytes', note: 'the key groups each new subtask owns',
      before: column(oldSubs, (o) => Number(o.keyedBytes || 0)),
      after: column(newSubs, (x) => Number(x.keyedOwnedBytes || 0)),
      unit: fmtBytes, state: '', measure: 'keyed-bytes' });
  }
  if (!(op.states || []).length && !keyed) {
    series.push({ title: 'all state: bytes', note: 'operator, keyed and channel state',
      before: column(oldSubs, (o) => Number(o.bytes || 0)),
      after: column(newSubs, (x) => Number(x.stateBytes || 0) + Number(x.keyedOwnedBytes || 0)),
      unit: fmtBytes, state: '', measure: 'bytes' });
  }
  return chartBox(op, label, idx, series);
}

function chartBox(op, label, idx, series) {
  const all = Math.max(op.oldParallelism, op.newParallelism);
  const partial = idx.length < all ? ` (${fmtNum(idx.length)} of ${fmtNum(all)} subtask indexes shown)` : '';
  return el('section', { class: 'op-charts', 'data-operator': op.name || op.uid || op.operatorId },
    el('h4', {}, `${label}: parallelism ${op.oldParallelism} → ${op.newParallelism}${partial}`),
    el('div', { class: 'charts' }, series.map((s) => barChart(s, idx, op.oldParallelism, op.newParallelism, label))));
}

// totalsChart draws the chart rows of chartSubtasks, which carry per-subtask totals only: the
// bytes each new subtask receives against those at the same index before the restore (and the
// first and last four old subtasks a scale-down removes).
function totalsChart(op, newSubs, oldSubs) {
  const label = opName(op) + (op.shortId ? ` (${op.shortId})` : '');
  const removed = [...oldSubs.keys()].filter((i) => !newSubs.has(i)).sort((a, b) => a - b);
  const idx = [...newSubs.keys(), ...removed.slice(0, 4), ...removed.slice(Math.max(4, removed.length - 4))]
    .sort((a, b) => a - b).slice(0, MAX_CHART_SUBTASKS);
  const before = idx.map((i) => {
    if (newSubs.has(i)) { const b = Number(newSubs.get(i).bytesBefore ?? 0); return b < 0 ? null : b; }
    return Number(oldSubs.get(i).bytes || 0);
  });
  const after = idx.map((i) => (newSubs.has(i) ? Number(newSubs.get(i).stateBytes || 0) + Number(newSubs.get(i).keyedOwnedBytes || 0) : null));
  return chartBox(op, label, idx, [{ title: 'all state: bytes', note: 'operator and keyed state per subtask (totals: pick the operator above for its state names)',
    before, after, unit: fmtBytes, state: '', measure: 'bytes' }]);
}

// barChart draws one series over the subtask indexes idx (ascending, not necessarily contiguous).
function barChart(s, idx, oldP, newP, opLabel) {
  const n = idx.length;
  const max = Math.max(1, ...s.before.map((v) => v || 0), ...s.after.map((v) => v || 0));
  const slot = n > 64 ? 6 : n > 24 ? 12 : 26;
  const bw = Math.max(2, Math.floor((slot - 4) / 2));
  const left = 56, top = 10, h = 110, width = left + n * slot + 10, height = top + h + 34;
  const y = (v) => top + h - (v / max) * h;
  const anyState = [...s.before, ...s.after].some((v) => v > 0); // then a 0 after the restore stands out
  const desc = `${opLabel}, ${s.title}: ${oldP} subtasks before, ${newP} after; largest ${s.unit(max)}.`;
  const svg = svgEl('svg', { width, height, viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': desc,
    'data-state': s.state, 'data-measure': s.measure, 'data-subtasks-before': String(oldP), 'data-subtasks-after': String(newP), 'data-subtasks-shown': String(n) });
  svg.append(svgEl('line', { class: 'axis', x1: left, y1: top + h, x2: width - 5, y2: top + h }));
  svg.append(svgEl('line', { class: 'axis', x1: left, y1: top, x2: left, y2: top + h }));
  svg.append(svgEl('text', { x: left - 4, y: top + 9, 'text-anchor': 'end' }, s.unit(max)));
  svg.append(svgEl('text', { x: left - 4, y: top + h, 'text-anchor': 'end' }, '0'));
  for (let i = 0; i < n; i++) {
    const x = left + i * slot + 2;
    const b = s.before[i], a = s.after[i];
    if (b !== null) {
      svg.append(svgEl('rect', { class: 'before', x, y: y(b), width: bw, height: Math.max(b > 0 ? 1 : 0, top + h - y(b)) },
        svgEl('title', {}, `subtask ${idx[i]} before: ${s.unit(b)}`)));
    }
    if (a !== null) {
      svg.append(svgEl('rect', { class: 'after', x: x + bw, y: y(a), width: bw, height: Math.max(a > 0 ? 1 : 0, top + h - y(a)) },
        svgEl('title', {}, `subtask ${idx[i]} after: ${s.unit(a)}`)));
      if (a === 0 && anyState) svg.append(svgEl('text', { class: 'empty', x: x + bw + bw / 2, y: top + h - 3, 'text-anchor': 'middle' }, '0'));
    }
    if (slot >= 12 || i % 8 === 0) svg.append(svgEl('text', { x: x + bw, y: top + h + 13, 'text-anchor': 'middle' }, String(idx[i])));
  }
  svg.append(svgEl('text', { x: left + (n * slot) / 2, y: height - 4, 'text-anchor': 'middle' }, 'subtask index'));
  return el('figure', {}, svg, el('figcaption', {}, el('strong', {}, s.title), ' — ', s.note));
}

// ---- wiring ----

async function openSource() {
  showError('');
  $('#vertices').replaceChildren();
  $('#result-section').hidden = true;
  state.inspected = null;
  state.report = null;
  try {
    await inspect();
    await check();
  } catch (e) {
    showError(e.message);
  }
}

function init() {
  readURL();
  $('#uri').value = state.uri;
  $('#flinkVersion').value = state.flinkVersion;
  $('#failOn').value = state.failOn;
  $('#jobJars').value = state.jobJars.join(' ');
  if (state.fileName && !state.uri) {
    $('#source-note').textContent = `This link was made with the file "${state.fileName}": choose it again to check it.`;
  }
  $('#file').addEventListener('change', (ev) => {
    const f = ev.target.files[0];
    if (!f) return;
    state.file = f; state.fileName = f.name; state.uri = ''; $('#uri').value = '';
    $('#source-note').textContent = `${f.name}, ${fmtBytes(f.size)}`;
    writeURL();
    openSource();
  });
  $('#uri-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    state.uri = $('#uri').value.trim(); state.file = null; state.fileName = '';
    $('#source-note').textContent = '';
    writeURL();
    if (state.uri) openSource();
  });
  $('#flinkVersion').addEventListener('change', () => { state.flinkVersion = $('#flinkVersion').value.trim(); writeURL(); });
  $('#failOn').addEventListener('change', () => { state.failOn = $('#failOn').value; writeURL(); });
  const readJobJars = () => { state.jobJars = $('#jobJars').value.split(/\s+/).filter(Boolean); };
  $('#jobJars').addEventListener('change', () => { readJobJars(); writeURL(); });
  $('#plan-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    for (const input of document.querySelectorAll('#vertices input')) input.dispatchEvent(new Event('change'));
    state.flinkVersion = $('#flinkVersion').value.trim();
    state.failOn = $('#failOn').value;
    readJobJars();
    writeURL();
    check();
  });
  if (state.uri) openSource();
}

document.addEventListener('DOMContentLoaded', init);
