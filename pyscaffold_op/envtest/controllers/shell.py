"""A tiny POSIX sh, enough to say what a container's `sh -c '...'` script prints, when, and how it ends:
the simulated kubelet's made-up logs and exit codes.

Simulated (busybox sh semantics where shells differ):
- lists `;` `&&` `||` `&` (background runs inline) and newlines, `!`, pipelines (the last command's
  output is what is seen), `{ ...; }`, `( ... )`, `if/elif/else/fi`, `while`/`until ... do ... done`,
  `for NAME [in WORDS]; do ... done`, `break`, `continue`, comments;
- words: single and double quotes, backslashes, `$VAR`, `${VAR}`, `${VAR:-word}`, `${VAR-word}`,
  `${VAR:=word}`, `${#VAR}`, `$?`, `$$`, `$#`, `$0`..`$9`, `$@`/`$*`, `$(...)` and backticks,
  `$((...))` arithmetic (+ - * / % and comparisons on integers and variables), field splitting of
  unquoted expansions; assignments `A=1`, `export`, `unset`, `local`;
- commands: `echo` (busybox: `-n`, `-e`), `printf` (%s %d %i %x %o %c %%, width and `-`), `sleep`
  (s/m/h/d suffixes, fractions, `infinity`), `true`, `false`, `:`, `exit`, `return`, `test`/`[`
  (strings and integers; file tests are false), `seq`, `date`, `hostname`, `env`/`printenv`, `exec`,
  `tail -f` and `sleep infinity` (never end); output redirected to a file or /dev/null is not logged.

Not simulated (a command that is none of the above prints nothing and succeeds): files, pipes between
commands, `read`, traps and signals, functions, `case`, globbing, here-documents, job control, bash
extensions. Time is virtual: `sleep 5` advances the script's clock, and the simulated kubelet decides
what part of it to wait for in real time.
"""

from __future__ import annotations

import ast
import operator
import re
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

MAX_STEPS = 200_000  # commands run without any output or sleep: a busy loop, taken for a hang
INFINITY = float("inf")


class ShellError(Exception):
    """A script this shell cannot parse (it then prints nothing and exits 2, as sh does)."""


# -- words and tokens ---------------------------------------------------------------------------------


@dataclass
class Part:
    kind: str  # "lit" (unquoted), "sq" (single-quoted), "dq" (double-quoted)
    text: str


@dataclass
class Word:
    parts: list[Part]

    @property
    def plain(self) -> str | None:
        """The word's text if it is a single unquoted literal (keywords, operators of test)."""
        if len(self.parts) == 1 and self.parts[0].kind == "lit":
            return self.parts[0].text
        return None


_OPERATORS = ("&&", "||", ";;", ">>", "<<", ">&", "<&", "&>", ";", "&", "|", "(", ")", "<", ">", "\n")


def _scan_dollar(text: str, i: int) -> int:
    """The end of a `$(...)`, `$((...))` or `${...}` starting at text[i] == '$'."""
    opener = text[i + 1]
    close = ")" if opener == "(" else "}"
    depth, j = 0, i + 1
    quote = ""
    while j < len(text):
        c = text[j]
        if quote:
            if c == "\\" and quote == '"':
                j += 2
                continue
            if c == quote:
                quote = ""
        elif c in "'\"":
            quote = c
        elif c == "\\":
            j += 2
            continue
        elif c == opener:
            depth += 1
        elif c == close:
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1
    raise ShellError("syntax error: unterminated " + opener)


def tokenize(text: str) -> list[Word | str]:
    """Words (kept with their quoting) and operator strings."""
    out: list[Word | str] = []
    i, n = 0, len(text)
    parts: list[Part] = []
    started = False

    def flush() -> None:
        nonlocal parts, started
        if started:
            out.append(Word(parts))
        parts, started = [], False

    def lit(s: str) -> None:
        nonlocal started
        started = True
        if parts and parts[-1].kind == "lit":
            parts[-1].text += s
        else:
            parts.append(Part("lit", s))

    while i < n:
        c = text[i]
        if c in " \t":
            flush()
            i += 1
        elif c == "#" and not started:
            while i < n and text[i] != "\n":
                i += 1
        elif c == "\\":
            if i + 1 < n and text[i + 1] == "\n":
                i += 2
                continue
            lit(text[i : i + 2])
            i += 2
        elif c == "'":
            j = text.find("'", i + 1)
            if j < 0:
                raise ShellError("syntax error: unterminated quoted string")
            started = True
            parts.append(Part("sq", text[i + 1 : j]))
            i = j + 1
        elif c == '"':
            j, buf = i + 1, []
            while j < n and text[j] != '"':
                if text[j] == "\\" and j + 1 < n:
                    buf.append(text[j : j + 2])
                    j += 2
                elif text[j] == "$" and j + 1 < n and text[j + 1] in "({":
                    end = _scan_dollar(text, j)
                    buf.append(text[j:end])
                    j = end
                elif text[j] == "`":
                    end = text.find("`", j + 1)
                    if end < 0:
                        raise ShellError("syntax error: unterminated `")
                    buf.append(text[j : end + 1])
                    j = end + 1
                else:
                    buf.append(text[j])
                    j += 1
            if j >= n:
                raise ShellError("syntax error: unterminated quoted string")
            started = True
            parts.append(Part("dq", "".join(buf)))
            i = j + 1
        elif c == "$" and i + 1 < n and text[i + 1] in "({":
            end = _scan_dollar(text, i)
            lit(text[i:end])
            i = end
        elif c == "`":
            end = text.find("`", i + 1)
            if end < 0:
                raise ShellError("syntax error: unterminated `")
            lit(text[i : end + 1])
            i = end + 1
        else:
            op = next((o for o in _OPERATORS if text.startswith(o, i)), None)
            if op is not None:
                # a redirection's file descriptor (2>&1) belongs to the operator
                if (
                    op[0] in "<>"
                    and started
                    and len(parts) == 1
                    and parts[0].kind == "lit"
                    and parts[0].text.isdigit()
                ):
                    fd = parts[0].text
                    parts, started = [], False
                    out.append(fd + op)
                else:
                    flush()
                    out.append(op)
                i += len(op)
            else:
                lit(c)
                i += 1
    flush()
    return out


# -- the syntax tree --------------------------------------------------------------------------------


@dataclass
class Simple:
    assigns: list[tuple[str, Word]]
    words: list[Word]
    quiet: bool = False  # stdout goes to a file or /dev/null


@dataclass
class Pipeline:
    commands: list[Any]
    negate: bool = False


@dataclass
class AndOr:
    first: Any
    rest: list[tuple[str, Any]]


@dataclass
class Seq:
    items: list[Any] = field(default_factory=list)


@dataclass
class Loop:
    until: bool
    cond: Seq
    body: Seq


@dataclass
class For:
    name: str
    words: list[Word] | None
    body: Seq


@dataclass
class If:
    branches: list[tuple[Seq, Seq]]
    otherwise: Seq | None


@dataclass
class Group:
    body: Seq
    subshell: bool


_ASSIGN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_RESERVED_ENDS = {"do", "done", "then", "elif", "else", "fi", "}"}


class _Parser:
    def __init__(self, tokens: list[Word | str]) -> None:
        self.toks = tokens
        self.i = 0

    def peek(self) -> Word | str | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def keyword(self) -> str | None:
        tok = self.peek()
        return tok.plain if isinstance(tok, Word) else None

    def take(self) -> Word | str:
        tok = self.toks[self.i]
        self.i += 1
        return tok

    def expect(self, kw: str) -> None:
        if self.keyword() != kw and self.peek() != kw:
            raise ShellError(f"syntax error: expected {kw}")
        self.i += 1

    def skip_separators(self) -> None:
        while self.peek() in (";", "\n", "&"):
            self.i += 1

    def seq(self, ends: set[str]) -> Seq:
        out = Seq()
        self.skip_separators()
        while self.peek() is not None and self.keyword() not in ends and self.peek() != ")":
            out.items.append(self.and_or())
            if self.peek() in (";", "\n", "&"):
                self.skip_separators()
            elif self.peek() is not None and self.keyword() not in ends and self.peek() != ")":
                raise ShellError(f"syntax error near {self.peek()!r}")
        return out

    def and_or(self) -> AndOr:
        first = self.pipeline()
        rest = []
        while self.peek() in ("&&", "||"):
            op = str(self.take())
            while self.peek() == "\n":
                self.i += 1
            rest.append((op, self.pipeline()))
        return AndOr(first, rest)

    def pipeline(self) -> Pipeline:
        negate = False
        if self.keyword() == "!":
            self.i += 1
            negate = True
        commands = [self.command()]
        while self.peek() == "|":
            self.i += 1
            commands.append(self.command())
        return Pipeline(commands, negate)

    def command(self) -> Any:
        kw = self.keyword()
        tok = self.peek()
        if kw in ("while", "until"):
            self.i += 1
            cond = self.seq({"do"})
            self.expect("do")
            body = self.seq({"done"})
            self.expect("done")
            return self._redirected(Loop(kw == "until", cond, body))
        if kw == "for":
            self.i += 1
            name_tok = self.take()
            name = name_tok.plain if isinstance(name_tok, Word) else None
            if not name:
                raise ShellError("syntax error: bad for loop variable")
            words: list[Word] | None = None
            while self.peek() == "\n":
                self.i += 1
            if self.keyword() == "in":
                self.i += 1
                words = []
                while isinstance(self.peek(), Word):
                    words.append(self.take())  # type: ignore[arg-type]
            self.skip_separators()
            self.expect("do")
            body = self.seq({"done"})
            self.expect("done")
            return self._redirected(For(name, words, body))
        if kw == "if":
            self.i += 1
            branches = []
            cond = self.seq({"then"})
            self.expect("then")
            branches.append((cond, self.seq({"elif", "else", "fi"})))
            otherwise = None
            while self.keyword() == "elif":
                self.i += 1
                cond = self.seq({"then"})
                self.expect("then")
                branches.append((cond, self.seq({"elif", "else", "fi"})))
            if self.keyword() == "else":
                self.i += 1
                otherwise = self.seq({"fi"})
            self.expect("fi")
            return self._redirected(If(branches, otherwise))
        if kw == "{":
            self.i += 1
            body = self.seq({"}"})
            self.expect("}")
            return self._redirected(Group(body, False))
        if tok == "(":
            self.i += 1
            body = self.seq(set())
            self.expect(")")
            return self._redirected(Group(body, True))
        return self.simple()

    def _redirected(self, node: Any) -> Any:
        """A compound command and its redirections: quiet when its stdout goes to a file."""
        quiet = False
        while self._is_redirection(self.peek()):
            quiet = self._redirect(quiet)
        return _Quiet(node) if quiet else node

    @staticmethod
    def _is_redirection(tok: Word | str | None) -> bool:
        return isinstance(tok, str) and re.fullmatch(r"\d*(>>|>&|<&|&>|<<|<|>)", tok) is not None

    def _redirect(self, quiet: bool) -> bool:
        """Take one redirection; whether stdout is then dropped (a file, /dev/null, closed)."""
        tok = str(self.take())
        fd = tok[0] if tok[0].isdigit() else "1"
        op = tok.lstrip("0123456789")
        target = self.take() if isinstance(self.peek(), Word) else None
        dest = target.plain if isinstance(target, Word) else None
        if op == "&>" or (fd == "1" and op in (">", ">>")):
            return dest not in ("/dev/stdout", "/dev/stderr")
        if fd == "1" and op == ">&":
            return dest == "-"
        return quiet

    def simple(self) -> Simple:
        assigns: list[tuple[str, Word]] = []
        words: list[Word] = []
        quiet = False
        while True:
            tok = self.peek()
            if isinstance(tok, Word):
                first = tok.parts[0]
                if not words and first.kind == "lit" and (m := _ASSIGN.match(first.text)):
                    value = Word([Part("lit", first.text[m.end() :]), *tok.parts[1:]])
                    assigns.append((m.group()[:-1], value))
                elif not words and not assigns and tok.plain in _RESERVED_ENDS:
                    break
                else:
                    words.append(tok)
                self.i += 1
            elif self._is_redirection(tok):
                quiet = self._redirect(quiet)
            else:
                break
        if not words and not assigns:
            raise ShellError(f"syntax error near {self.peek()!r}")
        return Simple(assigns, words, quiet)


@dataclass
class _Quiet:
    node: Any


def parse(script: str) -> Seq:
    parser = _Parser(tokenize(script))
    tree = parser.seq(set())
    if parser.peek() is not None:
        raise ShellError(f"syntax error near {parser.peek()!r}")
    return tree


# -- running ---------------------------------------------------------------------------------------

Event = tuple[str, Any]  # ("out", text) or ("sleep", seconds)


class _Exit(Exception):
    def __init__(self, code: int) -> None:
        self.code = code


class _Break(Exception):
    def __init__(self, kind: str, levels: int) -> None:
        self.kind, self.levels = kind, levels


class _Hung(Exception):
    pass


_ARITH_OPS: dict[type, Callable[..., Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Mod: lambda a, b: int(a - b * int(a / b)) if b else 0,
    ast.FloorDiv: lambda a, b: int(a / b) if b else 0,
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
    ast.Not: lambda a: int(not a),
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
}


def _int(text: str) -> int:
    try:
        return int(text.strip() or "0")
    except ValueError:
        return 0


class Shell:
    """One script's run: its variables, positional parameters and last exit status."""

    def __init__(self, env: dict[str, str], args: list[str], start: datetime) -> None:
        self.vars = dict(env)
        self.args = list(args)  # $0, $1, ...
        self.status = 0
        self.start = start
        self.elapsed = 0.0
        self.steps = 0

    # -- expansion ---------------------------------------------------------------------------------

    def _lookup(self, name: str) -> str | None:
        if name == "?":
            return str(self.status)
        if name == "$":
            return "1"
        if name == "#":
            return str(max(len(self.args) - 1, 0))
        if name in ("@", "*"):
            return " ".join(self.args[1:])
        if name.isdigit():
            i = int(name)
            return self.args[i] if i < len(self.args) else None
        return self.vars.get(name)

    def _param(self, body: str) -> Generator[Event, None, str]:
        if body.startswith("#") and len(body) > 1:
            return str(len(self._lookup(body[1:]) or ""))
        m = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*|[0-9?$#@*])(:?[-=+?])?(.*)", body, re.S)
        if not m:
            raise ShellError(f"bad substitution: ${{{body}}}")
        name, op, word = m.group(1), m.group(2), m.group(3)
        value = self._lookup(name)
        if op is None:
            return value or ""
        unset = value is None or (op.startswith(":") and value == "")
        if op.endswith("-"):
            return (yield from self._expand_text(word, quoted=True)) if unset else value or ""
        if op.endswith("="):
            if unset:
                value = yield from self._expand_text(word, quoted=True)
                self.vars[name] = value
            return value or ""
        if op.endswith("+"):
            return "" if unset else (yield from self._expand_text(word, quoted=True))
        return value or ""

    def _arith(self, expr: str) -> Generator[Event, None, str]:
        text = yield from self._expand_text(expr, quoted=True)
        text = re.sub(r"[A-Za-z_][A-Za-z0-9_]*", lambda m: str(_int(self.vars.get(m.group(), "0"))), text)
        text = text.replace("&&", " and ").replace("||", " or ").replace("/", "//").replace("!=", "≠")
        text = text.replace("!", " not ").replace("≠", "!=")
        try:
            tree = ast.parse(text.strip() or "0", mode="eval")
        except SyntaxError:
            raise ShellError(f"arithmetic syntax error: {expr}") from None
        return str(int(self._eval(tree.body)))

    def _eval(self, node: ast.AST) -> int:
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return node.value
        if isinstance(node, ast.BinOp) and type(node.op) in _ARITH_OPS:
            return int(_ARITH_OPS[type(node.op)](self._eval(node.left), self._eval(node.right)))
        if isinstance(node, ast.UnaryOp) and type(node.op) in _ARITH_OPS:
            return int(_ARITH_OPS[type(node.op)](self._eval(node.operand)))
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _ARITH_OPS:
            return int(_ARITH_OPS[type(node.ops[0])](self._eval(node.left), self._eval(node.comparators[0])))
        if isinstance(node, ast.BoolOp):
            values = [self._eval(v) for v in node.values]
            return int(all(values) if isinstance(node.op, ast.And) else any(values))
        raise ShellError("arithmetic syntax error")

    def _substitute(self, script: str) -> Generator[Event, None, str]:
        """$(...): the script's output, trailing newlines removed; its sleeps take time too."""
        sub = Shell(self.vars, self.args, self.start)
        sub.elapsed = self.elapsed
        captured: list[str] = []
        try:
            yield from sub.run_seq(parse(script), captured)
        except _Exit as done:
            sub.status = done.code
        self.status = sub.status
        self.elapsed = sub.elapsed
        return "".join(captured).rstrip("\n")

    def _expand_text(self, text: str, *, quoted: bool) -> Generator[Event, None, str]:
        """$-expansions and backslashes of unquoted or double-quoted text."""
        out: list[str] = []
        i, n = 0, len(text)
        while i < n:
            c = text[i]
            if c == "\\" and i + 1 < n:
                nxt = text[i + 1]
                if not quoted or nxt in '$`"\\\n':
                    out.append(nxt)
                else:
                    out.append(text[i : i + 2])
                i += 2
            elif c == "$" and i + 1 < n:
                nxt = text[i + 1]
                if text.startswith("$((", i):
                    end = _scan_dollar(text, i)
                    out.append((yield from self._arith(text[i + 3 : end - 2])))
                    i = end
                elif nxt == "(":
                    end = _scan_dollar(text, i)
                    out.append((yield from self._substitute(text[i + 2 : end - 1])))
                    i = end
                elif nxt == "{":
                    end = _scan_dollar(text, i)
                    out.append((yield from self._param(text[i + 2 : end - 1])))
                    i = end
                elif m := re.match(r"[A-Za-z_][A-Za-z0-9_]*|[0-9?$#@*!-]", text[i + 1 :]):
                    out.append(self._lookup(m.group()) or "")
                    i += 1 + m.end()
                else:
                    out.append(c)
                    i += 1
            elif c == "`":
                end = text.find("`", i + 1)
                out.append((yield from self._substitute(text[i + 1 : end])))
                i = end + 1
            else:
                out.append(c)
                i += 1
        return "".join(out)

    def expand(self, words: list[Word]) -> Generator[Event, None, list[str]]:
        """Words after expansion and field splitting (unquoted expansions split on whitespace)."""
        fields: list[str] = []
        for word in words:
            current: list[str] = []
            have = False
            for part in word.parts:
                if part.kind == "sq":
                    current.append(part.text)
                    have = True
                elif part.kind == "dq":
                    current.append((yield from self._expand_text(part.text, quoted=True)))
                    have = True
                else:
                    expanded = yield from self._expand_text(part.text, quoted=False)
                    literal = "$" not in part.text and "`" not in part.text
                    if literal:
                        current.append(expanded)
                        have = have or bool(expanded)
                        continue
                    pieces = re.split(r"[ \t\n]+", expanded)
                    if expanded[:1].isspace() and current:
                        fields.append("".join(current))
                        current = []
                    pieces = [p for p in pieces if p]
                    if pieces:
                        current.append(pieces[0])
                        for p in pieces[1:]:
                            fields.append("".join(current))
                            current = [p]
                        have = True
                    if expanded[-1:].isspace() and current:
                        fields.append("".join(current))
                        current, have = [], False
            if current or have:
                fields.append("".join(current))
        return fields

    # -- running -----------------------------------------------------------------------------------

    def _step(self) -> None:
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise _Hung

    def _emit(self, text: str, capture: list[str] | None) -> Iterator[Event]:
        self.steps = 0
        if capture is not None:
            capture.append(text)
        elif text:
            yield ("out", text)

    def run_seq(self, seq: Seq, capture: list[str] | None) -> Generator[Event, None, int]:
        for item in seq.items:
            yield from self.run_and_or(item, capture)
        return self.status

    def run_and_or(self, node: AndOr, capture: list[str] | None) -> Generator[Event, None, int]:
        status = yield from self.run_pipeline(node.first, capture)
        for op, pipe in node.rest:
            if (op == "&&") == (status == 0):
                status = yield from self.run_pipeline(pipe, capture)
        return status

    def run_pipeline(self, node: Pipeline, capture: list[str] | None) -> Generator[Event, None, int]:
        status = 0
        for i, command in enumerate(node.commands):
            last = i == len(node.commands) - 1
            status = yield from self.run_command(command, capture if last else [])
        if node.negate:
            status = int(status == 0)
        self.status = status
        return status

    def run_command(self, node: Any, capture: list[str] | None) -> Generator[Event, None, int]:
        self._step()
        if isinstance(node, _Quiet):
            return (yield from self.run_command(node.node, []))
        if isinstance(node, Seq):
            return (yield from self.run_seq(node, capture))
        if isinstance(node, Simple):
            return (yield from self.run_simple(node, [] if node.quiet else capture))
        if isinstance(node, Group):
            if not node.subshell:
                return (yield from self.run_seq(node.body, capture))
            saved = dict(self.vars)
            try:
                status = yield from self.run_seq(node.body, capture)
            except _Exit as done:
                status = done.code
            self.vars = saved
            self.status = status
            return status
        if isinstance(node, If):
            for cond, body in node.branches:
                if (yield from self.run_seq(cond, capture)) == 0:
                    return (yield from self.run_seq(body, capture))
            if node.otherwise is not None:
                return (yield from self.run_seq(node.otherwise, capture))
            self.status = 0
            return 0
        if isinstance(node, Loop):
            return (yield from self._loop(node, capture))
        if isinstance(node, For):
            return (yield from self._for(node, capture))
        raise ShellError(f"cannot run {node!r}")

    def _loop(self, node: Loop, capture: list[str] | None) -> Generator[Event, None, int]:
        status = 0
        while True:
            self._step()
            cond = yield from self.run_seq(node.cond, capture)
            if (cond == 0) == node.until:
                break
            try:
                status = yield from self.run_seq(node.body, capture)
            except _Break as b:
                if b.levels > 1:
                    raise _Break(b.kind, b.levels - 1) from None
                if b.kind == "break":
                    break
        self.status = status
        return status

    def _for(self, node: For, capture: list[str] | None) -> Generator[Event, None, int]:
        items = self.args[1:] if node.words is None else (yield from self.expand(node.words))
        status = 0
        for item in items:
            self.vars[node.name] = item
            try:
                status = yield from self.run_seq(node.body, capture)
            except _Break as b:
                if b.levels > 1:
                    raise _Break(b.kind, b.levels - 1) from None
                if b.kind == "break":
                    break
        self.status = status
        return status

    def run_simple(self, node: Simple, capture: list[str] | None) -> Generator[Event, None, int]:
        values = []
        for name, word in node.assigns:
            [value] = (yield from self.expand([Word([Part("dq", _dq_of(word))])])) or [""]
            values.append((name, value))
        argv = yield from self.expand(node.words)
        if not argv:
            self.vars.update(values)
            return self.status if any("$(" in _dq_of(w) or "`" in _dq_of(w) for _n, w in node.assigns) else 0
        saved = {n: self.vars.get(n) for n, _v in values}
        self.vars.update(values)
        try:
            status = yield from self.builtin(argv, capture)
        finally:
            for n, old in saved.items():
                if old is None:
                    self.vars.pop(n, None)
                else:
                    self.vars[n] = old
        self.status = status
        return status

    def builtin(self, argv: list[str], capture: list[str] | None) -> Generator[Event, None, int]:
        name, args = argv[0].rsplit("/", 1)[-1], argv[1:]
        if name == "echo":
            yield from self._emit(_echo(args), capture)
            return 0
        if name == "printf":
            if not args:
                return 1
            yield from self._emit(_printf(args[0], args[1:]), capture)
            return 0
        if name == "sleep":
            seconds = sum(_sleep_seconds(a) for a in args)
            self.steps = 0
            if seconds > 0:
                self.elapsed += seconds
                yield ("sleep", seconds)
            return 0
        if name in ("true", ":"):
            return 0
        if name == "false":
            return 1
        if name in ("exit", "return"):
            raise _Exit(_int(args[0]) % 256 if args else self.status)
        if name in ("break", "continue"):
            raise _Break(name, max(_int(args[0]), 1) if args else 1)
        if name in ("export", "local", "readonly"):
            for a in args:
                if "=" in a:
                    k, _, v = a.partition("=")
                    self.vars[k] = v
            return 0
        if name == "unset":
            for a in args:
                self.vars.pop(a, None)
            return 0
        if name in ("test", "["):
            if name == "[":
                if not args or args[-1] != "]":
                    return 2
                args = args[:-1]
            return 0 if _test(args) else 1
        if name == "seq":
            nums = [_int(a) for a in args]
            first, step, last = (
                (1, 1, nums[0])
                if len(nums) == 1
                else (nums[0], nums[1], nums[2])
                if len(nums) == 3
                else (nums[0], 1, nums[-1])
            )
            values = range(first, last + (1 if step > 0 else -1), step) if step else []
            yield from self._emit("".join(f"{v}\n" for v in values), capture)
            return 0
        if name == "date":
            now = self.start + timedelta(seconds=self.elapsed)
            yield from self._emit(now.strftime("%a %b %e %H:%M:%S UTC %Y") + "\n", capture)
            return 0
        if name == "hostname":
            yield from self._emit(self.vars.get("HOSTNAME", "") + "\n", capture)
            return 0
        if name in ("env", "printenv"):
            if args and name == "printenv":
                value = self.vars.get(args[0])
                if value is None:
                    return 1
                yield from self._emit(value + "\n", capture)
                return 0
            yield from self._emit("".join(f"{k}={v}\n" for k, v in self.vars.items()), capture)
            return 0
        if name == "exec":
            if not args:
                return 0
            status = yield from self.builtin(args, capture)
            raise _Exit(status)
        if name == "tail" and any(a.startswith("-") and "f" in a for a in args):
            self.elapsed = INFINITY
            yield ("sleep", INFINITY)
            return 0
        if name in ("sh", "bash", "ash", "dash") and "-c" in args:
            i = args.index("-c")
            if i + 1 < len(args):
                sub = Shell(
                    self.vars, [args[i + 2] if i + 2 < len(args) else name, *args[i + 3 :]], self.start
                )
                sub.elapsed = self.elapsed
                try:
                    status = yield from sub.run_seq(parse(args[i + 1]), capture)
                except _Exit as done:
                    status = done.code
                self.elapsed = sub.elapsed
                return status
        return 0  # anything else: not simulated, silent, successful


def _dq_of(word: Word) -> str:
    """A word's text as it would read inside double quotes (for assignments: no field splitting)."""
    out = []
    for part in word.parts:
        if part.kind == "sq":
            out.append("".join("\\" + c if c in '$`"\\' else c for c in part.text))
        elif part.kind == "lit":
            out.append(
                re.sub(
                    r"\\(.)", lambda m: "\\" + m.group(1) if m.group(1) in '$`"\\' else m.group(1), part.text
                )
            )
        else:
            out.append(part.text)
    return "".join(out)


_ECHO_ESCAPES = {
    "n": "\n",
    "t": "\t",
    "\\": "\\",
    "a": "\a",
    "b": "\b",
    "r": "\r",
    "v": "\v",
    "f": "\f",
    "e": "\x1b",
}


def _escapes(text: str) -> tuple[str, bool]:
    """echo -e / printf escapes; True when `\\c` stops the output."""
    out: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            if nxt == "c":
                return "".join(out), True
            if nxt in _ECHO_ESCAPES:
                out.append(_ECHO_ESCAPES[nxt])
                i += 2
                continue
            if nxt == "0" or nxt in "1234567":
                m = re.match(r"0?[0-7]{1,3}", text[i + 1 :])
                if m:
                    out.append(chr(int(m.group(), 8) % 256))
                    i += 1 + m.end()
                    continue
        out.append(c)
        i += 1
    return "".join(out), False


def _echo(args: list[str]) -> str:
    newline, escapes = True, False
    while args and re.fullmatch(r"-[neE]+", args[0]):
        flags = args.pop(0)[1:]
        newline = newline and "n" not in flags
        escapes = ("e" in flags) or (escapes and "E" not in flags)
    text = " ".join(args)
    if escapes:
        text, stop = _escapes(text)
        if stop:
            return text
    return text + ("\n" if newline else "")


def _printf(fmt: str, args: list[str]) -> str:
    out = []
    pending = list(args)
    while True:
        used = False

        def conv(m: re.Match[str]) -> str:
            nonlocal used
            flags, width, spec = m.group(1), m.group(2), m.group(3)
            if spec == "%":
                return "%"
            used = True
            value = pending.pop(0) if pending else ""
            if spec in "di":
                body = str(_int(value))
            elif spec == "x":
                body = format(_int(value), "x")
            elif spec == "o":
                body = format(_int(value), "o")
            elif spec == "c":
                body = value[:1]
            elif spec == "b":
                body = _escapes(value)[0]
            else:
                body = value
            if width:
                body = (
                    body.ljust(int(width))
                    if "-" in flags
                    else body.rjust(int(width), "0" if "0" in flags else " ")
                )
            return body

        text = re.sub(r"%([-0 +#]*)(\d*)(?:\.\d+)?([sdixocb%])", conv, fmt)
        out.append(_escapes(text)[0])
        if not pending or not used:
            return "".join(out)


def _sleep_seconds(word: str) -> float:
    if word == "infinity":
        return INFINITY
    m = re.fullmatch(r"(\d+(?:\.\d*)?|\.\d+)([smhd]?)", word)
    if not m:
        return 0.0
    return float(m[1]) * {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}[m[2]]


def _test(args: list[str]) -> bool:
    if not args:
        return False
    if args[0] == "!":
        return not _test(args[1:])
    for joiner in ("-o", "-a"):
        if joiner in args:
            i = args.index(joiner)
            left, right = _test(args[:i]), _test(args[i + 1 :])
            return (left or right) if joiner == "-o" else (left and right)
    if len(args) == 1:
        return args[0] != ""
    if len(args) == 2:
        op, value = args
        if op == "-z":
            return value == ""
        if op == "-n":
            return value != ""
        return False  # file tests: no files here
    if len(args) == 3:
        a, op, b = args
        if op in ("=", "=="):
            return a == b
        if op == "!=":
            return a != b
        ints = {
            "-eq": operator.eq,
            "-ne": operator.ne,
            "-lt": operator.lt,
            "-le": operator.le,
            "-gt": operator.gt,
            "-ge": operator.ge,
        }
        if op in ints:
            return bool(ints[op](_int(a), _int(b)))
    return False


@dataclass
class Run:
    """What a script did up to a horizon: output as (virtual seconds, text), and how it ended."""

    output: list[tuple[float, str]]
    exit_code: int | None  # None: still running at the horizon (or never ends)
    seconds: float  # virtual time used (up to the horizon)


def run(
    script: str, env: dict[str, str], args: list[str] | None = None, *, start: datetime | None = None
) -> Iterator[tuple[float, str | int | None]]:
    """The script's output as it happens: (virtual seconds, text) for each print, then (seconds, exit
    code) once it ends (`None` as the code for a script that hangs busy). Lazy: an endless loop is
    read as far as the caller wants."""
    shell = Shell(env, args or ["sh"], start or datetime.now().astimezone())
    try:
        tree = parse(script)
    except ShellError as err:
        yield (0.0, f"sh: {err}\n")
        yield (0.0, 2)
        return
    gen = shell.run_seq(tree, None)
    clock = 0.0
    try:
        while True:
            kind, value = next(gen)
            if kind == "sleep":
                clock += value
                if clock == INFINITY:
                    return
            else:
                yield (clock, value)
    except StopIteration as done:
        yield (clock, int(done.value or 0))
    except _Exit as done:
        yield (clock, done.code)
    except _Break:
        yield (clock, shell.status)
    except _Hung:
        yield (clock, None)
    except ShellError as err:
        yield (clock, f"sh: {err}\n")
        yield (clock, 2)


def run_until(script: str, env: dict[str, str], horizon: float, args: list[str] | None = None) -> Run:
    """`run` up to `horizon` virtual seconds."""
    output: list[tuple[float, str]] = []
    for at, item in run(script, env, args):
        if at > horizon:
            return Run(output, None, horizon)
        if isinstance(item, str):
            output.append((at, item))
        else:
            return Run(output, item, at)
    return Run(output, None, INFINITY)
