// Runs: the live timeline of the agent's work (AdminService.ListTraces / GetTrace). The list
// shows the runs in progress and the last ones kept; a run shows its spans — the model calls,
// the tool calls with their arguments and results, approval waits, memory writes — on one time
// axis, refreshed every second until the run has finished. What the spans hold is already
// without secrets (the sandbox returns tool results without the run's credentials).
import {call} from '../api.js';
import {fill, h, table} from '../dom.js';
import {duration, milliseconds, time} from '../format.js';
import {every, problem} from '../refresh.js';

function outcome(trace) {
  if (!trace.finished) return h('span', {class: 'state running'}, 'running');
  const status = trace.root && trace.root.status;
  return status === 'SPAN_STATUS_ERROR' ? h('span', {class: 'state error'}, 'failed')
                                        : h('span', {class: 'state ok'}, 'done');
}

export function renderRuns(main) {
  const body = h('div', {});
  main.append(h('h1', {}, 'Runs'), body);
  return every(2000, async () => {
    let list;
    try {
      list = await call('herald.v1.AdminService/ListTraces', {limit: 100});
    } catch (error) {
      fill(body, h('p', {class: 'error'}, problem(error)));
      return;
    }
    const traces = list.traces || [];
    fill(body, traces.length === 0 ? h('p', {class: 'empty'}, 'No runs yet.')
      : table('Runs, newest first', [
        ['Started', (trace) => h('a', {href: `#/run/${encodeURIComponent(trace.traceId)}`},
                                 time(trace.root && trace.root.startTime)), {class: 'nowrap'}],
        ['Conversation', (trace) => trace.conversation],
        ['Took', (trace) => duration(milliseconds(trace.root && trace.root.startTime,
                                                  trace.root && trace.root.endTime))],
        ['Spans', (trace) => String(trace.spanCount)],
        ['Outcome', outcome],
      ], traces, (trace) => ({'data-trace': trace.traceId})));
  });
}

// depth of each span below the root, for indenting
function depths(spans) {
  const byId = new Map(spans.map((span) => [span.spanId, span]));
  const depth = new Map();
  const of = (span) => {
    if (depth.has(span.spanId)) return depth.get(span.spanId);
    const parent = byId.get(span.parentSpanId);
    const value = parent && parent !== span ? Math.min(of(parent) + 1, 8) : 0;
    depth.set(span.spanId, value);
    return value;
  };
  spans.forEach(of);
  return depth;
}

function spanKind(name) {
  if (name.startsWith('chat ')) return 'model';
  if (name.startsWith('tool ')) return 'tool';
  if (name.endsWith(' wait')) return 'wait';
  if (name.startsWith('memory')) return 'memory';
  return 'turn';
}

export function renderRun(main, {rest}) {
  const heading = h('h1', {}, 'Run');
  const summary = h('p', {class: 'summary'});
  const timeline = h('ol', {class: 'timeline', 'aria-label': 'Spans in the order they began'});
  main.append(h('p', {}, h('a', {href: '#/runs'}, '← Runs')), heading, summary, timeline);
  let stop = () => {};
  let finished = false;
  stop = every(1000, async () => {
    if (finished) return;
    let trace;
    try {
      trace = await call('herald.v1.AdminService/GetTrace', {id: rest});
    } catch (error) {
      fill(summary, h('span', {class: 'error'}, problem(error)));
      return;
    }
    finished = trace.finished;
    const spans = trace.spans || [];
    const root = trace.root || spans[0] || {};
    const begin = new Date(root.startTime).getTime();
    const now = Date.now();
    const end = root.endTime ? new Date(root.endTime).getTime()
                             : Math.max(now, ...spans.map((s) => new Date(s.endTime || 0).getTime()));
    const total = Math.max(1, end - begin);
    fill(heading, `Run in ${trace.conversation}`);
    fill(summary, outcome(trace), ` ${time(root.startTime)}, ${duration(end - begin)}, `,
         `${trace.spanCount} spans`, trace.droppedSpans ? `, ${trace.droppedSpans} not kept` : '',
         ` · run ${trace.runId} · trace ${trace.traceId}`);
    const depth = depths(spans);
    fill(timeline, spans.map((span) => {
      const from = new Date(span.startTime).getTime() - begin;
      const to = (span.endTime ? new Date(span.endTime).getTime() : now) - begin;
      const took = span.endTime ? duration(to - from) : 'running';
      const failed = span.status === 'SPAN_STATUS_ERROR';
      const left = (100 * Math.max(0, from)) / total;
      const width = Math.max(0.5, (100 * Math.max(0, to - from)) / total);
      const attributes = span.attributes || [];
      return h('li', {class: `span ${spanKind(span.name)}${failed ? ' failed' : ''}`,
                      style: {'--depth': String(depth.get(span.spanId) || 0)}, 'data-span': span.name},
        h('details', {},
          h('summary', {},
            h('span', {class: 'name'}, span.name),
            h('span', {class: 'took'}, took, failed ? ` — ${span.statusMessage || 'error'}` : ''),
            h('span', {class: 'track', 'aria-hidden': 'true'},
              h('span', {class: 'bar', style: {left: `${left.toFixed(2)}%`, width: `${width.toFixed(2)}%`}}))),
          attributes.length === 0 ? h('p', {class: 'empty'}, 'No attributes.')
            : h('dl', {class: 'attributes'}, attributes.map((attribute) => [
              h('dt', {}, attribute.key), h('dd', {}, h('pre', {}, attribute.value))]))));
    }));
  });
  return () => stop();
}
