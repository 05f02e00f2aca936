#!/usr/bin/env python3
"""A Herald hook (docs/hooks.md) that gives the model notes with every message: the lines of
a file (office hours, on-call rota, ...) read afresh for each turn.

    tools/hooks/context_injector.py --target unix:/var/lib/herald/control.sock --file notes.txt
"""

import sys

from herald_hooks import attach, keep, main_args


def main():
    parser = main_args("Adds the text of a file as context to every message.")
    parser.add_argument("--file", required=True, help="the notes to add (read for each turn)")
    args = parser.parse_args()

    def hook(call):
        try:
            with open(args.file, encoding="utf-8") as f:
                return keep(context=f.read()[:8000])
        except OSError:
            return keep()

    code = attach("context-injector", ["pre_turn"], hook, args.target, args.token,
                  timeout_ms=args.timeout_ms, fail_closed=args.fail_closed,
                  on_registered=lambda: print("registered", flush=True))
    sys.exit(0 if code.name == "OK" else 1)


if __name__ == "__main__":
    main()
