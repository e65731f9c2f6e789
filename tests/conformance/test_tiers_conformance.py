"""Crewship's tiers over each target's provider (``specwire.runtime.facts.conformance.tier_cases``)
on every built-in target."""

from conformance_harness import pytest_tests

from specwire.runtime.facts.conformance import tier_cases

globals().update(pytest_tests(tier_cases.CASES))
