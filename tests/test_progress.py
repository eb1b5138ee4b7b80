"""slimdata.progress: a bar on a terminal, a few plain lines in a log, nothing when quiet."""

import io

import pytest

from slimdata import progress


class Terminal(io.StringIO):
    def isatty(self):
        return True


@pytest.fixture(autouse=True)
def not_quiet():
    progress.configure(quiet=False)
    yield
    progress.configure(quiet=False)


def test_a_log_gets_a_line_every_tenth_or_30_seconds_and_a_final_line(monkeypatch):
    clock = [0.0]
    monkeypatch.setattr(progress.time, 'perf_counter', lambda: clock[0])
    log = io.StringIO()
    with progress.Progress(1000, 'convert', stream=log) as display:
        for _ in range(1000):
            clock[0] += 0.01  # 10 s in all: a tenth every second
            display.update()
        display.set_postfix(loss='0.25')
    lines = log.getvalue().splitlines()
    assert lines[0] == 'convert: 10% (100/1,000 ex) in 1.0 s'
    assert len(lines) == 10
    assert lines[-1] == 'convert: done, 1,000 ex in 10.0 s (100 ex/s), loss=0.25'
    assert '\r' not in log.getvalue()


def test_short_work_in_a_log_prints_its_final_line_only(monkeypatch):
    clock = [0.0]
    monkeypatch.setattr(progress.time, 'perf_counter', lambda: clock[0])
    log = io.StringIO()
    with progress.Progress(50, 'verify', stream=log) as display:
        for _ in range(50):
            clock[0] += 0.001
            display.update()
    assert log.getvalue().splitlines() == ['verify: done, 50 ex in 0.1 s (1,000 ex/s)']


def test_slow_work_in_a_log_prints_every_30_seconds(monkeypatch):
    clock = [0.0]
    monkeypatch.setattr(progress.time, 'perf_counter', lambda: clock[0])
    log = io.StringIO()
    display = progress.Progress(10_000, 'slow', stream=log)
    for _ in range(3):  # 1% of the total each 31 s
        clock[0] += 31
        display.update(100)
    assert log.getvalue().splitlines() == ['slow: 1% (100/10,000 ex) in 31.0 s',
                                           'slow: 2% (200/10,000 ex) in 62.0 s',
                                           'slow: 3% (300/10,000 ex) in 93.0 s']


def test_a_terminal_gets_a_bar():
    terminal = Terminal()
    with progress.Progress(10, 'convert', stream=terminal) as display:
        display.update(10)
    assert '\r' in terminal.getvalue() and '10/10' in terminal.getvalue()


def test_quiet_shows_no_progress_but_still_the_messages():
    progress.configure(quiet=True)
    log, terminal = io.StringIO(), Terminal()
    for stream in (log, terminal):
        with progress.Progress(10, 'convert', stream=stream) as display:
            display.update(10)
            display.write('a problem')
    assert log.getvalue() == 'a problem\n' and terminal.getvalue() == 'a problem\n'


def test_work_that_fails_says_where_it_stopped_never_done(monkeypatch):
    clock = [0.0]
    monkeypatch.setattr(progress.time, 'perf_counter', lambda: clock[0])
    log = io.StringIO()
    with pytest.raises(ValueError):
        with progress.Progress(5011, 'pascalvoc_2007 trainval', stream=log) as display:
            clock[0] += 1.5
            display.update(501)
            raise ValueError('a damaged image')
    assert log.getvalue().splitlines()[-1] == \
        'pascalvoc_2007 trainval: stopped after 501 ex of 5,011 ex in 1.5 s'
    assert 'done' not in log.getvalue()


def test_a_closed_output_pipe_ends_the_display_without_a_word():
    log = io.StringIO()
    with pytest.raises(BrokenPipeError):
        with progress.Progress(10, 'verify', stream=log) as display:
            display.update(3)
            raise BrokenPipeError
    assert log.getvalue() == ''
