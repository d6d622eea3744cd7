// The live page: counters and charts polled once a second, decisions pushed by Server-Sent Events,
// the dead-letter queue with a replay button. Message data reaches the page only through
// textContent and setAttribute, never as HTML.
'use strict';

const $ = (id) => document.getElementById(id);
const OUTCOMES = ['PROCESSED', 'DUPLICATE', 'BUSY', 'FAILED', 'RETRY', 'CONFLICT', 'REJECTED'];
const COLORS = {PROCESSED: '#1a9850', DUPLICATE: '#4575b4', BUSY: '#f59e0b', FAILED: '#d73027',
  RETRY: '#984ea3', CONFLICT: '#a6761d', REJECTED: '#444'};
const WINDOW_SECONDS = 300;
const ROWS = 100;

function cell(text, className) {
  const td = document.createElement('td');
  td.textContent = text;
  if (className) { td.className = className; }
  return td;
}

function say(text, error) {
  $('message').textContent = text;
  $('message').className = error ? 'error' : '';
}

function clock(millis) {
  const d = new Date(millis);
  return d.toLocaleTimeString([], {hour12: false}) + '.' + String(d.getMilliseconds()).padStart(3, '0');
}

// --- Counters, stock and charts: polled ------------------------------------------------------------

const seconds = [];   // {t, outcomes, callMicros, guardMicros}, oldest first, the last five minutes

function legend(container, entries) {
  container.replaceChildren(...entries.map(({name, color, dashed, value, id}) => {
    const item = document.createElement('span');
    item.className = 'legend-item';
    const swatch = document.createElement('span');
    swatch.className = 'swatch' + (dashed ? ' dashed' : '');
    swatch.style.borderColor = color;
    const v = document.createElement('strong');
    v.textContent = value;
    if (id) { v.id = id; }
    item.append(swatch, ' ' + name + ' ', v);
    return item;
  }));
}

function drawCharts() {
  const now = Math.floor(Date.now() / 1000);
  while (seconds.length && seconds[0].t <= now - WINDOW_SECONDS) { seconds.shift(); }
  const times = seconds.map((s) => s.t);

  drawChart($('outcomes-chart'), times,
    OUTCOMES.map((o) => ({name: o, color: COLORS[o], values: seconds.map((s) => s.outcomes[o])})),
    now, WINDOW_SECONDS, 'linear');
  legend($('outcomes-legend'), OUTCOMES.map((o) => ({name: o, color: COLORS[o], id: 'total-' + o,
    value: String(seconds.reduce((sum, s) => sum + s.outcomes[o], 0))})));

  const latency = [
    {name: 'call p50', color: '#1f77b4', values: seconds.map((s) => s.callMicros[0])},
    {name: 'call p99', color: '#1f77b4', dashed: true, values: seconds.map((s) => s.callMicros[1])},
    {name: 'guard p50', color: '#e4572e', values: seconds.map((s) => s.guardMicros[0])},
    {name: 'guard p99', color: '#e4572e', dashed: true, values: seconds.map((s) => s.guardMicros[1])},
  ];
  drawChart($('latency-chart'), times, latency, now, WINDOW_SECONDS, 'log');
  legend($('latency-legend'), latency.map((l) => {
    const last = [...l.values].reverse().find((v) => v !== null);
    return {name: l.name, color: l.color, dashed: l.dashed, value: last === undefined ? '–' : microsLabel(last)};
  }));
}

async function refresh() {
  try {
    const since = seconds.length ? seconds[seconds.length - 1].t : 0;
    const [stats, timeline] = await Promise.all([
      fetch('api/stats').then((r) => r.json()),
      fetch('api/live/timeline?since=' + since).then((r) => r.json())]);
    for (const [k, v] of Object.entries(stats)) {
      if ($(k) && typeof v !== 'object') { $(k).textContent = v; }
    }
    showOutage(stats.claimStoreOutageSeconds);
    // Two refreshes can overlap (a button refreshes at once): keep each second once.
    const newest = seconds.length ? seconds[seconds.length - 1].t : 0;
    seconds.push(...timeline.seconds.filter((s) => s.t > newest));
    drawCharts();
    const sku = $('sku').value;
    const stock = await (await fetch('api/stock/' + encodeURIComponent(sku))).json();
    $('stock-sku').textContent = sku;
    $('stock').textContent = stock.known ? stock.quantity : 'not stocked yet';
    await refreshDeadLetters();
  } catch (e) {
    say('Server unreachable: ' + e, true);
  }
}

// --- Decisions: pushed -----------------------------------------------------------------------------

let lastSeq = 0;

function decisionRow(d) {
  const tr = document.createElement('tr');
  tr.dataset.seq = String(d.seq);
  tr.dataset.outcome = d.outcome;
  tr.dataset.digest = d.keyDigest;
  tr.append(cell(clock(d.time)), cell(d.consumer), cell(d.keyDigest || '(no key)', 'digest'),
    cell(d.outcome, 'outcome ' + d.outcome), cell(d.layer), cell(d.attempt === undefined ? '–' : String(d.attempt), 'n'),
    cell(d.reason, 'reason'));
  return tr;
}

function showDecisions(decisions) {
  const fresh = decisions.filter((d) => d.seq > lastSeq);   // a reconnect sends the backlog again
  if (!fresh.length) { return; }
  lastSeq = fresh[fresh.length - 1].seq;
  const body = $('decisions').tBodies[0];
  const rows = document.createDocumentFragment();
  fresh.slice(-ROWS).reverse().forEach((d) => rows.append(decisionRow(d)));   // newest on top
  body.prepend(rows);
  while (body.rows.length > ROWS) { body.deleteRow(-1); }
}

function follow() {
  const stream = new EventSource('api/live/decisions');
  stream.addEventListener('decisions', (e) => showDecisions(JSON.parse(e.data)));
  stream.onopen = () => { $('stream-status').textContent = 'live'; $('stream-status').className = 'live'; };
  stream.onerror = () => { $('stream-status').textContent = 'reconnecting…'; $('stream-status').className = 'error'; };
}

// --- Dead letters: polled from the library's dead-letter operations, newest first ---------------------

const replayed = new Set();   // ids replayed from this page

function deadLetterRow(l) {
  const tr = document.createElement('tr');
  tr.dataset.id = l.id;
  tr.dataset.digest = l.bodySha256;
  const digest = cell(l.bodySha256.slice(0, 16) + '…', 'digest');
  digest.title = 'SHA-256 of the body: ' + l.bodySha256;
  const id = cell(l.id.slice(0, 8), 'n');
  id.title = 'dead letter ' + l.id;
  const button = document.createElement('button');
  button.className = 'replay';
  button.textContent = 'Replay';
  button.disabled = !l.replayable;
  button.addEventListener('click', () => replay(l.id, tr, button));
  const action = document.createElement('td');
  action.append(button);
  tr.append(id, cell(l.time ? clock(l.time) : '–'), digest, cell(l.bytes + ' B', 'n'),
    cell(l.outcome || '–', 'outcome ' + l.outcome), cell(String(l.attempts || '–'), 'n'), cell(l.reason, 'reason'),
    cell([l.consumer, l.keyDigest && 'key ' + l.keyDigest].filter(Boolean).join(' · '), 'where'),
    cell(String(l.replays), 'n'), action);
  return tr;
}

async function refreshDeadLetters() {
  const list = await (await fetch('api/dead-letters')).json();
  const body = $('dead-letters').tBodies[0];
  const wanted = new Set(list.letters.map((l) => l.id));
  for (const row of [...body.rows]) {
    if (!wanted.has(row.dataset.id)) { row.remove(); }
  }
  // A letter just replayed may still be in a list read before the replay removed it.
  const shown = new Set([...body.rows].map((r) => r.dataset.id).concat([...replayed]));
  // Newest first: a new letter goes on top, in the order the server lists them.
  const fresh = list.letters.filter((l) => !shown.has(l.id));
  const rows = document.createDocumentFragment();
  fresh.forEach((l) => rows.append(deadLetterRow(l)));
  body.prepend(rows);
  $('dead-letters-empty').hidden = list.letters.length > 0;
}

async function replay(id, row, button) {
  button.disabled = true;
  // A JSON body, as the server requires of a call that changes the queue (a cross-site form cannot send one).
  const r = await fetch('api/dead-letters/' + encodeURIComponent(id) + '/replay',
    {method: 'POST', headers: {'Content-Type': 'application/json'}, body: '{}'});
  if (r.ok) {
    const result = await r.json();
    replayed.add(id);
    row.remove();
    say('Replayed dead letter ' + id.slice(0, 8) + ': ' + result.status + ' (' + result.detail + ')');
  } else {
    button.disabled = false;
    say('Replay failed: HTTP ' + r.status, true);
  }
}

// --- Buttons ---------------------------------------------------------------------------------------

async function post(url, options) {
  const r = await fetch(url, Object.assign({method: 'POST'}, options));
  if (!r.ok) { throw new Error('HTTP ' + r.status); }
  return r.json();
}

function action(id, run) {
  $(id).addEventListener('click', async (e) => {
    e.preventDefault();
    try {
      say(await run());
    } catch (err) {
      say('Failed: ' + err.message, true);
    }
    refresh();
  });
}

$('order').addEventListener('submit', async (e) => {
  e.preventDefault();
  const copies = Number($('copies').value);
  const body = JSON.stringify({sku: $('sku').value, quantity: Number($('quantity').value)});
  try {
    const j = await post('api/orders?copies=' + copies, {headers: {'Content-Type': 'application/json'}, body});
    say('Published order ' + j.orderId + ' ' + j.published + ' times');
  } catch (err) {
    say('Publish failed: ' + err.message, true);
  }
  refresh();
});

action('publish-burst', async () => {
  const count = Number($('burst-count').value), copies = Number($('burst-copies').value);
  const j = await post(`api/orders/bulk?count=${count}&copies=${copies}&sku=${encodeURIComponent($('sku').value)}`);
  return `Published a burst of ${count} orders × ${copies} copies (${j.published} messages)`;
});
action('publish-invalid', async () => {
  const j = await post('api/orders/invalid?kind=invalid');
  return 'Published an invalid order (quantity −3), body sha256 ' + j.bodySha256;
});
function showOutage(secondsLeft) {
  const status = $('outage-status');
  status.dataset.suspended = secondsLeft > 0 ? 'true' : 'false';
  status.textContent = secondsLeft > 0
    ? `Claim store suspended, ${secondsLeft} s left: new orders are guarded by the ledger alone (store-failure=ledger-only).`
    : 'Claim store in service.';
}
action('claim-store-outage', async () => {
  const seconds = Number($('outage-seconds').value);
  const j = await post('api/claim-store/outage?seconds=' + seconds);
  showOutage(j.claimStoreOutageSeconds);
  return `Claim store suspended for ${seconds} s: publish copies and watch the ledger catch them`;
});
action('publish-keyless', async () => {
  const j = await post('api/orders/invalid?kind=keyless');
  return 'Published an order without orderId, body sha256 ' + j.bodySha256;
});

follow();
refresh();
setInterval(refresh, 1000);
