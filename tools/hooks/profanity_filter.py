#!/usr/bin/env python3
"""A Herald hook (docs/hooks.md) that masks listed words in what people send and in what
Herald answers, and refuses a message that is nothing but such words.

    tools/hooks/profanity_filter.py --target unix:/var/lib/herald/control.sock --words darn,heck
"""

import re
import sys

from herald_hooks import attach, keep, main_args, refuse, rewrite


def masker(words):
    pattern = re.compile(r"\b(" + "|".join(re.escape(w) for w in words) + r")\b", re.IGNORECASE)

    def hook(call):
        masked = pattern.sub(lambda m: "*" * len(m.group(0)), call.text)
        if masked == call.text:
            return keep()
        if call.point == "pre_turn" and not re.sub(r"[\W*]", "", masked):
            return refuse("Please say that without the language.")
        return rewrite(masked)
    return hook


def main():
    parser = main_args("Masks listed words in messages and answers.")
    parser.add_argument("--words", default="darn,heck,blast",
                        help="comma-separated words to mask")
    args = parser.parse_args()
    words = [w.strip() for w in args.words.split(",") if w.strip()]
    code = attach("profanity-filter", ["pre_turn", "reply"], masker(words), args.target,
                  args.token, timeout_ms=args.timeout_ms, fail_closed=args.fail_closed,
                  on_registered=lambda: print("registered", flush=True))
    sys.exit(0 if code.name == "OK" else 1)


if __name__ == "__main__":
    main()
