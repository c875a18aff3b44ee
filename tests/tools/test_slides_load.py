"""`make slides` on a loaded machine: Chromium's timeouts grow with the load, a timed-out PDF
is printed again, and `make slides PDF=0` skips the handouts."""

import os
import subprocess
from pathlib import Path

import pytest
from gpgpu_tools.slides import browser

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def load(monkeypatch):
    """Set the machine's load average and core count as the timeout sees them."""
    monkeypatch.delenv(browser.TIMEOUT_VARIABLE, raising=False)

    def set_load(average, cores):
        monkeypatch.setattr(os, "getloadavg", lambda: (average, average, average))
        monkeypatch.setattr(os, "cpu_count", lambda: cores)

    return set_load


def test_an_idle_machine_waits_the_base_timeout(load):
    load(0.5, 2)
    assert browser.scaled_timeout() == browser.BASE_TIMEOUT
    load(2.0, 2)
    assert browser.scaled_timeout() == browser.BASE_TIMEOUT


def test_a_loaded_machine_waits_in_proportion_to_its_load_per_core(load):
    load(40.0, 2)  # the load at which lesson 02's PDF timed out after a fixed 30 s
    assert browser.scaled_timeout() == 20 * browser.BASE_TIMEOUT
    assert browser.scaled_timeout(base=10) == 200


def test_the_base_timeout_can_be_set_and_a_bad_setting_is_named(load, monkeypatch):
    load(4.0, 2)
    monkeypatch.setenv(browser.TIMEOUT_VARIABLE, "300")
    assert browser.scaled_timeout() == 600
    monkeypatch.setenv(browser.TIMEOUT_VARIABLE, "five minutes")
    with pytest.raises(ValueError, match="GPGPU_SLIDES_TIMEOUT='five minutes' is not a number"):
        browser.scaled_timeout()


class SlowChromium:
    """Stands in for Chromium: times out `stalls` times, then prints."""

    def __init__(self, stalls):
        self.stalls, self.patience, self.calls = stalls, 1.0, 0

    def pdf(self, deck):
        self.calls += 1
        if self.calls <= self.stalls:
            raise TimeoutError("Chromium did not answer within 120 s")
        return b"%PDF-1.4"


def test_a_timed_out_pdf_is_printed_again_waiting_twice_as_long(capsys):
    chromium = SlowChromium(stalls=1)
    assert browser.print_pdf(chromium, Path("02_shared_memory.html")) == b"%PDF-1.4"
    assert (chromium.calls, chromium.patience) == (2, 2.0)
    assert "02_shared_memory.html: Chromium did not answer" in capsys.readouterr().out


def test_a_pdf_that_times_out_every_time_raises_after_the_last_attempt():
    chromium = SlowChromium(stalls=5)
    with pytest.raises(TimeoutError):
        browser.print_pdf(chromium, Path("deck.html"), attempts=3)
    assert chromium.calls == 3


@pytest.mark.parametrize("pdf, skipped", [("0", True), ("1", False), (None, False)])
def test_make_slides_pdf_0_skips_the_handouts(pdf, skipped):
    command = ["make", "-n", "slides"] + ([f"PDF={pdf}"] if pdf else [])
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    (line,) = [line for line in done.stdout.splitlines() if "gpgpu_tools.slides" in line]
    assert ("--no-pdf" in line.split()) == skipped
