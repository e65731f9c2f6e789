"""The dream engine: a spec's memory consolidated off the turn path (``run_dream``)."""

from specwire.runtime.dream.engine import EVENT, run_dream
from specwire.runtime.dream.outcome import DreamOutcome
from specwire.runtime.dream.settings import DreamSettings

__all__ = ["EVENT", "DreamOutcome", "DreamSettings", "run_dream"]
