"""History database URLs as they may be printed: one masked form, and the secrets to scrub.

``TCBENCH_HISTORY_DB`` (or ``--db``) is a CI secret when it carries a password, and whatever a
history command prints lands in CI logs. So the tools never print the given string: every
message shows ``masked(given)``, and every message from the driver is passed through ``scrub``
with the URL's ``secrets`` first (psycopg and SQLAlchemy can echo a connection parameter, and a
password with an unencoded ``@`` reaches libpq as part of the host name, which its error prints).

What is masked, whatever the string (it need not parse):
- the password of the user info, as ``USER:***@``; a user info that cannot be told apart from its
  password (it holds an ``@`` and no ``:``) is ``***@`` whole. The user info ends at the LAST
  ``@`` before the host: a host name never holds one, so everything before it may be secret,
  whichever ``@`` a parser takes (libpq and SQLAlchemy take the first);
- the value of every password-like query parameter (``password``, ``passwd``, ``pwd``,
  ``sslpassword``, ``token``, and any key holding ``password``, ``passwd``, ``secret`` or
  ``token``), as ``KEY=***``;
- the password wherever else it appears in the URL (a database named like it);
- control characters, escaped (``printable``).

A plain path (no ``://``) is printed as it is, unless it looks like user info
(``user:secret@host/db`` without its scheme), which is masked the same way.
Standard library only: the command line imports it to mask argparse's messages too.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

from tcbench_tools.printable import printable

MASK = "***"
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://", re.ASCII)
# Query keys whose value is a secret: libpq's password and sslpassword, and the usual spellings.
_SECRET_KEYS = frozenset({"password", "passwd", "pwd", "pass", "pw", "sslpassword", "token",
                          "secret", "apikey", "api_key", "auth"})
_SECRET_WORDS = ("password", "passwd", "secret", "token")
# A scheme-less value that starts like user info ("bob:secret@host/db").
_BARE_USERINFO = re.compile(r"[^/@]*:[^/]*@")
# A URL inside a longer message (argparse quotes the arguments it refuses); a final . , : ; )
# is the sentence's, not the URL's.
_URL_IN_TEXT = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"]*?(?=[.,:;)]*(?:[\s'\"]|$))",
                          re.ASCII)
_SHORT = 4  # secrets shorter than this are scrubbed only where they stand alone


def secret_key(key: str) -> bool:
    """Whether a query parameter's value is a secret."""
    k = unquote(key).strip().lower()
    return k in _SECRET_KEYS or any(w in k for w in _SECRET_WORDS)


def looks_like_userinfo(given: str) -> bool:
    """A value without ``://`` whose start reads as ``user:secret@``: a URL missing its scheme."""
    return "://" not in given and bool(_BARE_USERINFO.match(given))


def _parts(given: str) -> tuple[str, str | None, str]:
    """(everything up to the user info, the user info or None, the rest) of ``given``."""
    m = _SCHEME.match(given)
    if m is None or given[m.end():].startswith("/"):
        # A path, or scheme:///path (no authority). But "bob:secret@host/db",
        # "postgresql:/bob:secret@host" and "postgresql:///x:secret@h" are URLs gone wrong, or
        # paths that hold ':' and '@'; whichever, what lies between the two may be a password.
        offset = 0 if m is None else m.end()
        at = given.rfind("@")
        colon = given.find(":", offset, max(at, 0))
        if at < 0 or colon < 0:
            return given[:offset], None, given[offset:]
        start = max(given.rfind("/", 0, colon) + 1, offset)
        return given[:start], given[start:at], given[at + 1:]
    rest = given[m.end():]
    at = rest.rfind("@")
    if at < 0:
        return given[:m.end()], None, rest
    return given[:m.end()], rest[:at], rest[at + 1:]


def _masked_userinfo(userinfo: str, hidden: list[str]) -> str:
    user, colon, _ = userinfo.partition(":")
    if colon and "@" not in user:
        return f"{scrub(user, hidden)}:{MASK}"  # (a user named like the password: masked)
    if not colon and "@" not in userinfo:
        return userinfo  # a user name alone
    return MASK


def _masked_query(rest: str) -> str:
    q = rest.find("?")
    if q < 0:
        return rest
    head, query = rest[:q + 1], rest[q + 1:]
    fragment = ""
    if "#" in query:
        query, fragment = query.split("#", 1)
        fragment = "#" + fragment
    items = []
    for item in query.split("&"):
        key, eq, _ = item.partition("=")
        items.append(f"{key}={MASK}" if eq and secret_key(key) else item)
    return head + "&".join(items) + fragment


def masked(given: str) -> str:
    """The one form of a database URL (or path) that the tools print (a secret that appears
    again elsewhere in it, as the database name, say, is masked there too)."""
    head, userinfo, rest = _parts(given)
    hidden = secrets(given)
    rest = scrub(_masked_query(rest), hidden)
    text = head + ("" if userinfo is None else _masked_userinfo(userinfo, hidden) + "@") + rest
    return printable(text)


def secrets(given: str) -> list[str]:
    """Every part of ``given`` that must never be printed, as written and percent-decoded,
    longest first: the password under either reading of the user info (up to the first or the
    last ``@``), the values of password-like query parameters, and the pieces an unencoded
    ``@``, ``:`` or ``/`` splits a password into (those of 3 characters or more that hold a letter
    or digit: a lone ``&`` is no secret worth eating every ``&`` of a message for)."""
    whole: set[str] = set()
    pieces: set[str] = set()
    head, userinfo, rest = _parts(given)
    if userinfo is not None:
        user, colon, password = userinfo.partition(":")
        if colon:
            whole.add(password)
            pieces.update(re.split(r"[@:/]", password))
        elif "@" in userinfo:
            whole.add(userinfo)
            pieces.update(userinfo.split("@"))
        tail = given[len(head):]
        first_at = tail.find("@")
        if first_at >= 0:  # libpq's and SQLAlchemy's reading: the user info ends at the first @
            _, colon, password = tail[:first_at].partition(":")
            if colon:
                whole.add(password)
    for text in (rest, given):
        q = text.find("?")
        if q < 0:
            continue
        for item in text[q + 1:].split("#", 1)[0].split("&"):
            key, eq, value = item.partition("=")
            if eq and secret_key(key):
                whole.add(value)
    pieces = {s for s in pieces if len(s) >= 3 and any(c.isalnum() for c in s)}
    out = set()
    for s in whole | pieces:
        for form in (s, unquote(s)):
            if form and form != MASK:
                out.add(form)
    return sorted(out, key=lambda s: (-len(s), s))


def scrub(text: str, hidden: list[str]) -> str:
    """``text`` with every occurrence of every secret replaced by ``***``; where two overlap,
    their union is (a secret shorter than 4 characters counts only where it stands alone, so
    that a one-letter password does not eat every word)."""
    spans = []
    for s in hidden:
        pattern = re.escape(s) if len(s) >= _SHORT else \
            rf"(?<![A-Za-z0-9]){re.escape(s)}(?![A-Za-z0-9])"
        spans += [m.span() for m in re.finditer(pattern, text)]
    if not spans:
        return text
    out, at = [], 0
    for begin, end in sorted(spans):
        if begin > at or not out:
            out.append(text[at:begin])
            out.append(MASK)
        at = max(at, end)
    out.append(text[at:])
    return "".join(out)


def mask_urls_in(text: str) -> str:
    """A message with every URL in it masked (argparse echoes the arguments it refuses)."""
    return _URL_IN_TEXT.sub(lambda m: masked(m.group(0)), text)
