// Conversations: every chat, room and API conversation Herald keeps, searched and paged on
// the server (SessionService.ListSessions: 50 a page, however many there are), and one
// conversation's history (GetHistory, newest page first, older on request) with its runs.
import {call} from '../api.js';
import {announce, fill, h, table} from '../dom.js';
import {enumName, time} from '../format.js';
import {problem} from '../refresh.js';

const kPageSize = 50;
const kKinds = [['', 'Every kind'], ['CONVERSATION_KIND_DIRECT', 'Chats'],
                ['CONVERSATION_KIND_ROOM', 'Rooms'], ['CONVERSATION_KIND_API', 'API']];

function conversationLink(key) {
  const params = new URLSearchParams({kind: key.kind, address: key.address});
  if (key.thread) params.set('thread', key.thread);
  return `#/conversation?${params}`;
}

export function renderConversations(main, {params}) {
  const query = params.get('q') || '';
  const kind = params.get('kind') || '';
  const search = h('input', {id: 'search', type: 'search', name: 'q', value: query,
                             autocomplete: 'off', placeholder: 'alice@example.org'});
  const kindSelect = h('select', {id: 'kind', name: 'kind'},
    kKinds.map(([value, label]) => h('option', {value, selected: value === kind}, label)));
  const form = h('form', {role: 'search', class: 'inline', onsubmit: (event) => {
    event.preventDefault();
    const next = new URLSearchParams();
    if (search.value.trim()) next.set('q', search.value.trim());
    if (kindSelect.value) next.set('kind', kindSelect.value);
    window.location.hash = `#/conversations?${next}`;
  }},
  h('label', {for: 'search'}, 'Search conversations'), search,
  h('label', {for: 'kind'}, 'Kind'), kindSelect,
  h('button', {type: 'submit'}, 'Search'));
  const results = h('div', {});
  main.append(h('h1', {}, 'Conversations'), form, results);

  // Page tokens of the pages before this one, for "Previous".
  const before = [];
  let current = '';
  const load = async (pageToken) => {
    let page;
    try {
      page = await call('herald.v1.SessionService/ListSessions',
                        {kind: kind || undefined, query, pageSize: kPageSize, pageToken});
    } catch (error) {
      fill(results, h('p', {class: 'error'}, problem(error)));
      return;
    }
    current = pageToken;
    const rows = page.conversations || [];
    const next = page.nextPageToken || '';
    fill(results,
      rows.length === 0 ? h('p', {class: 'empty'}, query ? `No conversation matches “${query}”.`
                                                           : 'No conversations yet.')
        : table(`Conversations${query ? ` matching “${query}”` : ''}, page ${before.length + 1}`, [
          ['Conversation', (row) => h('a', {href: conversationLink(row.key)},
                                      row.key.address + (row.key.thread ? ` (${row.key.thread})` : ''))],
          ['Kind', (row) => enumName(row.key.kind, 'CONVERSATION_KIND_')],
          ['Last activity', (row) => time(row.lastActivity), {class: 'nowrap'}],
          ['Now', (row) => (row.busy ? 'answering' : row.loaded ? 'loaded' : '') +
                          (row.queued ? `, ${row.queued} queued` : '')],
          ['Archived sessions', (row) => String(row.archivedSessions || 0)],
        ], rows),
      h('div', {class: 'pager'},
        h('button', {type: 'button', disabled: before.length === 0, onclick: () => {
          load(before.pop());
        }}, 'Previous page'),
        h('button', {type: 'button', disabled: !next, onclick: () => {
          before.push(current);
          load(next);
        }}, 'Next page')));
  };
  load('');
  return () => {};
}

const kRoles = {user: 'user', assistant: 'Herald', tool: 'tool', note: 'note'};

export function renderConversation(main, {params}) {
  const key = {kind: params.get('kind') || 'CONVERSATION_KIND_DIRECT',
               address: params.get('address') || '', thread: params.get('thread') || ''};
  const prefix = {CONVERSATION_KIND_DIRECT: 'direct', CONVERSATION_KIND_ROOM: 'room',
                  CONVERSATION_KIND_API: 'api'}[key.kind] || 'direct';
  const history = h('ol', {class: 'history', 'aria-label': 'Messages, oldest first'});
  const older = h('button', {type: 'button', hidden: true}, 'Older messages');
  const runs = h('div', {});
  main.append(
    h('p', {}, h('a', {href: '#/conversations'}, '← Conversations')),
    h('h1', {}, key.address, h('span', {class: 'kind'}, ` ${enumName(key.kind, 'CONVERSATION_KIND_')}`)),
    h('section', {'aria-labelledby': 'history-heading'},
      h('h2', {id: 'history-heading'}, 'History'), older, history),
    h('section', {'aria-labelledby': 'runs-heading'},
      h('h2', {id: 'runs-heading'}, 'Runs'), runs));

  let olderToken = '';
  const loadHistory = async (pageToken) => {
    let page;
    try {
      page = await call('herald.v1.SessionService/GetHistory', {key, pageSize: 50, pageToken});
    } catch (error) {
      fill(history, h('li', {class: 'error'}, problem(error)));
      return;
    }
    const entries = (page.entries || []).map((entry) =>
      h('li', {class: `entry ${entry.role}`},
        h('div', {class: 'meta'}, h('strong', {}, entry.author || kRoles[entry.role] || entry.role),
          ' ', h('time', {datetime: entry.time || ''}, time(entry.time))),
        h('div', {class: 'text'}, entry.text)));
    if (!pageToken && entries.length === 0) {
      fill(history, h('li', {class: 'empty'}, 'No messages in the current session.'));
    }
    history.prepend(...entries);
    olderToken = page.nextPageToken || '';
    older.hidden = !olderToken;
    if (pageToken) announce(`${entries.length} older messages shown.`);
  };
  older.addEventListener('click', () => loadHistory(olderToken));
  loadHistory('');

  (async () => {
    try {
      const list = await call('herald.v1.AdminService/ListTraces',
                              {conversation: `${prefix}:${key.address}`, limit: 20});
      const traces = list.traces || [];
      fill(runs, traces.length === 0 ? h('p', {class: 'empty'}, 'No runs kept for it.')
        : h('ul', {}, traces.map((trace) => h('li', {},
          h('a', {href: `#/run/${encodeURIComponent(trace.traceId)}`},
            `${time(trace.root && trace.root.startTime)} — ${trace.spanCount} spans` +
            (trace.finished ? '' : ' (running)'))))));
    } catch (error) {
      fill(runs, h('p', {class: 'error'}, problem(error)));
    }
  })();
  return () => {};
}
