"""A small library for Herald hooks (docs/hooks.md): attach to HookService, answer calls.

A hook is a function that gets a call (point, conversation, jid, author, text) and returns a
verdict: continue(), rewrite(text), refuse(reason), optionally with context for the model.

    from herald_hooks import attach, rewrite, keep

    def upper(call):
        return rewrite(call.text.upper()) if call.point == "pre_turn" else keep()

    attach("upper", ["pre_turn"], upper, target="unix:/var/lib/herald/control.sock",
           token=os.environ["HERALD_TOKEN"])

It needs python3-grpcio and python3-protobuf (Debian), and protoc with grpc_python_plugin
(protobuf-compiler, protobuf-compiler-grpc) to make the Python messages from Herald's
hooks.proto once; they are kept in a cache folder next to this file's user's home.
"""

import hashlib
import os
import queue
import subprocess
import sys
import tempfile
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
PROTO_ROOT = os.path.normpath(os.path.join(HERE, "..", "..", "proto"))
PROTO = os.path.join(PROTO_ROOT, "herald", "v1", "hooks.proto")


def _generated():
    """Imports hooks_pb2 and hooks_pb2_grpc, generating them from hooks.proto when needed."""
    with open(PROTO, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()[:16]
    cache = os.path.join(os.environ.get("XDG_CACHE_HOME", os.path.join(tempfile.gettempdir())),
                         f"herald-hooks-{os.getuid()}-{digest}")
    if not os.path.exists(os.path.join(cache, "herald", "v1", "hooks_pb2_grpc.py")):
        building = f"{cache}.{os.getpid()}"
        os.makedirs(building, exist_ok=True)
        subprocess.run(["protoc", f"-I{PROTO_ROOT}", f"--python_out={building}",
                        f"--grpc_python_out={building}",
                        "--plugin=protoc-gen-grpc_python=/usr/bin/grpc_python_plugin", PROTO],
                       check=True)
        try:
            os.rename(building, cache)
        except OSError:
            pass  # another process made it first
    if cache not in sys.path:
        sys.path.insert(0, cache)
    from herald.v1 import hooks_pb2, hooks_pb2_grpc  # noqa: E402
    return hooks_pb2, hooks_pb2_grpc


class Call:
    """One question from Herald."""

    def __init__(self, message, pb):
        self.id = message.call_id
        self.point = {pb.HOOK_POINT_PRE_TURN: "pre_turn", pb.HOOK_POINT_REPLY: "reply"}.get(
            message.point, "unknown")
        self.conversation = message.conversation
        self.jid = message.jid
        self.author = message.author
        self.text = message.text
        self.run_id = message.run_id


class Verdict:
    def __init__(self, kind, text="", reason="", context=""):
        self.kind, self.text, self.reason, self.context = kind, text, reason, context


def keep(context=""):
    """Let it through unchanged (with notes for the model, at pre_turn)."""
    return Verdict("continue", context=context)


def rewrite(text, context=""):
    return Verdict("rewrite", text=text, context=context)


def refuse(reason):
    return Verdict("refuse", reason=reason)


def attach(name, points, handler, target, token, timeout_ms=2000, fail_closed=False,
           on_registered=None):
    """Attaches `handler` as hook `name` at `points` ("pre_turn", "reply") and answers calls
    until Herald ends the stream. on_registered() runs once Herald has put the hook in force.
    Returns the status code the stream ended with."""
    import grpc
    pb, pb_grpc = _generated()
    channel = grpc.insecure_channel(target)
    hook_service = pb_grpc.HookServiceStub(channel)
    outgoing = queue.Queue()
    point_of = {"pre_turn": pb.HOOK_POINT_PRE_TURN, "reply": pb.HOOK_POINT_REPLY}
    outgoing.put(pb.HookMessage(registration=pb.HookRegistration(
        name=name, points=[point_of[p] for p in points], timeout_ms=timeout_ms,
        fail_closed=fail_closed)))

    def requests():
        while True:
            message = outgoing.get()
            if message is None:
                return
            yield message

    verdict_of = {"continue": pb.HookResult.CONTINUE, "rewrite": pb.HookResult.REWRITE,
                  "refuse": pb.HookResult.REFUSE}
    try:
        for event in hook_service.Attach(requests(), metadata=[("authorization", f"Bearer {token}")]):
            if event.HasField("registered"):
                if on_registered is not None:
                    on_registered()
                continue
            call = Call(event.call, pb)
            try:
                verdict = handler(call)
            except Exception as error:  # a broken handler answers nothing: Herald's timeout
                print(f"{name}: the handler failed on {call.id}: {error}", file=sys.stderr)
                continue
            outgoing.put(pb.HookMessage(result=pb.HookResult(
                call_id=call.id, verdict=verdict_of[verdict.kind], text=verdict.text,
                reason=verdict.reason, context=verdict.context)))
        return grpc.StatusCode.OK
    except grpc.RpcError as error:
        print(f"{name}: {error.code().name}: {error.details()}", file=sys.stderr)
        return error.code()
    finally:
        outgoing.put(None)
        channel.close()


def main_args(description):
    """The command line every example takes: --target, --token (or HERALD_TOKEN)."""
    import argparse
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--target", default=os.environ.get("HERALD_TARGET",
                                                           "unix:./data/control.sock"),
                        help="Herald's control plane: unix:PATH or HOST:PORT")
    parser.add_argument("--token", default=os.environ.get("HERALD_TOKEN", ""),
                        help="a control token with the admin scope (default: $HERALD_TOKEN)")
    parser.add_argument("--timeout-ms", type=int, default=2000)
    parser.add_argument("--fail-closed", action="store_true")
    return parser
