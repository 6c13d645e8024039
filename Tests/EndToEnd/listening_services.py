#!/usr/bin/env python3
"""ListenBrainz and Last.fm on loopback, as their documentation describes them, for the
listening tests: one HTTP server that speaks both, checks each request's form (ListenBrainz's
token header and JSON; Last.fm's form and its api_sig, the MD5 of the sorted parameters and the
secret) and refuses what the real services refuse, and can be told to fail.

  listening_services.py DIR TOKEN API_KEY SECRET

Writes the port it listens on to DIR/port. Every request is a JSON line in DIR/requests.jsonl;
every listen taken, one line in DIR/taken.jsonl ({"service", "listened_at", "artist", "track",
"album"}). Modes, set with GET /control?lb=MODE&fm=MODE: ok; down (503, or Last.fm's error 16);
hang (never answers, and takes nothing: a timeout); refuse (ListenBrainz 401, Last.fm error 9). The desktop
auth page GET /api/auth/?api_key=…&token=… is the user allowing hark: that token then gets a
session. Ends on SIGTERM.
"""
import hashlib
import json
import os
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

folder, TOKEN, API_KEY, SECRET = sys.argv[1:5]
SESSION_KEY = "session-key-1"
modes = {"lb": "ok", "fm": "ok"}
tokens = {}  # token -> allowed
lock = threading.Lock()


def record(name, value):
    with lock, open(os.path.join(folder, name), "a") as f:
        f.write(json.dumps(value, sort_keys=True) + "\n")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status, body, headers=()):
        data = json.dumps(body).encode() if not isinstance(body, bytes) else body
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def hang(self):
        # A server that took the connection and never answers: nothing is taken.
        time.sleep(30)
        self.close_connection = True

    def do_GET(self):
        url = urllib.parse.urlparse(self.path)
        query = dict(urllib.parse.parse_qsl(url.query))
        record("requests.jsonl", {"method": "GET", "path": url.path, "query": query})
        if url.path == "/control":
            modes.update({k: v for k, v in query.items() if k in modes})
            return self.answer(200, modes)
        if url.path == "/api/auth/":
            if query.get("api_key") != API_KEY or query.get("token") not in tokens:
                return self.answer(400, {"error": "unknown token"})
            tokens[query["token"]] = True
            return self.answer(200, {"allowed": True})
        if url.path == "/1/validate-token":
            ok = self.headers.get("Authorization") == "Token " + TOKEN
            return self.answer(200, {"valid": ok, "user_name": "tester" if ok else None})
        self.answer(404, {"error": "no such page"})

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        url = urllib.parse.urlparse(self.path)
        if url.path == "/1/submit-listens":
            return self.listenbrainz(body)
        if url.path == "/2.0/":
            return self.lastfm(body)
        self.answer(404, {"error": "no such page"})

    # ListenBrainz: https://listenbrainz.readthedocs.io/en/latest/users/api/core.html
    def listenbrainz(self, body):
        mode = modes["lb"]
        try:
            doc = json.loads(body)
        except ValueError:
            doc = None
        record("requests.jsonl", {"service": "listenbrainz", "mode": mode, "body": doc})
        if mode == "hang":
            return self.hang()
        if mode == "down":
            return self.answer(503, {"code": 503, "error": "Service unavailable"})
        if self.headers.get("Authorization") != "Token " + TOKEN or mode == "refuse":
            return self.answer(401, {"code": 401, "error": "Invalid authorization token."})
        if not isinstance(doc, dict) or doc.get("listen_type") not in ("single", "import", "playing_now"):
            return self.answer(400, {"code": 400, "error": "Invalid listen type"})
        payload = doc.get("payload")
        if not isinstance(payload, list) or not payload:
            return self.answer(400, {"code": 400, "error": "No payload"})
        kind = doc["listen_type"]
        if kind in ("single", "playing_now") and len(payload) != 1:
            return self.answer(400, {"code": 400, "error": kind + " takes one listen"})
        for listen in payload:
            meta = listen.get("track_metadata") or {}
            if not meta.get("artist_name") or not meta.get("track_name"):
                return self.answer(400, {"code": 400, "error": "artist_name and track_name needed"})
            if kind == "playing_now" and "listened_at" in listen:
                return self.answer(400, {"code": 400, "error": "playing_now takes no listened_at"})
            if kind != "playing_now" and not isinstance(listen.get("listened_at"), int):
                return self.answer(400, {"code": 400, "error": "listened_at must be an integer"})
        if kind != "playing_now":
            for listen in payload:
                meta = listen["track_metadata"]
                record("taken.jsonl", {"service": "listenbrainz", "listened_at": listen["listened_at"],
                                       "artist": meta["artist_name"], "track": meta["track_name"],
                                       "album": meta.get("release_name")})
        self.answer(200, {"status": "ok"})

    # Last.fm: https://www.last.fm/api (2.0, desktop authentication, track.scrobble)
    def lastfm(self, body):
        mode = modes["fm"]
        params = dict(urllib.parse.parse_qsl(body.decode(), keep_blank_values=True))
        record("requests.jsonl", {"service": "lastfm", "mode": mode, "params": params})
        if mode == "hang":
            return self.hang()
        if mode == "down":
            return self.answer(200, {"error": 16, "message": "There was a temporary error processing your request."})
        if params.get("api_key") != API_KEY:
            return self.answer(403, {"error": 10, "message": "Invalid API key"})
        signed = "".join(k + v for k, v in sorted(params.items()) if k not in ("format", "callback", "api_sig"))
        if hashlib.md5((signed + SECRET).encode()).hexdigest() != params.get("api_sig"):
            return self.answer(403, {"error": 13, "message": "Invalid method signature supplied"})
        method = params.get("method")
        if method == "auth.getToken":
            token = "token-%d" % (len(tokens) + 1)
            tokens[token] = False
            return self.answer(200, {"token": token})
        if method == "auth.getSession":
            if not tokens.get(params.get("token")):
                return self.answer(403, {"error": 14, "message": "Unauthorized Token - This token has not been authorized"})
            return self.answer(200, {"session": {"name": "tester", "key": SESSION_KEY, "subscriber": 0}})
        if params.get("sk") != SESSION_KEY or mode == "refuse":
            return self.answer(403, {"error": 9, "message": "Invalid session key - Please re-authenticate"})
        if method == "track.updateNowPlaying":
            if not params.get("artist") or not params.get("track"):
                return self.answer(400, {"error": 6, "message": "Invalid parameters"})
            return self.answer(200, {"nowplaying": {"track": {"#text": params["track"]}}})
        if method == "track.scrobble":
            i = 0
            while "artist[%d]" % i in params:
                if not params.get("track[%d]" % i) or not params.get("timestamp[%d]" % i, "").isdigit():
                    return self.answer(400, {"error": 6, "message": "Invalid parameters"})
                i += 1
            if i == 0 or i > 50:
                return self.answer(400, {"error": 6, "message": "Invalid parameters"})
            for n in range(i):
                record("taken.jsonl", {"service": "lastfm", "listened_at": int(params["timestamp[%d]" % n]),
                                       "artist": params["artist[%d]" % n], "track": params["track[%d]" % n],
                                       "album": params.get("album[%d]" % n)})
            return self.answer(200, {"scrobbles": {"@attr": {"accepted": i, "ignored": 0}, "scrobble": []}})
        return self.answer(400, {"error": 3, "message": "Invalid Method"})


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
with open(os.path.join(folder, "port.tmp"), "w") as f:
    f.write(str(server.server_address[1]))
os.rename(os.path.join(folder, "port.tmp"), os.path.join(folder, "port"))
try:
    server.serve_forever()
except KeyboardInterrupt:
    pass
