"""HTTP clients of the benches, standard library only.

Client: one keep-alive HTTP/1.1 connection, as an agent or a browser holds (a bearer token when
given). Api: a token's requests, each on a connection of its own, as a CLI sends them; transport
errors (a timeout, a refused connection) raise. call(): one request on a connection of its own
that never raises, for probes (a server being restarted or under attack)."""

import http.client
import json
import urllib.parse


class Client:
    """One keep-alive connection to 127.0.0.1:port. `who` names the server in errors."""

    def __init__(self, port, token=None, timeout=60, who=""):
        self.port = port
        self.token = token
        self.timeout = timeout
        self.who = who
        self.conn = None

    def call(self, method, path, body=None, raw=None, timeout=None, query=None):
        """(status, parsed JSON or text). `raw`: an already encoded JSON body."""
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
        if query:
            path += "?" + urllib.parse.urlencode(query)
        headers = {"Authorization": "Bearer " + self.token} if self.token else {}
        if data is not None:
            headers["Content-Type"] = "application/json"
        for attempt in (1, 2):
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port,
                                                       timeout=timeout or self.timeout)
            try:
                self.conn.request(method, path, body=data, headers=headers)
                r = self.conn.getresponse()
                text = r.read()
                break
            except (ConnectionError, http.client.RemoteDisconnected, http.client.BadStatusLine):
                # The server closed an idle keep-alive connection: send once more on a new one.
                self.conn.close()
                self.conn = None
                if attempt == 2:
                    raise
        if r.getheader("Connection", "").lower() == "close":
            self.conn.close()
            self.conn = None
        if "json" in r.getheader("Content-Type", "") and text:
            return r.status, json.loads(text)
        return r.status, text.decode(errors="replace")

    def require(self, method, path, body=None, status=(200,), raw=None, query=None):
        code, out = self.call(method, path, body, raw=raw, query=query)
        if code not in status:
            who = f"{self.who} " if self.who else ""
            raise RuntimeError(f"{who}{method} {path} -> {code}: {str(out)[:500]}")
        return out

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None


class Api:
    """Requests to `base` (http://host:port) with a bearer token, each on a new connection."""

    def __init__(self, base, token):
        self.base = base
        self.token = token

    def call(self, method, path, body=None, timeout=30):
        """(status, parsed JSON, text, or None for an empty body); OSError when no answer."""
        u = urllib.parse.urlsplit(self.base)
        c = http.client.HTTPConnection(u.hostname, u.port, timeout=timeout)
        headers = {"Authorization": "Bearer " + self.token}
        data = None if body is None else json.dumps(body).encode()
        if data is not None:
            headers["Content-Type"] = "application/json"
        try:
            c.request(method, path, body=data, headers=headers)
            r = c.getresponse()
            text = r.read().decode(errors="replace")
        finally:
            c.close()
        if not text:
            return r.status, None
        try:
            return r.status, json.loads(text)
        except ValueError:
            return r.status, text

    def require(self, method, path, body=None, status=(200,)):
        code, out = self.call(method, path, body)
        if code not in status:
            raise RuntimeError(f"{method} {path} -> {code}: {out}")
        return out


def call(base, method, path, body=None, token=None, timeout=10, headers=None):
    """One request on a new connection to `base` (http://host:port): (status, parsed JSON or
    None, raw bytes, lower-cased headers); status 0 and the error as bytes when no answer."""
    u = urllib.parse.urlsplit(base)
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=timeout)
    h = dict(headers or {})
    if token:
        h["Authorization"] = "Bearer " + token
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        h["Content-Type"] = "application/json"
    try:
        c.request(method, path, body=data, headers=h)
        r = c.getresponse()
        raw = r.read()
        try:
            j = json.loads(raw) if raw else None
        except ValueError:
            j = None
        return r.status, j, raw, {k.lower(): v for k, v in r.getheaders()}
    except (OSError, http.client.HTTPException) as e:
        return 0, None, str(e).encode(), {}
    finally:
        c.close()
