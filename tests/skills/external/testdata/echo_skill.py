#!/usr/bin/python3
"""A well-behaved external skill for the tests: it speaks Herald's skill protocol
(docs/skills.md) and does what its "mode" argument says."""
import base64
import json
import os
import sys


def reply(message):
    print(json.dumps(message), flush=True)


def main():
    request = json.load(sys.stdin)
    arguments = request["arguments"]
    mode = arguments.get("mode", "echo")
    if mode == "stream":
        for i in range(3):
            reply({"type": "output", "text": f"part {i}\n"})
        reply({"type": "result", "ok": True, "output": "done"})
    elif mode == "parts":
        for part in arguments["parts"]:
            reply({"type": "output", "text": part})
        reply({"type": "result", "ok": True})
    elif mode == "file":
        reply({"type": "file", "name": "note.txt", "media_type": "text/plain",
               "data": base64.b64encode(arguments["text"].encode()).decode(),
               "caption": "a note"})
        reply({"type": "result", "ok": True, "output": "wrote a note"})
    elif mode == "stderr":
        sys.stderr.write(arguments["stderr"])
        sys.exit(3)
    elif mode == "error":
        reply({"ok": False, "error": arguments["error"]})
    elif mode == "fail":
        reply({"ok": False, "error": "asked to fail"})
    elif mode == "garbage":
        print("this is not JSON", flush=True)
    elif mode == "exit":
        sys.exit(3)
    else:
        reply({"ok": True, "output": json.dumps({
            "text": arguments.get("text"),
            "context": request["context"],
            "home": os.environ["HOME"],
            "cwd": os.getcwd(),
            "token": os.environ.get("EXAMPLE_TOKEN", ""),
        })})


main()
