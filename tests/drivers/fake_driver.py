"""A driver that misbehaves on purpose (tests/contract/test_driver.py): it says hello, then per MODE

- crash: exits with status 3 when asked to connect;
- garbage: answers connect with a line that is not JSON;
- silent: never answers connect;
- hung: answers every connect with `hung`, as a driver whose watchdog fired;
- old-version: says hello in protocol version 99;
- wrong-kind: answers connect with a `tools` answer;
- huge: says a hello whose page_limit is 10**18 and retry 10**9;
- deep: says a hello nested 100,000 levels deep;
- nan: says a hello whose timeout_s is NaN;
- mute: never says hello.

usage: python fake_driver.py MODE
"""

from __future__ import annotations

import json
import os
import sys
import time

MODE = sys.argv[1]
HELLO = {
    "protocol": "mcp-testkit-driver",
    "version": 99 if MODE == "old-version" else 1,
    "bridge": f"fake-{MODE}",
    "bridge_version": "0",
    "page_limit": None,
    "retry": 0,
    "timeout_s": None,
    "sessions": "persistent",
}


print(f"fake driver in mode {MODE} has pid {os.getpid()}", file=sys.stderr, flush=True)
if MODE == "huge":
    HELLO.update(page_limit=10**18, retry=10**9)
elif MODE == "nan":
    HELLO["timeout_s"] = float("nan")
elif MODE == "mute":
    time.sleep(60)


def say(message: object) -> None:
    sys.stdout.write((message if isinstance(message, str) else json.dumps(message)) + "\n")
    sys.stdout.flush()


say('{"bridge": ' + "[" * 100_000 + "]" * 100_000 + "}" if MODE == "deep" else HELLO)
for line in sys.stdin:
    request = json.loads(line)
    if request["op"] != "connect":
        say({"id": request["id"], "kind": "done"})
        continue
    print(f"fake driver in mode {MODE} got connect", file=sys.stderr, flush=True)
    if MODE == "crash":
        sys.exit(3)
    elif MODE == "garbage":
        say("this is not JSON")
    elif MODE == "silent":
        time.sleep(60)
    elif MODE == "hung":
        say({"id": request["id"], "kind": "hung", "message": "the bridge did not finish connect"})
    elif MODE == "wrong-kind":
        say({"id": request["id"], "kind": "tools", "tools": []})
