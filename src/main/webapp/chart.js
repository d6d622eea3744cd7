// A small SVG line chart for the live page: no library, nothing from a CDN. Every text reaches the
// page through textContent or setAttribute, never as HTML.
'use strict';

const SVG = 'http://www.w3.org/2000/svg';
const WIDTH = 720, HEIGHT = 210, LEFT = 56, RIGHT = 8, TOP = 8, BOTTOM = 22;

function svgElement(name, attributes, text) {
  const e = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attributes)) {
    e.setAttribute(k, String(v));
  }
  if (text !== undefined) {
    e.textContent = text;
  }
  return e;
}

/** A round step for about four grid lines up to max. */
function niceStep(max) {
  const raw = Math.max(max, 1) / 4;
  const magnitude = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 5, 10].map((m) => m * magnitude).find((s) => s >= raw);
  return Math.max(1, step);
}

function microsLabel(us) {
  const three = (v) => String(Number(v.toPrecision(3)));   // 9.6338 -> 9.63, 100 -> 100
  if (us >= 1e6) { return three(us / 1e6) + ' s'; }
  if (us >= 1e3) { return three(us / 1e3) + ' ms'; }
  return three(us) + ' µs';
}

/**
 * Draws series over the last `windowSeconds` seconds up to `now` (epoch seconds) into an <svg>.
 * series: [{name, color, dashed, values: [number|null]}], one value per entry of times; a null
 * leaves a gap. scale: 'linear' (from 0) or 'log' (microseconds, whole decades).
 */
function drawChart(svg, times, series, now, windowSeconds, scale) {
  svg.setAttribute('viewBox', `0 0 ${WIDTH} ${HEIGHT}`);
  svg.replaceChildren();
  const plotW = WIDTH - LEFT - RIGHT, plotH = HEIGHT - TOP - BOTTOM;
  const x = (t) => LEFT + plotW * (1 - (now - t) / windowSeconds);
  const values = series.flatMap((s) => s.values).filter((v) => v !== null && v !== undefined);

  let y, ticks, label;
  if (scale === 'log') {
    const positive = values.filter((v) => v > 0);
    const lo = Math.pow(10, Math.floor(Math.log10(Math.max(1, Math.min(...positive, 100)))));
    const hi = Math.pow(10, Math.ceil(Math.log10(Math.max(lo * 10, ...positive))));
    y = (v) => TOP + plotH * (1 - (Math.log10(Math.max(v, lo)) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo)));
    ticks = [];
    for (let v = lo; v <= hi; v *= 10) { ticks.push(v); }
    label = microsLabel;
  } else {
    const step = niceStep(Math.max(0, ...values));
    const top = step * Math.max(1, Math.ceil(Math.max(0, ...values) / step));
    y = (v) => TOP + plotH * (1 - v / top);
    ticks = [];
    for (let v = 0; v <= top; v += step) { ticks.push(v); }
    label = String;
  }

  for (const v of ticks) {
    svg.append(svgElement('line', {x1: LEFT, x2: WIDTH - RIGHT, y1: y(v), y2: y(v), class: 'grid'}));
    svg.append(svgElement('text', {x: LEFT - 6, y: y(v) + 4, 'text-anchor': 'end', class: 'axis'}, label(v)));
  }
  for (let ago = windowSeconds; ago >= 0; ago -= 60) {
    const text = ago === 0 ? 'now' : `−${ago / 60} min`;
    svg.append(svgElement('text', {x: x(now - ago), y: HEIGHT - 6, 'text-anchor': ago === 0 ? 'end' : 'middle', class: 'axis'}, text));
  }

  for (const s of series) {
    let d = '';
    let open = false;
    s.values.forEach((v, i) => {
      if (v === null || v === undefined || times[i] < now - windowSeconds) {
        open = false;
        return;
      }
      d += `${open ? 'L' : 'M'}${x(times[i]).toFixed(1)},${y(v).toFixed(1)}`;
      open = true;
    });
    const path = svgElement('path', {d, fill: 'none', stroke: s.color, 'stroke-width': 1.6});
    if (s.dashed) { path.setAttribute('stroke-dasharray', '4 3'); }
    path.append(svgElement('title', {}, s.name));
    svg.append(path);
  }
  // The newest second drawn: lets a test (or a curious reader) see the chart move on.
  svg.setAttribute('data-last', times.length ? String(times[times.length - 1]) : '');
}
