"""Updates (``specwire.runtime.facts.conformance.update_cases``) on every target: the file store
and PostgreSQL update in place of a supersede and keep the old text as history; a target that
does not declare ``updates`` skips them."""

from __future__ import annotations

from conformance_harness import pytest_tests

from specwire.runtime.facts.conformance import update_cases

globals().update(pytest_tests(update_cases.CASES))
