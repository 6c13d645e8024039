#!/usr/bin/env python3
"""Ctrl-Z before the terminal has answered the interface's queries, for ui.sh (tmux answers
at once, so there the answer never comes late).

    late_answers.py COMMAND...

Runs an interactive bash in a pseudo-terminal of 30x100 (bash leads the session, so job
control works as in a terminal window), types COMMAND (the interface), and waits for its
primary device attributes query (CSI c). Then it presses Ctrl-Z, and answers the query only
150 ms later, as a slow terminal (or one over ssh) does. The answer must not end up typed into
the shell ("62;22c" at its prompt), the interface must stop once and stay stopped (not come
straight back), and it must come back with fg and still quit on Ctrl-C (130). Prints what went wrong and exits 1, or exits 0.
"""
import os
import pty
import select
import shlex
import signal
import struct
import sys
import fcntl
import termios
import time


def main():
    command = sys.argv[1:]
    pid, master = pty.fork()
    if pid == 0:
        os.environ["TERM"] = "xterm-256color"
        os.environ["PS1"] = "$ "
        os.execvp("bash", ["bash", "--norc", "--noprofile", "-i"])
    fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    out = bytearray()

    def read_for(seconds):
        deadline = time.monotonic() + seconds
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return
            ready, _, _ = select.select([master], [], [], left)
            if ready:
                try:
                    out.extend(os.read(master, 65536))
                except OSError:
                    return

    def wait_for(needle, since, seconds, what):
        deadline = time.monotonic() + seconds
        while needle not in out[since:]:
            if time.monotonic() > deadline:
                tail = bytes(out[since:])[-600:]
                sys.exit(f"late_answers: {what} did not come within {seconds} s; last output: {tail!r}")
            read_for(0.05)
        return out.index(needle, since) + len(needle)

    def type_(text):
        os.write(master, text.encode())

    try:
        wait_for(b"$ ", 0, 10, "the shell's prompt")
        start = len(out)
        type_(" ".join(shlex.quote(c) for c in command) + "\n")
        # The queries go out after the first frame; tmux would answer them here, at once.
        asked = wait_for(b"\x1b[c", start, 20, "the interface's device attributes query")
        read_for(0.3)
        os.write(master, b"\x1a")  # Ctrl-Z
        time.sleep(0.15)
        os.write(master, b"\x1b[?62;22c")
        stopped = wait_for(b"Stopped", asked, 10, "the shell's 'Stopped'")
        # Gone once, and not back before fg (a handler put back too soon caught the stop, and
        # the interface came straight back, over and over).
        returns = bytes(out[asked:stopped]).count(b"\x1b[?1049h")
        if returns:
            sys.exit(f"late_answers: after Ctrl-Z the interface came back {returns} times before it stopped")
        read_for(0.3)
        type_("echo typed-$((6 * 7))\n")
        read_for(0.5)
        said = bytes(out[stopped:])
        if b"62;22c" in said:
            sys.exit(f"late_answers: the terminal's answer was typed into the shell: {said[-300:]!r}")
        wait_for(b"typed-42", stopped, 10, "the shell's echo")
        back = len(out)
        type_("fg\n")
        # curses takes the alternate screen again, and redraws.
        wait_for(b"\x1b[?1049h", back, 10, "the interface's return after fg")
        read_for(0.5)
        os.write(master, b"\x03")  # Ctrl-C
        # Typed once the interface has left (or it would take the letters for keys).
        left = wait_for(b"\x1b[?1049l", back, 10, "the interface's end after Ctrl-C")
        wait_for(b"$ ", left, 10, "the shell's prompt after the interface")
        type_("echo status=$?\n")
        wait_for(b"status=130", back, 10, "the interface's end with 130 after Ctrl-C")
        type_("exit\n")
        read_for(0.5)
    finally:
        try:
            os.kill(pid, signal.SIGHUP)
        except ProcessLookupError:
            pass
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass


main()
