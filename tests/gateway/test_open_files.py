"""``agui-gateway serve`` raises ``RLIMIT_NOFILE`` to the hard limit (issue 13 item 5.3).

Expected behaviour from ``setrlimit(2)``: an unprivileged process may set its soft limit to any
value up to its hard limit; Linux refuses a soft limit above ``fs.nr_open`` (so an unlimited
hard limit is not a value to set). The generator drives a fake kernel with every shape of
limits and refusals; one test sets the real limit of a child process and runs the real
``serve`` in it.
"""

from __future__ import annotations

import logging
import os
import resource
import subprocess
import sys
import textwrap

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gateway.open_files import (
    FD_MARGIN,
    bounded_connections,
    connections_that_fit,
    needed_open_files,
    raise_open_files_limit,
)

INF = resource.RLIM_INFINITY


class FakeKernel:
    """``getrlimit``/``setrlimit`` of one process: refuses a soft limit above the hard one and
    above ``nr_open`` (Linux), and every value in ``refused``."""

    def __init__(self, soft: int, hard: int, nr_open: int, refused: frozenset[int]) -> None:
        self.soft, self.hard, self.nr_open, self.refused = soft, hard, nr_open, refused
        self.calls: list[tuple[int, int]] = []

    def get(self, which: int) -> tuple[int, int]:
        assert which == resource.RLIMIT_NOFILE
        return self.soft, self.hard

    def set(self, which: int, limits: tuple[int, int]) -> None:
        assert which == resource.RLIMIT_NOFILE
        soft, hard = limits
        self.calls.append(limits)
        assert hard == self.hard, "the hard limit is never changed"
        if soft == INF or (self.hard != INF and soft > self.hard) or soft > self.nr_open:
            raise ValueError("not allowed to raise maximum limit")
        if soft in self.refused:
            raise OSError(1, "Operation not permitted")
        self.soft = soft


@st.composite
def kernels(draw: st.DrawFn) -> FakeKernel:
    nr_open = draw(st.sampled_from([1_048_576, 65_536, 20_000, 10_240, 4_096]))
    hard = draw(st.one_of(st.just(INF), st.integers(256, 2_000_000)))
    top = hard if hard != INF else 2_000_000
    soft = draw(st.one_of(st.integers(64, top), st.just(INF) if hard == INF else st.nothing()))
    refused = draw(st.frozensets(st.integers(1, 2_000_000), max_size=3))
    if draw(st.booleans()) and hard != INF:
        refused |= {hard}
    return FakeKernel(soft, hard, nr_open, refused)


@given(kernel=kernels(), max_connections=st.integers(0, 200_000))
def test_soft_limit_goes_as_high_as_the_kernel_allows(
    kernel: FakeKernel, max_connections: int
) -> None:
    before, hard = kernel.soft, kernel.hard
    limit = raise_open_files_limit(max_connections, getrlimit=kernel.get, setrlimit=kernel.set)
    assert limit is not None
    assert (limit.before, limit.soft, limit.hard) == (before, kernel.soft, hard)
    if before == INF:
        assert kernel.calls == [] and limit.soft == INF
        return
    assert limit.soft >= before, "never lowered"
    if hard != INF and hard <= kernel.nr_open and hard not in kernel.refused:
        assert limit.soft == max(before, hard)
    if limit.soft != INF and limit.soft < min(hard, kernel.nr_open):
        # something higher was allowed only if every value tried above it was refused
        for tried, _ in kernel.calls:
            if tried > limit.soft:
                assert tried in kernel.refused or tried > kernel.nr_open or tried > hard
    assert limit.needed == (2 * max_connections + FD_MARGIN if max_connections else None)
    assert limit.enough == (limit.needed is None or limit.soft >= limit.needed)


@pytest.mark.parametrize(
    ("soft", "hard", "max_connections", "raised", "short"),
    [
        (1024, 65_536, 10_000, True, False),  # the usual shell default below a roomy hard limit
        (1024, 4096, 10_000, True, True),  # raised, still short of 2 x 10,000 + margin
        (65_536, 65_536, 10_000, False, False),
        (1024, 1024, 0, False, False),  # no connection bound: nothing to compare
    ],
)
def test_it_logs_the_raise_and_warns_when_short(
    caplog: pytest.LogCaptureFixture,
    soft: int,
    hard: int,
    max_connections: int,
    raised: bool,
    short: bool,
) -> None:
    kernel = FakeKernel(soft, hard, 1_048_576, frozenset())
    with caplog.at_level(logging.INFO, logger="gateway.server"):
        raise_open_files_limit(max_connections, getrlimit=kernel.get, setrlimit=kernel.set)
    text = caplog.text
    assert (f"raised from {soft} to {hard}" in text) == raised
    assert ("GATEWAY_MAX_CONNECTIONS" in text) == short
    if short:
        assert str(needed_open_files(max_connections)) in text


@given(max_connections=st.integers(0, 200_000), soft=st.integers(1, 2_000_000))
def test_the_connection_bound_is_the_largest_that_fits(max_connections: int, soft: int) -> None:
    bound = connections_that_fit(max_connections, soft)
    if max_connections == 0:
        assert bound == 0, "no bound stays no bound"
        return
    assert 1 <= bound <= max_connections
    needed = needed_open_files(bound)
    assert needed is not None
    assert needed <= soft or bound == 1, "what is kept fits (1 at least)"
    if bound < max_connections:
        assert (needed_open_files(bound + 1) or 0) > soft, "and one more would not"
    assert connections_that_fit(max_connections, INF) == max_connections


def test_the_server_bound_is_lowered_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    """The bench's case: a hard limit of 20,000 cannot serve 10,000 two-socket streams, so
    uvicorn's bound becomes 9,872 (each beyond answered 503 before its run starts)."""
    kernel = FakeKernel(20_000, 20_000, 1_048_576, frozenset())
    with caplog.at_level(logging.WARNING, logger="gateway.server"):
        assert bounded_connections(10_000, getrlimit=kernel.get) == (20_000 - FD_MARGIN) // 2
    assert "GATEWAY_MAX_CONNECTIONS=10000" in caplog.text and "503" in caplog.text
    caplog.clear()
    roomy = FakeKernel(65_536, 65_536, 1_048_576, frozenset())
    with caplog.at_level(logging.WARNING, logger="gateway.server"):
        assert bounded_connections(10_000, getrlimit=roomy.get) == 10_000
        assert bounded_connections(0, getrlimit=kernel.get) == 0
    assert caplog.text == ""


def test_serve_raises_the_real_limit_before_listening() -> None:
    """A child process starts with a soft limit of 512 and runs the real ``serve`` (the server
    itself is stubbed out after start-up: only the limit it runs with is looked at)."""
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != INF and hard <= 512:
        pytest.skip(f"hard RLIMIT_NOFILE {hard}: nothing to raise")
    script = textwrap.dedent(
        """
        import resource, sys
        import gateway.server as server
        resource.setrlimit(resource.RLIMIT_NOFILE, (512, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
        class Stub:
            def run(self):
                print("LIMIT", resource.getrlimit(resource.RLIMIT_NOFILE)[0], flush=True)
        server.build_server = lambda *a, **k: Stub()
        server.serve(None, "127.0.0.1", 0)
        """
    )
    env = {**os.environ, "GATEWAY_DATABASE_URL": "sqlite://", "GATEWAY_LOG_FORMAT": "text"}
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=60
    )
    assert out.returncode == 0, out.stderr
    line = next(s for s in out.stdout.splitlines() if s.startswith("LIMIT "))
    soft_now = int(line.split()[1])
    assert soft_now > 512
    if hard != INF:
        assert soft_now == hard
    assert "RLIMIT_NOFILE" in out.stdout + out.stderr
