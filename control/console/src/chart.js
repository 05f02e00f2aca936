// Bar charts as SVG, with the numbers also in a table beside them (screen readers read the
// table; the picture is aria-hidden). Each bar carries data-label and data-value, which the
// browser test reads.
import {h, table} from './dom.js';
import {count} from './format.js';

const kSvg = 'http://www.w3.org/2000/svg';

function svg(tag, attributes, ...children) {
  const element = document.createElementNS(kSvg, tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value));
  for (const child of children) {
    element.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

// `bars`: [{label, value, limit?}]; a limit draws a mark at the limit's height.
export function barChart(title, bars, unit = 'tokens') {
  const width = 640;
  const rowHeight = 26;
  const labelWidth = 220;
  const height = Math.max(1, bars.length) * rowHeight + 8;
  const top = Math.max(1, ...bars.map((bar) => Math.max(bar.value, bar.limit || 0)));
  const scale = (value) => ((width - labelWidth - 140) * value) / top;
  const picture = svg('svg', {viewBox: `0 0 ${width} ${height}`, 'aria-hidden': 'true',
                              class: 'chart', preserveAspectRatio: 'xMinYMin meet'});
  bars.forEach((bar, i) => {
    const y = 4 + i * rowHeight;
    const label = bar.label.length > 30 ? `${bar.label.slice(0, 29)}…` : bar.label;
    picture.appendChild(svg('text', {x: labelWidth - 8, y: y + 16, 'text-anchor': 'end'}, label));
    picture.appendChild(svg('rect', {x: labelWidth, y: y + 3, height: rowHeight - 8,
                                     width: Math.max(1, scale(bar.value)),
                                     class: bar.limit && bar.value >= bar.limit ? 'bar over' : 'bar',
                                     'data-label': bar.label, 'data-value': bar.value}));
    if (bar.limit) {
      const x = labelWidth + scale(bar.limit);
      picture.appendChild(svg('line', {x1: x, x2: x, y1: y, y2: y + rowHeight - 2, class: 'limit'}));
    }
    picture.appendChild(svg('text', {x: labelWidth + scale(bar.value) + 6, y: y + 16},
                            bar.limit ? `${count(bar.value)} of ${count(bar.limit)}`
                                      : count(bar.value)));
  });
  const hasLimits = bars.some((bar) => bar.limit);
  const columns = [['', (bar) => bar.label], [unit, (bar) => count(bar.value)]];
  if (hasLimits) columns.push(['limit', (bar) => (bar.limit ? count(bar.limit) : '')]);
  return h('figure', {class: 'chart-figure'},
    h('figcaption', {}, title),
    bars.length ? picture : h('p', {class: 'empty'}, 'Nothing yet.'),
    h('details', {}, h('summary', {}, 'Numbers'), table(title, columns, bars)));
}
