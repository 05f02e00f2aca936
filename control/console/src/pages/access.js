// Access: who may talk to Herald (AdminService.GetAllowlist / UpdateAllowlist) and the rooms
// it sits in (ListRooms / JoinRoom / LeaveRoom). Both need a token with the admin scope to
// change; what is changed here lasts until the next restart or reload, as heraldctl's.
import {call} from '../api.js';
import {announce, fill, h, table} from '../dom.js';
import {problem} from '../refresh.js';

async function change(method, request, done) {
  try {
    await call(method, request);
    announce(done, 'ok');
    return true;
  } catch (error) {
    announce(problem(error), 'error');
    return false;
  }
}

function addForm(id, label, placeholder, onAdd) {
  const input = h('input', {id, type: 'text', required: true, autocomplete: 'off', placeholder});
  return h('form', {class: 'inline', onsubmit: async (event) => {
    event.preventDefault();
    if (await onAdd(input.value.trim())) input.value = '';
  }}, h('label', {for: id}, label), input, h('button', {type: 'submit'}, 'Add'));
}

export function renderAccess(main) {
  const allowlist = h('div', {});
  const rooms = h('div', {});
  main.append(h('h1', {}, 'Access'),
    h('section', {'aria-labelledby': 'allowlist-heading'},
      h('h2', {id: 'allowlist-heading'}, 'Allowlist'), allowlist),
    h('section', {'aria-labelledby': 'rooms-heading'},
      h('h2', {id: 'rooms-heading'}, 'Rooms'), rooms));

  const loadAllowlist = async () => {
    let list;
    try {
      list = await call('herald.v1.AdminService/GetAllowlist');
    } catch (error) {
      fill(allowlist, h('p', {class: 'error'}, problem(error)));
      return;
    }
    const entries = (values, field, what) => (values || []).length === 0
      ? h('p', {class: 'empty'}, `No ${what}.`)
      : h('ul', {class: 'entries'}, values.map((value) => h('li', {}, value, ' ',
        h('button', {type: 'button', 'aria-label': `Remove ${value}`, onclick: async () => {
          if (await change('herald.v1.AdminService/UpdateAllowlist', {[field]: [value]},
                           `Removed ${value}.`)) loadAllowlist();
        }}, 'Remove'))));
    fill(allowlist,
      h('h3', {}, 'People'), entries(list.jids, 'removeJids', 'JIDs'),
      addForm('add-jid', 'Add a JID', 'alice@example.org', (value) =>
        change('herald.v1.AdminService/UpdateAllowlist', {addJids: [value]}, `Added ${value}.`)
          .then((ok) => (ok && loadAllowlist(), ok))),
      h('h3', {}, 'Domains'), entries(list.domains, 'removeDomains', 'domains'),
      addForm('add-domain', 'Add a domain', 'example.org', (value) =>
        change('herald.v1.AdminService/UpdateAllowlist', {addDomains: [value]}, `Added ${value}.`)
          .then((ok) => (ok && loadAllowlist(), ok))),
      h('h3', {}, 'Admins'),
      (list.adminJids || []).length === 0 ? h('p', {class: 'empty'}, 'No admin JIDs.')
        : h('ul', {}, list.adminJids.map((jid) => h('li', {}, jid))),
      h('p', {class: 'help'}, 'Admins are set in herald.toml ([agent] admin_jids).'));
  };

  const loadRooms = async () => {
    let list;
    try {
      list = await call('herald.v1.AdminService/ListRooms');
    } catch (error) {
      fill(rooms, h('p', {class: 'error'}, problem(error)));
      return;
    }
    const jid = h('input', {id: 'room-jid', type: 'text', required: true, autocomplete: 'off',
                            placeholder: 'lobby@conference.example.org'});
    const nick = h('input', {id: 'room-nick', type: 'text', autocomplete: 'off',
                             placeholder: 'Herald'});
    const activation = h('select', {id: 'room-activation'},
      h('option', {value: 'mention'}, 'when mentioned'), h('option', {value: 'all'}, 'to every message'));
    const joined = list.rooms || [];
    fill(rooms,
      joined.length === 0 ? h('p', {class: 'empty'}, 'No rooms.')
        : table('Rooms', [
          ['Room', (room) => room.jid],
          ['Nick', (room) => room.nick],
          ['Answers', (room) => (room.activation === 'all' ? 'every message' : 'when mentioned')],
          ['State', (room) => (room.joined ? 'joined' : 'joining')],
          ['', (room) => h('button', {type: 'button', 'aria-label': `Leave ${room.jid}`,
            onclick: async () => {
              if (await change('herald.v1.AdminService/LeaveRoom', {jid: room.jid},
                               `Left ${room.jid}.`)) loadRooms();
            }}, 'Leave')],
        ], joined),
      h('form', {class: 'inline', onsubmit: async (event) => {
        event.preventDefault();
        const room = {jid: jid.value.trim(), nick: nick.value.trim(), activation: activation.value};
        if (await change('herald.v1.AdminService/JoinRoom', {room}, `Joining ${room.jid}.`)) {
          loadRooms();
        }
      }},
      h('label', {for: 'room-jid'}, 'Join a room'), jid,
      h('label', {for: 'room-nick'}, 'as'), nick,
      h('label', {for: 'room-activation'}, 'answering'), activation,
      h('button', {type: 'submit'}, 'Join')));
  };
  loadAllowlist();
  loadRooms();
  return () => {};
}
