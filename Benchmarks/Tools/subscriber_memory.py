#!/usr/bin/env python3
"""Resident memory of chatfeedd with many subscriptions that never ack.

Starts chatfeedd on a fresh database, creates --chats chats, opens --subscriptions window
subscriptions (limit --limit, maxInFlight 1; --limit 0: full-list subscriptions) that read every
line but never ack, then posts one message to each of --changed distinct chats, and reports the
daemon's VmRSS and VmHWM.

    python3 subscriber_memory.py --daemon .build/release/chatfeedd --max-pending 1000
    python3 subscriber_memory.py --daemon .build/release/chatfeedd --max-pending 100000000   # unbounded
    python3 subscriber_memory.py --daemon .build/release/chatfeedd --chats 10000 --changed 10000 --subscriptions 256 --limit 0
"""
import argparse, json, os, subprocess, sys, tempfile, threading, time

def main():
    p = argparse.ArgumentParser()
    p.add_argument("--daemon", default=".build/release/chatfeedd")
    p.add_argument("--chats", type=int, default=20000)
    p.add_argument("--changed", type=int, default=20000)
    p.add_argument("--subscriptions", type=int, default=511)
    p.add_argument("--limit", type=int, default=10)
    p.add_argument("--max-pending", type=int, default=1000)
    a = p.parse_args()
    directory = tempfile.mkdtemp(prefix="chatfeed-memory-")
    config = os.path.join(directory, "config.json")
    with open(config, "w") as f:
        json.dump({"maxSubscriptions": max(a.subscriptions, 1), "maxPendingChats": a.max_pending,
                   "durability": "normal", "logLevel": "error"}, f)
    daemon = subprocess.Popen([a.daemon, "--database", os.path.join(directory, "m.sqlite"), "--config", config],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    responses = {}
    lock = threading.Condition()

    def read():
        for line in daemon.stdout:
            message = json.loads(line)
            if "id" in message:
                with lock:
                    responses[message["id"]] = message
                    lock.notify_all()

    threading.Thread(target=read, daemon=True).start()
    next_id = [0]

    def send(method, params):
        next_id[0] += 1
        daemon.stdin.write((json.dumps({"jsonrpc": "2.0", "id": next_id[0], "method": method, "params": params}) + "\n").encode())
        return next_id[0]

    def wait(request):
        daemon.stdin.flush()
        with lock:
            while request not in responses:
                lock.wait(60)
            return responses[request]

    last = None
    for n in range(a.chats):
        last = send("chat.create", {"chat": f"c{n}", "title": f"Chat {n}", "createdAt": n})
    wait(last)
    for _ in range(a.subscriptions):
        last = send("feed.subscribe", {"limit": a.limit, "maxInFlight": 1} if a.limit > 0 else {"maxInFlight": 1})
    result = wait(last)
    assert "result" in result, result
    for n in range(a.changed):
        last = send("message.post", {"chat": f"c{n % a.chats}", "id": f"m{n}", "sender": "ann",
                                     "text": "a message text of some length, as a chat preview shows", "sentAt": 10_000_000 + n})
    wait(last)
    stats = wait(send("server.stats", {}))["result"]
    pending = sum(s["pendingChats"] for s in stats["subscriptions"])
    resets = sum(1 for s in stats["subscriptions"] if s.get("resetPending"))
    status = open(f"/proc/{daemon.pid}/status").read()
    fields = {line.split(":")[0]: line.split(":")[1].strip() for line in status.splitlines() if ":" in line}
    print(f"chats {a.chats}, changed {a.changed}, subscriptions {a.subscriptions} ({f'limit {a.limit}' if a.limit > 0 else 'full list'}, never acking), "
          f"maxPendingChats {a.max_pending}: VmRSS {fields['VmRSS']}, VmHWM {fields['VmHWM']}, "
          f"pending entries {pending}, resets owed {resets}")
    daemon.stdin.close()
    daemon.wait(60)

if __name__ == "__main__":
    main()
