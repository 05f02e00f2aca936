// Status: the connection, uptime, versions, counters and the notices Herald has for its
// operator (AdminService.GetStatus), refreshed every 5 s.
import {call} from '../api.js';
import {fill, h} from '../dom.js';
import {count, duration, enumName, protoDuration, time} from '../format.js';
import {every, problem} from '../refresh.js';

export function renderStatus(main) {
  const body = h('div', {'aria-live': 'off'});
  main.append(h('h1', {}, 'Status'), body);
  return every(5000, async () => {
    let status;
    try {
      status = await call('herald.v1.AdminService/GetStatus');
    } catch (error) {
      fill(body, h('p', {class: 'error'}, problem(error)));
      return;
    }
    const state = enumName(status.connectionState, 'CONNECTION_STATE_');
    const rows = [
      ['Connection', h('span', {class: `state ${state}`}, state), ' ', status.connection,
       status.server ? ` via ${status.server}` : ''],
      ['Up for', duration(protoDuration(status.uptime)), ` (since ${time(status.startedAt)})`],
      ['Version', status.version],
      ['Default model', status.defaultModel],
      ['Conversations', `${count(status.conversationsLoaded)} loaded, ` +
                        `${count(status.conversationsBusy)} answering`],
      ['Rooms', `${count(status.roomsJoined)} joined of ${count(status.roomsConfigured)}`],
      ['Messages received', count(status.messagesReceived)],
      ['Model calls', count(status.llmCalls)],
      ['Feedback', `${count(status.feedbackPositive)} thumbs up, ` +
                   `${count(status.feedbackNegative)} thumbs down`],
      ['Event subscribers', count(status.subscribers)],
    ];
    const notices = status.notices || [];
    fill(body,
      h('dl', {class: 'facts', id: 'status-facts'},
        rows.map(([term, ...value]) => [h('dt', {}, term), h('dd', {}, value)])),
      h('h2', {}, 'Notices'),
      notices.length ? h('ul', {class: 'notices'}, notices.map((notice) => h('li', {}, notice)))
                     : h('p', {class: 'empty'}, 'None.'));
  });
}
