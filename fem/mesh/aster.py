"""Reader of the code_aster ``.mail`` text mesh format, restricted to POI1 and SEG2 cells.

The format is a sequence of sections, each opened by a keyword and closed by
``FINSF``; the file ends with ``FIN``. ``%`` starts a comment running to the end
of the line. Keywords are case-insensitive, names are kept as written.

``TITRE``
    Free title text (read and ignored).
``COOR_1D`` / ``COOR_2D`` / ``COOR_3D``
    Entries ``NAME x``, ``NAME x y`` or ``NAME x y z``; coordinates the section
    does not give are 0.
``POI1`` / ``SEG2``
    Entries ``NAME node`` / ``NAME node1 node2``.
``GROUP_NO`` / ``GROUP_MA``
    One group per section: its name (first token, or ``NOM=NAME`` on the
    keyword line) then the names of its nodes or cells.

Entries are separated by any whitespace and may share a line. ``KEY=VALUE``
options written by other tools on a keyword line (``NOM=INDEFINI``,
``NBOBJ=12``...) are skipped. Every error is a `MeshError` naming the file and
the line.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from fem.errors import MeshError
from fem.mesh.core import POI1, SEG2, Mesh

#: Nodes per cell for the cell sections fem reads.
_CELL_NODES = {"POI1": 1, "SEG2": 2}
_CELL_CODES = {"POI1": POI1, "SEG2": SEG2}
_COOR_DIMS = {"COOR_1D": 1, "COOR_2D": 2, "COOR_3D": 3}
#: code_aster cell types fem does not handle, recognised to give a precise message.
_OTHER_CELL = re.compile(r"(SEG|TRIA|QUAD|TETRA|PENTA|PYRAM|HEXA)\d+")

_TOKEN = re.compile(r"\S+")
_FINSF = re.compile(r"(?<!\S)FINSF(?!\S)", re.IGNORECASE)
_COMMENT = re.compile(r"%[^\n]*")
_OPTION_BLANKS = re.compile(r"[ \t]*=[ \t]*")
# A line starting with one of these inside a section means its FINSF was forgotten.
_NEXT_SECTION = re.compile(
    r"^[ \t]*(FIN|TITRE|COOR_[123]D|GROUP_NO|GROUP_MA"
    r"|POI1|(?:SEG|TRIA|QUAD|TETRA|PENTA|PYRAM|HEXA)\d+)(?=\s|$)",
    re.IGNORECASE | re.MULTILINE)
# In a group section the first token is a free group name, so only unambiguous keywords count.
_NEXT_SECTION_IN_GROUP = re.compile(
    r"^[ \t]*(FIN|TITRE|COOR_[123]D|GROUP_NO|GROUP_MA)(?=\s|$)",
    re.IGNORECASE | re.MULTILINE)


def _find_finsf(text: str, upper: str | None, pos: int) -> int:
    """Offset of the next FINSF token at or after ``pos`` in ``text``, or -1."""
    if upper is None:
        match = _FINSF.search(text, pos)
        return match.start() if match else -1
    while True:
        at = upper.find("FINSF", pos)
        if at < 0:
            return -1
        end = at + len("FINSF")
        if (at == 0 or upper[at - 1].isspace()) and (end == len(upper) or upper[end].isspace()):
            return at
        pos = at + 1


@dataclass
class _Section:
    """One keyword ... FINSF block of the file."""

    keyword: str        # upper-cased keyword
    line: int           # 1-based line of the keyword
    body: str           # text between the keyword and FINSF, options glued as KEY=VALUE
    tokens: list        # whitespace-separated tokens of body, options removed
    options: dict       # upper-cased option key -> value


def read(path) -> Mesh:
    """Read a code_aster ``.mail`` mesh file.

    Parameters
    ----------
    path : str or Path
        The ``.mail`` file.

    Returns
    -------
    Mesh
        Nodes in file order, cells in file order (POI1 and SEG2 sections
        interleaved as written), groups with members in the order written
        (repeated members kept once). ``source`` is the file path.

    Raises
    ------
    MeshError
        On any format error, naming the file and the line.
    """
    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8", errors="replace")
    except OSError as exc:
        raise MeshError(f"cannot read mesh file {path}: {exc.strerror or exc}") from None
    return parse(text, str(path))


def parse(text: str, source: str = "inline") -> Mesh:
    """Build a `Mesh` from the text of a ``.mail`` file.

    Parameters
    ----------
    text : str
        Whole content of the file.
    source : str
        File name used in the mesh and in error messages.

    Returns
    -------
    Mesh
    """
    return _Parser(text, source).mesh()


class _Parser:
    """Splits the text into sections at construction; `mesh` builds the Mesh from them."""

    def __init__(self, text: str, source: str):
        self.source = source
        # Comments are blanked before anything else so they can hold any word, FINSF included.
        self.sections = self._split(_COMMENT.sub("", text))

    # -- sections ---------------------------------------------------------------------------

    def _split(self, text: str) -> list[_Section]:
        # str.find in an upper-case copy is far faster than a regex, but only ASCII keeps offsets.
        upper = text.upper() if text.isascii() else None
        sections = []
        pos, line = 0, 1
        while True:
            match = _TOKEN.search(text, pos)
            if match is None:
                break
            line += text.count("\n", pos, match.start())
            word = match.group()
            keyword = word.upper()
            if keyword == "FIN":
                break
            self._check_keyword(word, line)
            end = _find_finsf(text, upper, match.end())
            if end < 0:
                raise MeshError(f"{self.source}, line {line}: section {word} is not closed "
                                f"by FINSF")
            sections.append(self._section(keyword, line, text[match.end():end]))
            line += text.count("\n", match.start(), end)
            pos = end + len("FINSF")
        return sections

    def _check_keyword(self, word: str, line: int):
        keyword = word.upper()
        if keyword in _COOR_DIMS or keyword in _CELL_NODES or keyword in (
                "TITRE", "GROUP_NO", "GROUP_MA"):
            return
        if _OTHER_CELL.fullmatch(keyword):
            raise MeshError(f"{self.source}, line {line}: cell type {keyword} is not supported "
                            f"(fem handles POI1 and SEG2 cells)")
        raise MeshError(f"{self.source}, line {line}: unknown section keyword '{word}'")

    def _stray_keyword(self):
        """Raise if a section swallowed the next one's keyword, its FINSF being forgotten."""
        for section in self.sections:
            if section.keyword == "TITRE":
                continue
            group = section.keyword.startswith("GROUP_")
            pattern = _NEXT_SECTION_IN_GROUP if group else _NEXT_SECTION
            # The keyword line itself may carry a group name, so the search starts on the next line.
            start = section.body.find("\n")
            stray = pattern.search(section.body, start) if start >= 0 else None
            if stray is not None:
                at = section.line + section.body.count("\n", 0, stray.start(1))
                raise MeshError(f"{self.source}, line {section.line}: section {section.keyword} "
                                f"is not closed by FINSF before '{stray.group(1)}' at line {at}")

    def _section(self, keyword: str, line: int, body: str) -> _Section:
        if keyword == "TITRE":
            return _Section(keyword, line, body, [], {})
        options = {}
        cut = body.rfind("=")
        if cut < 0:
            return _Section(keyword, line, body, body.split(), options)
        # Options sit on the first lines: only those are filtered token by token.
        cut = body.find("\n", cut)
        cut = len(body) if cut < 0 else cut
        head = _OPTION_BLANKS.sub("=", body[:cut])
        tokens = []
        for token in head.split():
            if "=" in token:
                key, _, value = token.partition("=")
                options[key.upper()] = value
            else:
                tokens.append(token)
        tokens.extend(body[cut:].split())
        return _Section(keyword, line, head + body[cut:], tokens, options)

    # -- locating tokens for messages -------------------------------------------------------

    def _token_line(self, section: _Section, index: int) -> int:
        """1-based file line of the ``index``-th token of ``section`` (options skipped)."""
        seen = 0
        for offset, text in enumerate(section.body.split("\n")):
            count = sum(1 for t in text.split() if "=" not in t)
            if index < seen + count:
                return section.line + offset
            seen += count
        return section.line + section.body.count("\n")

    def _bad_entry_count(self, section: _Section, per_entry: int, what: str, unit: str):
        """Raise for a section whose token count is not a multiple of ``per_entry``."""
        for offset, text in enumerate(section.body.split("\n")):
            words = [t for t in text.split() if "=" not in t]
            if len(words) % per_entry:
                # A short or long single entry is the usual mistake; else the last entry is cut.
                first = 0 if len(words) < 2 * per_entry else len(words) // per_entry * per_entry
                found = len(words) - first - 1
                raise MeshError(f"{self.source}, line {section.line + offset}: {what} "
                                f"'{words[first]}' has {found} {unit}(s), expected {per_entry - 1}")
        raise MeshError(f"{self.source}, line {section.line}: section {section.keyword} holds "
                        f"{len(section.tokens)} names and values, not a multiple of {per_entry}")

    # -- building the mesh ------------------------------------------------------------------

    def mesh(self) -> Mesh:
        try:
            return self._build()
        except MeshError:
            # A forgotten FINSF makes the next section's words look like data: say so instead.
            self._stray_keyword()
            raise

    def _build(self) -> Mesh:
        names, coords = self._nodes()
        node_index = self._index(names, "node",
                                 (s for s in self.sections if s.keyword in _COOR_DIMS),
                                 lambda s: 1 + _COOR_DIMS[s.keyword])
        cell_names, cell_type, connectivity = self._cells(node_index)
        cell_index = self._index(cell_names, "cell",
                                 (s for s in self.sections if s.keyword in _CELL_NODES),
                                 lambda s: 1 + _CELL_NODES[s.keyword])
        node_groups = self._groups("GROUP_NO", "node", node_index)
        cell_groups = self._groups("GROUP_MA", "cell", cell_index)
        return Mesh(node_names=names, coordinates=coords, cell_names=cell_names,
                    cell_type=cell_type, connectivity=connectivity,
                    node_groups=node_groups, cell_groups=cell_groups, source=self.source)

    def _nodes(self):
        names, blocks = [], []
        for section in self.sections:
            dim = _COOR_DIMS.get(section.keyword)
            if dim is None:
                continue
            step = dim + 1
            tokens = section.tokens
            if len(tokens) % step:
                self._bad_entry_count(section, step, "node", "coordinate")
            block = np.zeros((len(tokens) // step, 3))
            for axis in range(dim):
                block[:, axis] = self._numbers(section, axis + 1, step)
            names.extend(tokens[0::step])
            blocks.append(block)
        if not blocks:
            raise MeshError(f"{self.source}: no COOR_1D, COOR_2D or COOR_3D section, "
                            f"the mesh has no nodes")
        return names, np.vstack(blocks)

    def _numbers(self, section: _Section, first: int, step: int) -> np.ndarray:
        """Floats of tokens ``first::step`` of a coordinate section."""
        words = section.tokens[first::step]
        try:
            return np.array(words, dtype=float)
        except ValueError:
            pass
        # Slow path: Fortran exponents (1.5D+02) are accepted, anything else is located.
        values = np.empty(len(words))
        for i, word in enumerate(words):
            try:
                values[i] = float(word.replace("D", "E").replace("d", "e"))
            except ValueError:
                position = first + i * step
                node = section.tokens[position - first]
                line = self._token_line(section, position)
                raise MeshError(f"{self.source}, line {line}: coordinate '{word}' of node "
                                f"'{node}' is not a number") from None
        return values

    def _index(self, names: list, what: str, sections, step_of) -> dict:
        """Name -> index, raising on a name defined twice (at the line of its second definition)."""
        index = dict(zip(names, range(len(names))))
        if len(index) == len(names):
            return index
        seen = set()
        for section in sections:
            step = step_of(section)
            for i, name in enumerate(section.tokens[0::step]):
                if name in seen:
                    line = self._token_line(section, i * step)
                    raise MeshError(f"{self.source}, line {line}: {what} '{name}' is defined twice")
                seen.add(name)
        raise AssertionError("duplicate name not found")  # unreachable: index was shorter

    def _cells(self, node_index: dict):
        names, types, conns = [], [], []
        for section in self.sections:
            nodes = _CELL_NODES.get(section.keyword)
            if nodes is None:
                continue
            step = nodes + 1
            tokens = section.tokens
            if len(tokens) % step:
                self._bad_entry_count(section, step, f"{section.keyword} cell", "node")
            count = len(tokens) // step
            conn = np.full((count, 2), -1, dtype=np.int64)
            for col in range(nodes):
                conn[:, col] = self._lookup(section, 1 + col, step, node_index, "node",
                                            f"in {section.keyword} cell", owner_back=1 + col)
            names.extend(tokens[0::step])
            types.append(np.full(count, _CELL_CODES[section.keyword], dtype=np.int8))
            conns.append(conn)
        if not conns:
            return [], np.zeros(0, np.int8), np.zeros((0, 2), np.int64)
        return names, np.concatenate(types), np.vstack(conns)

    def _lookup(self, section: _Section, offset: int, step: int, index: dict, what: str,
                context: str, owner_back: int = 0) -> np.ndarray:
        """Indices of the names ``section.tokens[offset::step]``, raising on the first unknown.

        ``owner_back`` > 0 names, in the message, the entry owning the unknown name: the
        token that many places before it (the cell name for a cell's node).
        """
        words = section.tokens[offset::step]
        found = np.fromiter(map(index.get, words, itertools.repeat(-1)), dtype=np.int64,
                            count=len(words))
        missing = np.flatnonzero(found < 0)
        if missing.size:
            position = offset + int(missing[0]) * step
            owner = f" '{section.tokens[position - owner_back]}'" if owner_back else ""
            line = self._token_line(section, position)
            raise MeshError(f"{self.source}, line {line}: unknown {what} "
                            f"'{section.tokens[position]}' {context}{owner}")
        return found

    def _groups(self, keyword: str, what: str, index: dict) -> dict:
        groups, lines = {}, {}
        for section in self.sections:
            if section.keyword != keyword:
                continue
            name = section.options.get("NOM")
            first = 0
            if not name:
                if not section.tokens:
                    raise MeshError(f"{self.source}, line {section.line}: {keyword} section "
                                    f"without a group name")
                name, first = section.tokens[0], 1
            if name in groups:
                raise MeshError(f"{self.source}, line {section.line}: {what} group '{name}' is "
                                f"defined twice (first at line {lines[name]})")
            found = self._lookup(section, first, 1, index, what, f"in {keyword} {name}")
            # Repeated members are kept once, at their first place.
            _, kept = np.unique(found, return_index=True)
            groups[name] = found[np.sort(kept)]
            lines[name] = section.line
        return groups
