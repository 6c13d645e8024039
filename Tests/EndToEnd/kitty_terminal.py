#!/usr/bin/env python3
"""A terminal that speaks the kitty keyboard protocol, for ui.sh (tmux does not).

    kitty_terminal.py CONTROL EVENTS -- COMMAND...

Runs COMMAND in a pseudo-terminal of 30x100. Answers the protocol query (CSI ? u) with
CSI ? 0 u and the primary device attributes query (CSI c) like xterm. Appends to EVENTS one
line per thing that happens: "pushed" when the program turns the protocol on (CSI > 1 u),
"popped" when it pops it (CSI < u), "order-ok" or "order-bad" when it exits (whether the pop
came before the program left the alternate screen), "exit N" with its status. Reads lines
from the CONTROL fifo: "send ESCAPED" writes those bytes to the program (Python escapes, e.g.
"send \\x1b[57430u").
"""
import os
import pty
import select
import signal
import struct
import sys
import fcntl
import termios


def main():
    control, events = sys.argv[1], sys.argv[2]
    command = sys.argv[sys.argv.index("--") + 1:]
    pid, master = pty.fork()
    if pid == 0:
        os.environ["TERM"] = "xterm-256color"
        os.execvp(command[0], command)
    fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    os.kill(pid, signal.SIGWINCH)
    ctl = os.open(control, os.O_RDONLY | os.O_NONBLOCK)
    keep = os.open(control, os.O_WRONLY)  # so the fifo never reads as closed
    out = bytearray()
    seen = 0
    pending = b""
    status = None

    def event(line):
        with open(events, "a") as f:
            f.write(line + "\n")

    while status is None:
        ready, _, _ = select.select([master, ctl], [], [], 0.1)
        if master in ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                chunk = b""
            out += chunk
            # Look at the new bytes (and a little before them, for a split sequence).
            window = bytes(out[max(0, seen - 8):])
            if b"\x1b[?u" in window:
                os.write(master, b"\x1b[?0u")
            if b"\x1b[c" in window:
                os.write(master, b"\x1b[?62;22c")
            if b"\x1b[>1u" in window:
                event("pushed")
            if b"\x1b[<u" in window:
                event("popped")
            seen = len(out)
        if ctl in ready:
            data = os.read(ctl, 4096)
            pending += data
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                text = line.decode()
                if text.startswith("send "):
                    os.write(master, text[5:].encode().decode("unicode_escape").encode("latin-1"))
        done, st = os.waitpid(pid, os.WNOHANG)
        if done:
            status = os.waitstatus_to_exitcode(st)
    # What was left to read after the exit.
    try:
        while True:
            chunk = os.read(master, 65536)
            if not chunk:
                break
            out += chunk
    except OSError:
        pass
    data = bytes(out)
    pop = data.rfind(b"\x1b[<u")
    leave = data.rfind(b"\x1b[?1049l")
    event("order-ok" if pop != -1 and (leave == -1 or pop < leave) else "order-bad")
    with open(events + ".raw", "wb") as f:
        f.write(data)
    event(f"exit {status}")
    os.close(keep)


if __name__ == "__main__":
    main()
