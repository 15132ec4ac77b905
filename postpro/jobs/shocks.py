"""``fem post shocks``: impact statistics of the links of a transient analysis.

Definitions (per link, over the window read):

* contact instants: the archived instants where the link's ``state`` is not 0 (where the
  normal force is positive if no ``state`` was archived);
* impacts: entries into contact, i.e. ``impact`` events of the link when the events table
  has ``impact`` or ``separation`` rows for it, else open-to-contact transitions of the
  series (a contact already closed at the first instant is not an impact);
* contact time: with events, from each impact to the next ``separation`` (or the end);
  from the series, the trapezoidal integral of the contact indicator, which puts each
  transition halfway between the two archived instants around it;
* max, mean, RMS normal force over the contact instants; impulse: trapezoidal integral of
  the normal force over time;
* wear power: time average of ``|normal force| x |sliding velocity|``, available only when
  the link archived ``sliding_velocity``;
* buckling supports (a link with ``crush`` and ``buckled`` series): the residual crush, the
  permanent crush at the last instant of the window; the instant of buckling, the link's
  first ``buckling`` event when the events table has one (located events: the instant
  itself), else the first archived instant whose ``buckled`` series is 1 (to the archive's
  step); NaN when it did not buckle by the end of the window.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from postpro.errors import PostproError
from postpro.jobs import common
from postpro.results import BLOCK_ROWS

IMPACT, SEPARATION, STICK, BUCKLING = "impact", "separation", "stick", "buckling"
HEADERS = ("link", "impacts", "shocks/s", "contact time [s]", "mean contact [s]",
           "max force [N]", "mean force [N]", "RMS force [N]", "impulse [N.s]",
           "wear power [W]", "residual crush [m]", "buckled at [s]", "impacts from")


@dataclass(frozen=True)
class LinkShocks:
    """Impact statistics of one link; forces in N, times in s, impulse in N.s, power in W.

    ``max_force``, ``mean_force`` and ``rms_force`` are NaN without contact instants;
    ``wear_power`` is None when the link has no sliding velocity series. ``source`` tells
    where impacts and contact times come from: "events" or "series". ``residual_crush`` (m)
    and ``buckling_instant`` (s, NaN when it did not buckle) are those of a buckling support,
    None for other links.
    """

    link: str
    impacts: int
    duration: float
    contact_time: float
    contacts: int
    max_force: float
    mean_force: float
    rms_force: float
    impulse: float
    wear_power: float | None
    source: str
    residual_crush: float | None = None
    buckling_instant: float | None = None

    @property
    def shocks_per_second(self) -> float:
        return self.impacts / self.duration if self.duration > 0 else math.nan

    @property
    def mean_contact_time(self) -> float:
        """Total contact time divided by the number of contact intervals."""
        return self.contact_time / self.contacts if self.contacts else 0.0


def add_parser(subparsers):
    p = subparsers.add_parser(
        "shocks", help="impacts, contact times, forces, impulse and wear power per link",
        description="Per link: number of impacts, shocks per second, total and mean contact "
                    "time, max/mean/RMS normal force over the contact instants, impulse, "
                    "and wear power when a sliding velocity was archived.")
    common.add_results(p)
    common.add_analysis(p)
    p.add_argument("--link", "-l", action="append", default=[], metavar="L",
                   help="link name; repeatable (default: every link)")
    common.add_window(p)
    p.add_argument("--output", "-o", metavar="FILE", help="also write the table as CSV")
    p.set_defaults(run=run)


def run(args) -> int:
    with common.open_results(args) as results:
        (analysis,) = common.pick_analyses(results, args.analysis, ("transient",),
                                           args.allow_incomplete)
        names = args.link or list(analysis.links)
        if not names:
            raise PostproError(f"analysis '{analysis.name}' archived no link series")
        stats = [link_shocks(analysis, name, args.start, args.end) for name in names]
    rows = [_cells(s) for s in stats]
    print(common.format_table(HEADERS, rows, right=range(1, len(HEADERS) - 1)))
    if args.output:
        with common.text_output(args.output) as stream:
            common.write_csv(stream, HEADERS, rows)
    return common.EXIT_OK


def _number(value) -> str:
    if value is None:
        return "n/a"
    return "-" if math.isnan(value) else f"{value:.6g}"


def _cells(s: LinkShocks) -> list[str]:
    return [s.link, str(s.impacts), _number(s.shocks_per_second), _number(s.contact_time),
            _number(s.mean_contact_time), _number(s.max_force), _number(s.mean_force),
            _number(s.rms_force), _number(s.impulse), _number(s.wear_power),
            _number(s.residual_crush), _number(s.buckling_instant), s.source]


def _trapezoid(t, y) -> float:
    return float(np.sum(np.diff(t) * (y[1:] + y[:-1])) / 2.0) if len(t) > 1 else 0.0


def link_shocks(analysis, name: str, start=None, end=None,
                rows: int = BLOCK_ROWS) -> LinkShocks:
    """Impact statistics of one link of a transient analysis, streamed block by block.

    Parameters
    ----------
    analysis : TransientAnalysis
    name : str
        Link name.
    start, end : float or None
        Window in s, bounds included.
    rows : int
        Rows read per block.

    Raises
    ------
    PostproError
        Unknown link, or a link without ``normal_force`` series, or an empty window.
    """
    series = analysis.link_series_names(name)
    if "normal_force" not in series:
        raise PostproError(f"link '{name}' of analysis '{analysis.name}' has no 'normal_force' "
                           f"series (series: {', '.join(series) or 'none'})")
    wear = "sliding_velocity" in series
    buckling = "crush" in series and "buckled" in series
    crush = math.nan
    buckled_at = math.nan
    previous = None  # last row of the previous block: trapezoids and transitions cross blocks
    first_time = last_time = None
    impacts = contacts = samples = 0
    contact_time = impulse = wear_work = total = squares = 0.0
    peak = -math.inf
    for block in analysis.link_blocks(name, start, end, rows=rows):
        t = np.asarray(block["time"], float)
        if not len(t):
            continue
        force = np.asarray(block["normal_force"], float)
        closed = (np.asarray(block["state"]) != 0) if "state" in block else force > 0.0
        rate = (np.abs(force) * np.abs(np.asarray(block["sliding_velocity"], float))
                if wear else np.zeros_like(force))
        in_contact = force[closed]
        samples += len(in_contact)
        total += float(in_contact.sum())
        squares += float(np.sum(in_contact * in_contact))
        if len(in_contact):
            peak = max(peak, float(in_contact.max()))
        if previous is None:
            first_time = t[0]
            contacts += int(closed[0])
        else:
            t, force, closed, rate = (np.concatenate([[p], a]) for p, a in
                                      zip(previous, (t, force, closed, rate)))
        entries = int(np.sum(closed[1:] & ~closed[:-1]))
        impacts += entries
        contacts += entries
        contact_time += _trapezoid(t, closed.astype(float))
        impulse += _trapezoid(t, force)
        wear_work += _trapezoid(t, rate)
        if buckling:
            crush = float(block["crush"][-1])
            if math.isnan(buckled_at):
                hit = np.flatnonzero(np.asarray(block["buckled"]) > 0.5)
                if len(hit):
                    buckled_at = float(block["time"][hit[0]])
        previous = (t[-1], force[-1], closed[-1], rate[-1])
        last_time = t[-1]
    if previous is None:
        raise PostproError(f"link '{name}' of analysis '{analysis.name}': no archived instant "
                           "in the window")
    duration = float(last_time - first_time)
    source = "series"
    events = analysis.events
    # an impact link (rigid, a gap series) bounces instantly: its contacts are the intervals
    # during which the bodies stick together
    rigid = "gap" in series and "penetration" not in series
    mine = events[(events["link"] == name)
                  & np.isin(events["kind"], (IMPACT, SEPARATION, STICK) if rigid
                            else (IMPACT, SEPARATION))]
    if len(mine):
        source = "events"
        impacts, contacts, contact_time = _from_events(mine, first_time, last_time, rigid)
    if buckling:
        onset = events["time"][(events["link"] == name) & (events["kind"] == BUCKLING)]
        onset = onset[(onset >= first_time) & (onset <= last_time)]
        if len(onset):
            buckled_at = float(np.min(onset))
    return LinkShocks(
        link=name, impacts=impacts, duration=duration, contact_time=contact_time,
        contacts=contacts, max_force=peak if samples else math.nan,
        mean_force=total / samples if samples else math.nan,
        rms_force=math.sqrt(squares / samples) if samples else math.nan, impulse=impulse,
        wear_power=(wear_work / duration if duration > 0 else 0.0) if wear else None,
        source=source, residual_crush=crush if buckling else None,
        buckling_instant=buckled_at if buckling else None)


def _from_events(events, first: float, last: float,
                 rigid: bool = False) -> tuple[int, int, float]:
    """Impacts, contact intervals and contact time (s) from a link's events in [first, last].

    Penalty links are in contact from an impact to the next separation. Rigid impact links
    (``rigid``) bounce instantly: their contacts run from a stick to the next separation, and
    a stick that ends an approach counts as a (plastic) impact."""
    order = np.argsort(events["time"], kind="stable")
    times, kinds = events["time"][order], events["kind"][order]
    approach = (events["velocity_before"][order] if "velocity_before" in events.dtype.names
                else np.full(len(times), -1.0))
    chosen = (times >= first) & (times <= last)
    times, kinds, approach = times[chosen], kinds[chosen], approach[chosen]
    opens = STICK if rigid else IMPACT
    impacts = int(np.sum(kinds == IMPACT))
    if rigid:
        impacts += int(np.sum((kinds == STICK) & (approach < 0)))
    opened_at = None
    contacts, contact_time = 0, 0.0
    if len(kinds) and kinds[0] == SEPARATION:
        opened_at = first  # in contact from the start of the window
    for time, kind in zip(times, kinds):
        if kind == opens and opened_at is None:
            opened_at = time
        elif kind == SEPARATION and opened_at is not None:
            contact_time += time - opened_at
            contacts += 1
            opened_at = None
    if opened_at is not None:
        contact_time += last - opened_at
        contacts += 1
    return impacts, contacts, float(contact_time)
