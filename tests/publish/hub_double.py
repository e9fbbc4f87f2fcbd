"""A local HTTP TEST DOUBLE of the Hugging Face Hub's API. Not the Hub.

Why it exists: no Hub is reachable from this machine or from CI, and pushing is the
one part of the pipeline that talks to a service we cannot run offline. So the push
code is tested with the real `huggingface_hub` client pointed (via `endpoint=`) at
this double, and the real consumer (`snapshot_download` + `datasets.load_dataset`)
reads back what was pushed.

It implements only the endpoints huggingface_hub 2.x calls for our use:
repo create, README YAML validation, repo info (+ revision), preupload (upload
modes + remote oids), the git-LFS batch API with "basic" single-PUT uploads, the
NDJSON commit endpoint (inline base64 files, LFS pointers, deletions,
`parentCommit` check), tree listing, paths-info, refs, tags, commit listing and
resolve/download. Xet is not implemented: callers disable it
(`huggingface_hub.constants.HF_HUB_DISABLE_XET = True`) and fall back to LFS.

Storage is in memory: content-addressed blobs, commits as full path -> blob maps,
branch and tag refs. Failure injection (`fail_next_commits`) lets tests crash a
push after its uploads and check that the retry uploads nothing again.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Self
from urllib.parse import parse_qs, unquote, urlparse

LFS_SUFFIXES = (".parquet", ".png", ".arrow", ".bin", ".safetensors")
LFS_MIN_SIZE = 10 * 1024 * 1024  # the Hub stores big files in LFS whatever their type
GITATTRIBUTES = (
    b"*.parquet filter=lfs diff=lfs merge=lfs -text\n*.png filter=lfs diff=lfs merge=lfs -text\n"
)


def git_sha1(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass(frozen=True)
class Blob:
    size: int
    git_oid: str  # git blob id (for LFS files, the id of the pointer file)
    lfs_sha256: str | None  # set when stored in LFS
    data_key: str  # key into the content store


@dataclass
class Commit:
    oid: str
    parent: str | None
    title: str
    files: dict[str, Blob]
    date: str


@dataclass
class Repo:
    repo_type: str
    repo_id: str
    private: bool
    commits: dict[str, Commit] = field(default_factory=dict)
    branches: dict[str, str] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)

    def resolve(self, rev: str) -> Commit | None:
        rev = unquote(rev)
        oid = self.branches.get(rev) or self.tags.get(rev) or (rev if rev in self.commits else None)
        return self.commits.get(oid) if oid else None


class HubState:
    def __init__(self, token: str | None):
        self.token = token
        self.repos: dict[tuple[str, str], Repo] = {}
        self.content: dict[str, bytes] = {}  # data_key -> bytes
        self.lfs: set[str] = set()  # sha256 of uploaded LFS objects
        self.lock = threading.Lock()
        self.requests: list[tuple[str, str]] = []  # (method, path): never headers, never tokens
        self.lfs_puts: list[str] = []  # sha256 of every LFS object uploaded
        self.fail_next_commits = 0
        self.auth_seen: set[bool] = set()  # did write requests carry the expected token?

    def store(self, data: bytes) -> str:
        key = hashlib.sha256(data).hexdigest()
        self.content[key] = data
        return key


class _Error(Exception):
    def __init__(self, status: int, message: str, **extra: object):
        self.status, self.message, self.extra = status, message, extra


_REPO = r"(?P<t>models|datasets|spaces)/(?P<repo>[^/]+/[^/]+?)"
ROUTES: list[tuple[str, re.Pattern[str], str]] = [
    ("POST", re.compile(r"^/api/repos/create$"), "create_repo"),
    ("POST", re.compile(r"^/api/validate-yaml$"), "validate_yaml"),
    ("POST", re.compile(rf"^/api/{_REPO}/preupload/(?P<rev>[^/]+)$"), "preupload"),
    ("POST", re.compile(rf"^/api/{_REPO}/commit/(?P<rev>[^/]+)$"), "commit"),
    ("POST", re.compile(rf"^/api/{_REPO}/paths-info/(?P<rev>[^/]+)$"), "paths_info"),
    ("POST", re.compile(rf"^/api/{_REPO}/tag/(?P<rev>[^/]+)$"), "create_tag"),
    ("GET", re.compile(rf"^/api/{_REPO}/refs$"), "refs"),
    ("GET", re.compile(rf"^/api/{_REPO}/commits/(?P<rev>[^/]+)$"), "commits"),
    ("GET", re.compile(rf"^/api/{_REPO}/tree/(?P<rev>[^/]+)(?:/(?P<path>.*))?$"), "tree"),
    ("GET", re.compile(rf"^/api/{_REPO}/revision/(?P<rev>[^/]+)$"), "repo_info"),
    ("GET", re.compile(rf"^/api/{_REPO}$"), "repo_info"),
    ("POST", re.compile(rf"^/{_REPO}\.git/info/lfs/objects/batch$"), "lfs_batch"),
    ("PUT", re.compile(r"^/_lfs/(?P<oid>[0-9a-f]{64})$"), "lfs_put"),
    ("GET", re.compile(rf"^/{_REPO}/resolve/(?P<rev>[^/]+)/(?P<path>.+)$"), "resolve"),
    ("HEAD", re.compile(rf"^/{_REPO}/resolve/(?P<rev>[^/]+)/(?P<path>.+)$"), "resolve"),
    (
        "GET",
        re.compile(r"^/(?P<repo>[^/]+/[^/]+?)/resolve/(?P<rev>[^/]+)/(?P<path>.+)$"),
        "resolve_model",
    ),
    (
        "HEAD",
        re.compile(r"^/(?P<repo>[^/]+/[^/]+?)/resolve/(?P<rev>[^/]+)/(?P<path>.+)$"),
        "resolve_model",
    ),
]
# lfs_put stands for the storage URL the Hub hands out, which carries no token.
WRITE_HANDLERS = {"create_repo", "preupload", "commit", "create_tag", "lfs_batch", "lfs_put"}


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")


class HubDouble:
    """Run with `with HubDouble(token=...) as hub:`; `hub.endpoint` is the base URL."""

    def __init__(self, token: str | None = None, host: str = "127.0.0.1"):
        self.state = HubState(token)
        state = self.state

        class Handler(_Handler):
            hub = state

        self._server = ThreadingHTTPServer((host, 0), Handler)
        self.endpoint = f"http://{host}:{self._server.server_address[1]}"
        Handler.endpoint = self.endpoint
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def repo(self, repo_id: str, repo_type: str = "dataset") -> Repo:
        return self.state.repos[(repo_type + "s", repo_id)]


class _Handler(BaseHTTPRequestHandler):
    hub: HubState
    endpoint: str
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:  # keep test output clean
        pass

    # ---- plumbing -------------------------------------------------------------------
    def _dispatch(self, method: str) -> None:
        url = urlparse(self.path)
        self.query = parse_qs(url.query)
        self.hub.requests.append((method, url.path))
        for m, pattern, name in ROUTES:
            match = pattern.match(url.path) if m == method else None
            if not match:
                continue
            try:
                if name in WRITE_HANDLERS - {"lfs_put"} and self.hub.token is not None:
                    ok = self.headers.get("authorization") == f"Bearer {self.hub.token}"
                    self.hub.auth_seen.add(ok)
                    if not ok:
                        raise _Error(401, "Invalid credentials in Authorization header")
                with self.hub.lock:
                    getattr(self, "h_" + name)(**match.groupdict())
            except _Error as e:
                self._json(
                    {"error": e.message, **e.extra},
                    e.status,
                    headers={"X-Error-Message": e.message},
                )
            return
        self._json({"error": f"test double: no route for {method} {url.path}"}, 404)

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_HEAD(self) -> None:
        self._dispatch("HEAD")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def do_PUT(self) -> None:
        self._dispatch("PUT")

    def _body(self) -> bytes:
        n = int(self.headers.get("content-length") or 0)
        return self.rfile.read(n) if n else b""

    def _json(self, obj: object, status: int = 200, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _repo(self, t: str, repo: str) -> Repo:
        r = self.hub.repos.get((t, repo))
        if r is None:
            raise _Error(404, "Repository not found")
        return r

    def _commit(self, repo: Repo, rev: str) -> Commit:
        c = repo.resolve(rev)
        if c is None:
            raise _Error(404, f"Invalid rev id: {unquote(rev)}")
        return c

    def _entry(self, path: str, blob: Blob) -> dict:
        e = {"type": "file", "oid": blob.git_oid, "size": blob.size, "path": path}
        if blob.lfs_sha256:
            e["lfs"] = {"oid": blob.lfs_sha256, "size": blob.size, "pointerSize": 134}
        return e

    def _new_commit(self, repo: Repo, branch: str, title: str, files: dict[str, Blob]) -> Commit:
        parent = repo.branches.get(branch)
        h = hashlib.sha1(f"{parent}\n{title}\n{len(repo.commits)}".encode())
        for p in sorted(files):
            h.update(f"{p}:{files[p].git_oid}\n".encode())
        c = Commit(h.hexdigest(), parent, title, files, _now())
        repo.commits[c.oid] = c
        repo.branches[branch] = c.oid
        return c

    # ---- handlers -------------------------------------------------------------------
    def h_create_repo(self) -> None:
        p = json.loads(self._body())
        repo_id = f"{p.get('organization') or 'user'}/{p['name']}"
        t = (p.get("type") or "model") + "s"
        url = f"{self.endpoint}/{'' if t == 'models' else t + '/'}{repo_id}"
        if (t, repo_id) in self.hub.repos:
            raise _Error(409, "You already created this repo", url=url)
        repo = Repo(t, repo_id, private=p.get("visibility") == "private")
        self.hub.repos[(t, repo_id)] = repo
        key = self.hub.store(GITATTRIBUTES)
        blob = Blob(len(GITATTRIBUTES), git_sha1(GITATTRIBUTES), None, key)
        self._new_commit(repo, "main", "initial commit", {".gitattributes": blob})
        self._json({"url": url, "name": repo_id})

    def h_validate_yaml(self) -> None:
        self._body()
        self._json({"errors": [], "warnings": []})

    def h_repo_info(self, t: str, repo: str, rev: str = "main") -> None:
        r = self._repo(t, repo)
        c = self._commit(r, rev)
        self._json(
            {
                "id": repo,
                "sha": c.oid,
                "private": r.private,
                "lastModified": c.date,
                "tags": [],
                "siblings": [{"rfilename": p} for p in sorted(c.files)],
                "downloads": 0,
                "likes": 0,
            }
        )

    def h_preupload(self, t: str, repo: str, rev: str) -> None:
        r = self._repo(t, repo)
        c = self._commit(r, rev)
        files = []
        for f in json.loads(self._body())["files"]:
            lfs = f["path"].endswith(LFS_SUFFIXES) or f["size"] >= LFS_MIN_SIZE
            blob = c.files.get(f["path"])
            oid = None
            if blob is not None:  # what the client compares with its local oid
                oid = blob.lfs_sha256 if blob.lfs_sha256 else blob.git_oid
            files.append(
                {
                    "path": f["path"],
                    "uploadMode": "lfs" if lfs else "regular",
                    "shouldIgnore": False,
                    "oid": oid,
                }
            )
        self._json({"files": files, "commitOid": c.oid})

    def h_lfs_batch(self, t: str, repo: str) -> None:
        self._repo(t, repo)
        objects = []
        for o in json.loads(self._body())["objects"]:
            entry = {"oid": o["oid"], "size": o["size"], "authenticated": True}
            if o["oid"] not in self.hub.lfs:  # already stored: no action, the client skips it
                entry["actions"] = {"upload": {"href": f"{self.endpoint}/_lfs/{o['oid']}"}}
            objects.append(entry)
        self._json({"transfer": "basic", "objects": objects})

    def h_lfs_put(self, oid: str) -> None:
        data = self._body()
        if hashlib.sha256(data).hexdigest() != oid:
            raise _Error(400, "sha256 mismatch")
        self.hub.store(data)
        self.hub.lfs.add(oid)
        self.hub.lfs_puts.append(oid)
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def h_commit(self, t: str, repo: str, rev: str) -> None:
        r = self._repo(t, repo)
        branch = unquote(rev)
        head = self._commit(r, branch)
        lines = [json.loads(line) for line in self._body().splitlines() if line.strip()]
        if self.hub.fail_next_commits > 0:
            self.hub.fail_next_commits -= 1
            raise _Error(500, "test double: injected commit failure")
        header = next(x["value"] for x in lines if x["key"] == "header")
        parent = header.get("parentCommit")
        if parent and not head.oid.startswith(parent):
            raise _Error(412, f"parent commit {parent} is not the head of {branch} ({head.oid})")
        files = dict(head.files)
        for item in lines:
            key, v = item["key"], item["value"]
            if key == "file":
                data = base64.b64decode(v["content"])
                files[v["path"]] = Blob(len(data), git_sha1(data), None, self.hub.store(data))
            elif key == "lfsFile":
                if v["oid"] not in self.hub.lfs:
                    raise _Error(422, f"LFS object {v['oid']} for {v['path']} was never uploaded")
                size = len(self.hub.content[v["oid"]])
                pointer = f"version https://git-lfs.github.com/spec/v1\noid sha256:{v['oid']}\nsize {size}\n"
                files[v["path"]] = Blob(size, git_sha1(pointer.encode()), v["oid"], v["oid"])
            elif key == "deletedFile":
                if files.pop(v["path"], None) is None:
                    raise _Error(404, f"A file with this name doesn't exist: {v['path']}")
            elif key == "deletedFolder":
                prefix = v["path"].rstrip("/") + "/"
                for p in [p for p in files if p.startswith(prefix)]:
                    del files[p]
        c = self._new_commit(r, branch, header["summary"], files)
        prefix = "" if t == "models" else t + "/"
        self._json(
            {
                "success": True,
                "commitOid": c.oid,
                "pullRequestUrl": None,
                "commitUrl": f"{self.endpoint}/{prefix}{repo}/commit/{c.oid}",
            }
        )

    def h_tree(self, t: str, repo: str, rev: str, path: str | None = None) -> None:
        c = self._commit(self._repo(t, repo), rev)
        base = (unquote(path).strip("/") + "/") if path else ""
        recursive = self.query.get("recursive", ["false"])[0].lower() in ("1", "true")
        out, dirs = [], set()
        for p in sorted(c.files):
            if not p.startswith(base):
                continue
            rest = p[len(base) :]
            parts = rest.split("/")
            for i in range(1, len(parts)):  # the folders on the way
                d = base + "/".join(parts[:i])
                if (recursive or i == 1) and d not in dirs:
                    dirs.add(d)
                    out.append(
                        {
                            "type": "directory",
                            "oid": hashlib.sha1(d.encode()).hexdigest(),
                            "size": 0,
                            "path": d,
                        }
                    )
            if recursive or len(parts) == 1:
                out.append(self._entry(p, c.files[p]))
        self._json(out)

    def h_paths_info(self, t: str, repo: str, rev: str) -> None:
        c = self._commit(self._repo(t, repo), rev)
        body = self._body()
        ctype = self.headers.get("content-type", "")
        if "json" in ctype:
            paths = json.loads(body).get("paths", [])
        else:
            paths = parse_qs(body.decode()).get("paths", [])
        self._json([self._entry(p, c.files[p]) for p in paths if p in c.files])

    def h_refs(self, t: str, repo: str) -> None:
        r = self._repo(t, repo)

        def ref(kind: str, name: str, oid: str) -> dict:
            return {"name": name, "ref": f"refs/{kind}/{name}", "targetCommit": oid}

        self._json(
            {
                "branches": [ref("heads", n, o) for n, o in sorted(r.branches.items())],
                "tags": [ref("tags", n, o) for n, o in sorted(r.tags.items())],
                "converts": [],
                "pullRequests": [],
            }
        )

    def h_create_tag(self, t: str, repo: str, rev: str) -> None:
        r = self._repo(t, repo)
        c = self._commit(r, rev)
        tag = json.loads(self._body())["tag"]
        if tag in r.tags:
            raise _Error(409, f"Tag {tag} already exists")
        r.tags[tag] = c.oid
        self._json({"success": True})

    def h_commits(self, t: str, repo: str, rev: str) -> None:
        r = self._repo(t, repo)
        c: Commit | None = self._commit(r, rev)
        out = []
        while c is not None:
            out.append(
                {
                    "id": c.oid,
                    "title": c.title,
                    "message": "",
                    "date": c.date,
                    "authors": [{"user": "double"}],
                }
            )
            c = r.commits.get(c.parent) if c.parent else None
        self._json(out)

    def h_resolve_model(self, repo: str, rev: str, path: str) -> None:
        self.h_resolve("models", repo, rev, path)

    def h_resolve(self, t: str, repo: str, rev: str, path: str) -> None:
        c = self._commit(self._repo(t, repo), rev)
        path = unquote(path)
        blob = c.files.get(path)
        if blob is None:
            raise _Error(404, "Entry not found")
        data = self.hub.content[blob.data_key]
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("X-Repo-Commit", c.oid)
        self.send_header("ETag", f'"{blob.git_oid}"')
        if blob.lfs_sha256:
            self.send_header("X-Linked-Etag", f'"{blob.lfs_sha256}"')
            self.send_header("X-Linked-Size", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)
