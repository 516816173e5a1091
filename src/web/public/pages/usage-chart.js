// This month's node time per day as stacked bars (running below, paused above), drawn as inline
// SVG: a chart library would be the largest file the UI loads, for one picture.
const SVG = 'http://www.w3.org/2000/svg';
const WIDTH = 640;
const HEIGHT = 180;
const BOTTOM = 20; // room for the day numbers
const LEFT = 36; // room for the hour scale

function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  for (const c of children) el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return el;
}

const hours = (seconds) => seconds / 3600;

/** days: [{date: 'YYYY-MM-DD', runningSeconds, pausedSeconds}] */
export function usageChart(days) {
  const peak = Math.max(1, ...days.map((d) => hours(d.runningSeconds + d.pausedSeconds)));
  const plotHeight = HEIGHT - BOTTOM;
  const slot = (WIDTH - LEFT) / Math.max(days.length, 1);
  const barWidth = Math.max(2, slot * 0.7);
  const y = (h) => plotHeight - (h / peak) * (plotHeight - 8);
  const bars = days.map((d, i) => {
    const x = LEFT + i * slot + (slot - barWidth) / 2;
    const running = hours(d.runningSeconds);
    const paused = hours(d.pausedSeconds);
    const title = `${d.date}: ${running.toFixed(1)} h running, ${paused.toFixed(1)} h paused`;
    return s(
      'g',
      { 'data-date': d.date },
      s('title', {}, title),
      s('rect', { class: 'bar-running', x, y: y(running), width: barWidth, height: plotHeight - y(running) }),
      s('rect', { class: 'bar-paused', x, y: y(running + paused), width: barWidth, height: y(running) - y(running + paused) }),
      s('text', { x: x + barWidth / 2, y: HEIGHT - 6, 'text-anchor': 'middle', class: 'axis' }, String(Number(d.date.slice(8)))),
    );
  });
  return s(
    'svg',
    { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, class: 'usage-chart', role: 'img', 'aria-label': 'Node hours per day this month: running and paused', 'data-testid': 'usage-chart' },
    s('line', { x1: LEFT, x2: WIDTH, y1: plotHeight, y2: plotHeight, class: 'axis-line' }),
    s('text', { x: 0, y: 12, class: 'axis' }, `${peak.toFixed(0)} h`),
    s('text', { x: 0, y: plotHeight, class: 'axis' }, '0'),
    ...bars,
  );
}
