#!/usr/bin/env python3
"""Hostile loads on hark's session server, for server-load.sh.

  server_load.py flood SOCKET SERVER_PID N on|off   a session sends N valid requests while the
        server is stopped (SIGSTOP), a control client one request right behind them (silent
        mode on or off, which the session hears of); the server is let go (SIGCONT). Prints
        how many of the flood's requests were answered before the other's (the replies before
        the silent-mode event in the flood's own stream), and how many it sent.
  server_load.py hold SOCKET N SECONDS       opens N connections that say nothing and holds them
        SECONDS; prints how many it could open, then how many the server closed.
"""
import json
import os
import signal
import socket
import sys
import time


def connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    return s


def hello(s, name):
    s.sendall((json.dumps({"type": "hello", "version": 1, "name": name}) + "\n").encode())
    f = s.makefile("rb")
    f.readline()
    return f


def stopped(pid, seconds=5.0):
    """Waits until every thread of process pid is stopped (its /proc state 'T')."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        states = []
        for task in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{task}/stat") as f:
                    states.append(f.read().rsplit(")", 1)[1].split()[0])
            except FileNotFoundError:
                pass
        if states and all(s == "T" for s in states):
            return
        time.sleep(0.001)
    raise SystemExit(f"process {pid} did not stop")


def flood(path, server_pid, n, silent_on):
    a, b = connect(path), connect(path)
    fa, fb = hello(a, "flood"), hello(b, "control")
    # The flood is a session, so it hears of silent mode changing: where that event falls among
    # its replies is where the other client's request was handled. Order, not time.
    a.sendall(b'{"type":"setCategory","id":0,"category":"playback"}\n')
    fa.readline()
    os.kill(server_pid, signal.SIGSTOP)
    # The stop is delivered when the kernel next runs the server: until its state says stopped
    # ('T'), it could still read part of the flood alone (on a busy machine it took 7 turns).
    stopped(server_pid)
    try:
        burst = "".join(json.dumps({"type": "status", "id": i}) + "\n" for i in range(1, n + 1))
        a.setblocking(False)
        sent = a.send(burst.encode())  # what fits in the socket now
        a.setblocking(True)
        request = {"type": "setSilent", "id": 1, "on": silent_on}
        b.sendall((json.dumps(request) + "\n").encode())
    finally:
        os.kill(server_pid, signal.SIGCONT)
    fb.readline()
    before = 0
    while True:
        line = fa.readline()
        if not line:
            raise SystemExit("the flood's connection closed")
        message = json.loads(line)
        if message.get("type") == "event":
            break
        before += 1
    print(before, burst[:sent].count("\n"))


def hold(path, n, seconds):
    held = []
    for _ in range(n):
        try:
            held.append(connect(path))
        except OSError:
            break
    print(len(held), flush=True)
    time.sleep(seconds)
    closed = 0
    for s in held:
        s.setblocking(False)
        try:
            if s.recv(1) == b"":
                closed += 1
        except BlockingIOError:
            pass
        except OSError:
            closed += 1
    print(closed, flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "flood":
        flood(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == "on")
    elif sys.argv[1] == "hold":
        hold(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]))
