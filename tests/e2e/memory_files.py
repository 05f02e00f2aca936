"""Reads Herald's markdown memory the way an operator would, for the tests and the demo.

    folder = user_folder(agent.memory_dir, "alice@localhost")  # .../users/alice%40localhost
    for entry in read_history(os.path.join(folder, "history.md")):
        entry.role, entry.author, entry.text                     # "user", "alice@localhost", ...

This is an independent reading of docs/memory.md (folder names, the entry format), so a
test that passes proves the documentation describes the files Herald writes.
"""

import collections
import os
import re

Entry = collections.namedtuple("Entry", "time role author text")

# "### 2025-01-14T09:30:12.345678Z · user · alice@example.org"
_HEADER = re.compile(r"^### (\S+) \u00b7 (\S+) \u00b7 (.*)$")
_UNESCAPE = re.compile(r"%([0-9A-F]{2})")
_KEPT = set("abcdefghijklmnopqrstuvwxyz0123456789-_")


def encode_folder(name):
    """The folder name docs/memory.md gives a JID (short names only)."""
    out = []
    for i, byte in enumerate(name.encode("utf-8")):
        c = chr(byte)
        if c in _KEPT or (c == "." and i > 0):
            out.append(c)
        else:
            out.append(f"%{byte:02X}")
    encoded = "".join(out)
    if len(encoded) > 240:
        raise ValueError("long names end in a hash; this reader does not compute it")
    return encoded


def user_folder(memory_dir, bare_jid):
    return os.path.join(memory_dir, "users", encode_folder(bare_jid))


def room_folder(memory_dir, room_jid):
    return os.path.join(memory_dir, "rooms", encode_folder(room_jid))


def _unescape(text):
    return _UNESCAPE.sub(lambda m: chr(int(m.group(1), 16)), text)


def parse_history(text):
    """The entries of a history file's text; a cut-off last entry is left out, as documented."""
    entries = []
    header = None
    body = []
    for line in text.split("\n"):
        if header is None:
            m = _HEADER.match(line)
            if m:
                header, body = m, []
            continue
        if line == ">":
            body.append("")
        elif line.startswith("> "):
            body.append(line[2:])
        elif line == "":
            time, role, author = header.groups()
            entries.append(Entry(time, _unescape(role), _unescape(author), "\n".join(body)))
            header = None
        else:
            # A line without ">" inside an entry: that entry is ignored.
            header, body = _HEADER.match(line), []
    return entries


def read_history(path):
    """The entries of a history.md or session file; [] when the file does not exist."""
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            return parse_history(f.read())
    except FileNotFoundError:
        return []
