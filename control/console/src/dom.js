// Building the page without ever parsing HTML: every text that came from Herald (a chat
// message, a JID, a tool's output) becomes a text node, so nothing a stranger wrote in a chat
// can run in the operator's browser.
//
//   h('a', {href: '#/runs', class: 'link'}, 'Runs', h('span', {}, count))

export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === 'style') {
      // Through the CSSOM: the console's Content-Security-Policy refuses style attributes.
      for (const [property, setting] of Object.entries(value)) {
        element.style.setProperty(property, setting);
      }
    } else if (name.startsWith('on')) {
      element.addEventListener(name.slice(2), value);
    } else if (value === true) {
      element.setAttribute(name, '');
    } else {
      element.setAttribute(name, String(value));
    }
  }
  append(element, children);
  return element;
}

function append(element, children) {
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    if (Array.isArray(child)) {
      append(element, child);
    } else if (child instanceof Node) {
      element.appendChild(child);
    } else {
      element.appendChild(document.createTextNode(String(child)));
    }
  }
}

// Replaces what `element` holds.
export function fill(element, ...children) {
  element.replaceChildren();
  append(element, children);
  return element;
}

// A table: `columns` are [heading, (row) => cell, cell attributes?]; `caption` says what it
// lists.
export function table(caption, columns, rows, rowAttributes = () => ({})) {
  return h('table', {},
    h('caption', {}, caption),
    h('thead', {}, h('tr', {}, columns.map(([heading]) => h('th', {scope: 'col'}, heading)))),
    h('tbody', {}, rows.map((row) =>
      h('tr', rowAttributes(row),
        columns.map(([, cell, attributes = {}]) => h('td', attributes, cell(row)))))));
}

// Announces `text` to screen readers and shows it under the header.
export function announce(text, kind = 'info') {
  const region = document.getElementById('announce');
  region.className = `announce ${kind}`;
  region.textContent = text;
}
